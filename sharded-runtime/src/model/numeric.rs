//! The Rust types stored as a Firestore number on every document: what sums, averages and the
//! arithmetic transforms take.

use serde::Serialize;

/// A Rust type stored as a Firestore number on every document: what `#[sharded(aggregate)]`
/// sums and averages, and what [`increment`](crate::write::transform::TypedField::increment),
/// [`maximum`](crate::write::transform::TypedField::maximum) and
/// [`minimum`](crate::write::transform::TypedField::minimum) take. `Option` is not one (a `None` is
/// stored as null, which `avg` skips but a count does not), and neither are `u64`/`usize`
/// (values above `i64::MAX` are stored wrapped).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number sharded can sum or transform",
    label = "not a number stored on every document",
    note = "`#[sharded(aggregate)]` and the `increment`, `maximum` and `minimum` transforms take `i8`, `i16`, `i32`, `i64`, `isize`, `u8`, `u16`, `u32`, `f32` or `f64`: a value every document stores as a Firestore number, so sums are exact and an average across chunk queries can be weighted by their counts"
)]
pub trait Numeric: Serialize {
    /// Whether Firestore stores it as an integer: a sum of integers is exact, so a chunk's
    /// sum that comes back a double (past `i64::MAX`) is added again from its values.
    const INTEGER: bool;
}

macro_rules! numeric {
    ($integer:literal: $($ty:ty),*) => { $(impl Numeric for $ty { const INTEGER: bool = $integer; })* };
}
numeric!(true: i8, i16, i32, i64, isize, u8, u16, u32);
numeric!(false: f32, f64);
