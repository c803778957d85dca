//! Which query a `ShardedQuery<T, QUERY>` is: its identity in types is a hash of its name, so
//! reordering a struct's fields or attributes never changes which query a cursor belongs to.

/// The identity of the query named `name` (its method on `T::query()`: `"all"`, `"exchange"`,
/// `"exchange_and_instrument_type"`), for naming the type of its queries, pages and cursors:
///
/// ```ignore
/// use sharded_runtime::{Cursor, query_id};
/// fn next_page(after: Cursor<Instrument, { query_id("exchange") }>) { /* ... */ }
/// ```
///
/// A 64-bit FNV-1a hash; the derive refuses a type whose query names would collide.
pub const fn query_id(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// One typed query of a sharded type: its name, identity, and the stored field paths it
/// compares for equality (none for the whole collection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryShape {
    /// The query method's name.
    pub name: &'static str,
    /// [`query_id`] of the name.
    pub id: u64,
    /// The field paths compared for equality, in the index's order.
    pub fields: &'static [&'static str],
}

impl QueryShape {
    /// The query named `name` on `fields`.
    pub const fn new(name: &'static str, fields: &'static [&'static str]) -> QueryShape {
        QueryShape {
            name,
            id: query_id(name),
            fields,
        }
    }
}

/// Whether no two `shapes` share an id: the derive asserts it at compile time.
#[doc(hidden)]
pub const fn distinct_ids(shapes: &[QueryShape]) -> bool {
    let mut i = 0;
    while i < shapes.len() {
        let mut j = i + 1;
        while j < shapes.len() {
            if shapes[i].id == shapes[j].id {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_fnv1a_of_the_name() {
        // Reference values of 64-bit FNV-1a.
        assert_eq!(query_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(query_id("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(query_id("exchange"), query_id("all"));
        const SHAPES: [QueryShape; 2] = [QueryShape::new("all", &[]), QueryShape::new("a", &["a"])];
        assert!(distinct_ids(&SHAPES));
        assert!(!distinct_ids(&[SHAPES[0], SHAPES[0]]));
    }
}
