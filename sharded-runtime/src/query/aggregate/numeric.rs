//! What can be summed: the `Numeric` types, the typed field a `sum` names, and the number
//! it returns.

use std::marker::PhantomData;

use serde::Serialize;

/// A Rust type stored as a Firestore number on every document: what `#[sharded(aggregate)]`
/// accepts. `Option` is not one (a `None` is stored as null, which `avg` skips but a count
/// does not), and neither are `u64`/`usize` (values above `i64::MAX` are stored wrapped).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be summed or averaged by sharded",
    label = "not a number stored on every document",
    note = "`#[sharded(aggregate)]` takes `i8`, `i16`, `i32`, `i64`, `isize`, `u8`, `u16`, `u32`, `f32` or `f64`: a value every document stores as a number, so an average across chunk queries can be weighted by their counts"
)]
pub trait Numeric: Serialize {
    /// Whether Firestore stores it as an integer: a sum of integers is exact, so a chunk's
    /// sum that comes back a double (past `i64::MAX`) is added again from its values.
    const INTEGER: bool;
}

/// A numeric field of `T` (`T::aggregates().price`), to pass to
/// [`ShardedQuery::sum`](crate::ShardedQuery::sum) and [`avg`](crate::ShardedQuery::avg).
pub struct NumericField<T> {
    pub(crate) path: &'static str,
    pub(super) integer: bool,
    marker: PhantomData<fn() -> T>,
}

/// The numeric field `path` of `T`, of type `V`: what the derive's `T::aggregates()` is made
/// of, with every type written out, as `field`. `V: Numeric` is what
/// refuses an aggregate on a field that is not a number, on the field's type.
pub fn numeric_field<T, V: Numeric>(path: &'static str) -> NumericField<T> {
    NumericField {
        path,
        integer: V::INTEGER,
        marker: PhantomData,
    }
}

impl<T> NumericField<T> {
    /// The stored field path.
    pub fn path(&self) -> &'static str {
        self.path
    }
}

impl<T> Clone for NumericField<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for NumericField<T> {}

impl<T> std::fmt::Debug for NumericField<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("NumericField").field(&self.path).finish()
    }
}

/// A sum as Firestore returns it: an integer while every value is an integer and the sum fits
/// in an `i64`, otherwise a double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// The exact sum of integers.
    Integer(i64),
    /// A sum with a double in it, or one that overflowed an `i64`.
    Double(f64),
}

impl Number {
    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Integer(i) => i as f64,
            Number::Double(d) => d,
        }
    }
}

macro_rules! numeric {
    ($integer:literal: $($ty:ty),*) => { $(impl Numeric for $ty { const INTEGER: bool = $integer; })* };
}
numeric!(true: i8, i16, i32, i64, isize, u8, u16, u32);
numeric!(false: f32, f64);
