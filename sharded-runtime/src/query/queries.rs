//! What `T::query()` returns: the whole-collection query, written here once for every type,
//! and the type's own query methods, which the derive writes, through `Deref`.

use std::ops::Deref;

use super::{ShardedQuery, WholeCollection};
use crate::model::sharded::Sharded;

/// The typed queries of `T`, from `T::query()`: [`all`](Self::all), and one method per
/// `#[sharded(index)]` path and per `index(...)` field set of `T`, which the derive writes on
/// the type this dereferences to: `Instrument::query().exchange("XNAS")`.
pub struct Queries<T: Sharded> {
    methods: T::QueryMethods,
}

/// What the derive's `T::query()` returns, around `T`'s own query methods; `T` written out,
/// as `field` is.
#[inline]
pub fn queries<T: Sharded>(methods: T::QueryMethods) -> Queries<T> {
    Queries { methods }
}

impl<T: Sharded> Queries<T> {
    /// Every document of the collection, by the order field: the query served by the index
    /// (shard, order field).
    #[inline]
    pub fn all(&self) -> WholeCollection<T> {
        ShardedQuery::__whole_collection()
    }
}

impl<T: Sharded> Deref for Queries<T> {
    type Target = T::QueryMethods;

    #[inline]
    fn deref(&self) -> &T::QueryMethods {
        &self.methods
    }
}

impl<T: Sharded> std::fmt::Debug for Queries<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Queries<{}>", std::any::type_name::<T>())
    }
}

/// What the derive's hidden method on a field without `#[sharded(index)]` takes: implemented
/// by nothing, so that `T::query().symbol("x")` on such a field is this error, with the fix.
#[diagnostic::on_unimplemented(
    message = "this field is not indexed, so it has no typed query",
    label = "a value for a field without `#[sharded(index)]`",
    note = "add `#[sharded(index)]` to the field: it gets `T::query().<field>(value)` and `<field>_in([..])`, and the index (shard, field, order field) that serves them; to query several fields at once, declare the set on the struct: `#[sharded(index(a, b))]`"
)]
pub trait Indexed {
    /// What a value of an implementing type would turn into: nothing, ever.
    fn not_indexed(self) -> NotIndexed;
}

/// What the derive's hidden `_contains` method on a `Vec` field without
/// `#[sharded(contains)]` takes: implemented by nothing, as [`Indexed`].
#[diagnostic::on_unimplemented(
    message = "this array field has no `array-contains` query",
    label = "a value for a `Vec` field without `#[sharded(contains)]`",
    note = "add `#[sharded(contains)]` to the field: it gets `T::query().<field>_contains(value)` and `<field>_contains_any([..])`, and the index (shard, the field's elements, order field) that serves them"
)]
pub trait Contained {
    /// What a value of an implementing type would turn into: nothing, ever.
    fn not_contained(self) -> NotIndexed;
}

/// What the hidden method on a field without an index returns: a type with no values.
#[derive(Debug)]
pub enum NotIndexed {}
