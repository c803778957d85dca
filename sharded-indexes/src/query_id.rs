//! Which query a `ShardedQuery<T, QUERY>` is: its identity in types is a hash of its name, so
//! reordering a struct's fields or attributes never changes which query a cursor belongs to.
//! The derive writes each id as a literal and refuses names that collide; the runtime
//! re-exports the function for naming the types by hand.

/// The identity of the query named `name` (its method on `T::query()`: `"all"`, `"exchange"`,
/// `"exchange_and_instrument_type"`), for naming the type of its queries, pages and cursors:
///
/// ```ignore
/// use sharded_runtime::{Cursor, reads::query_id};
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

#[cfg(test)]
mod tests {
    use super::query_id;

    #[test]
    fn ids_are_fnv1a_of_the_name() {
        // Reference values of 64-bit FNV-1a.
        assert_eq!(query_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(query_id("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(query_id("exchange"), query_id("all"));
    }
}
