//! The front end of `sharded`: `#[sharded(...)]` attributes parsed into an AST that keeps the
//! user's tokens, then validated into a [`Model`]. The derive (`sharded-derive`) expands a
//! `Model`; the build-time crate (`sharded-build`) turns the same `Model` into indexes, so the
//! two can never read an attribute differently.
//!
//! Not a public API: its items change with the derive.

pub mod ast;
pub mod attr;
pub mod case;
mod check;
pub mod ctxt;
mod lower;
pub mod model;
mod rfc3339;
mod suggest;
pub mod symbol;
mod types;

pub use attr::Direction;
pub use ctxt::Ctxt;
pub use model::{IndexedField, Model, OrderField};
pub use sharded_indexes::{StoredType, query_id};

/// Parses and validates a `#[derive(Sharded)]` input.
///
/// Returns the container even on error, so the derive can still emit a minimal impl for the type.
pub fn parse<'a>(cx: &Ctxt, input: &'a syn::DeriveInput) -> ast::Container<'a> {
    ast::Container::from_ast(cx, input)
}

/// The checks that relate attributes and fields to each other; `None` when any error was reported.
pub fn validate<'a>(cx: &Ctxt, container: &'a ast::Container<'a>) -> Option<Model<'a>> {
    lower::validate(cx, container)
}
