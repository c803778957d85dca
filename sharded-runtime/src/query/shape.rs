//! Which query a `ShardedQuery<T, QUERY>` is: [`query_id`] of its name, so reordering a
//! struct's fields or attributes never changes which query a cursor belongs to.

pub use sharded_indexes::query_id;

/// One typed query of a sharded type: its name, identity, and the stored field paths it
/// compares for equality (none for the whole collection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QueryShape {
    /// The query method's name.
    pub(crate) name: &'static str,
    /// [`query_id`] of the name.
    pub(crate) id: u64,
    /// The field paths compared for equality, in the index's order; for an array query, the
    /// array field.
    pub(crate) fields: &'static [&'static str],
    /// Whether it is an array field's query (`array-contains`, or `array-contains-any` for
    /// several values), not an equality.
    pub(crate) contains: bool,
}

impl QueryShape {
    /// The query named `name` on `fields`.
    pub(crate) const fn new(name: &'static str, fields: &'static [&'static str]) -> QueryShape {
        QueryShape {
            name,
            id: query_id(name),
            fields,
            contains: false,
        }
    }

    /// The array query named `name` on the array field `field`.
    pub(crate) const fn contains(name: &'static str, field: &'static [&'static str]) -> QueryShape {
        QueryShape {
            contains: true,
            ..QueryShape::new(name, field)
        }
    }
}

/// The queries a field declared for all of them takes: `#[sharded(aggregate)]` is summed and
/// `#[sharded(range)]` filtered by every query of its type.
#[derive(Debug)]
pub enum AllQueries {}
