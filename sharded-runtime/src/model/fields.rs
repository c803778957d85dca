//! Typed field names for updates that write only some fields.

use std::marker::PhantomData;

/// A stored top-level field of `T`, for
/// [`ShardedCollection::update_fields`](crate::model::handle::ShardedCollection::update_fields). Made by the
/// derive's `T::fields().<field>`: a misspelt field, a field serde skips, or a field of
/// another type does not compile.
pub struct Field<T> {
    path: &'static str,
    marker: PhantomData<fn() -> T>,
}

/// The field `path` of `T`: what the derive's `T::fields()` is made of. A free function with
/// its type written out (`field::<T>(..)`), because a call the compiler must infer a type for
/// costs every user's build a check per field.
pub const fn field<T>(path: &'static str) -> Field<T> {
    Field {
        path,
        marker: PhantomData,
    }
}

impl<T> Field<T> {
    /// The field's path as Firestore names it (its serde name, backtick-quoted where needed).
    pub fn path(&self) -> &'static str {
        self.path
    }
}

impl<T> Clone for Field<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Field<T> {}

impl<T> PartialEq for Field<T> {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl<T> Eq for Field<T> {}

impl<T> std::fmt::Debug for Field<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Field").field(&self.path).finish()
    }
}
