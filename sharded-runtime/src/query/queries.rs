//! What `T::query()` returns: the whole-collection query, written here once for every type,
//! and the type's own query methods, which the derive writes, through `Deref`.

use std::ops::Deref;

use super::{ShardedQuery, WholeCollection};
use crate::Sharded;

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
