//! Stored field names of the types a nested index path goes through, so that the path of
//! `#[sharded(index(region_code: String))] place: Place` is what serde stores (`place.regionCode`
//! under `rename_all = "camelCase"`), computed by the compiler: it cannot disagree with serde.

/// The names serde stores a struct's fields under. Derive it (`#[derive(StoredNames)]`) on every
/// struct a nested index path (`#[sharded(index(a.b: T))]`) goes through; the derive reads the
/// same serde attributes (`rename`, `rename_all`) that decide what is stored.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use sharded_runtime::{Sharded, StoredNames};
/// use sharded_runtime::firestore::FirestoreTimestamp;
///
/// #[derive(Serialize, Deserialize, StoredNames)]
/// #[serde(rename_all = "camelCase")]
/// struct Place {
///     region_code: String,
/// }
///
/// #[derive(Serialize, Deserialize, Sharded)]
/// #[sharded(shards = 3, order_by = "at")]
/// struct Visit {
///     #[sharded(index(region_code: String))]
///     place: Place,
///     at: FirestoreTimestamp,
/// }
///
/// assert_eq!(Visit::INDEXED_FIELDS, ["place.regionCode"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not tell sharded the names serde stores its fields under",
    label = "sharded reads `{Self}`'s stored field names (a nested index path goes through it, or a projection reads it)",
    note = "add `#[derive(sharded_runtime::StoredNames)]` to `{Self}`, so sharded follows its serde renames"
)]
pub trait StoredNames {
    /// (Rust field name without `r#`, stored name) for every named field; no stored name for
    /// a field serde does not store under a name of its own (skipped or flattened).
    const STORED_NAMES: &'static [(&'static str, Option<&'static str>)];
}

/// The stored names of the type `accessor` returns; only its type is used.
pub const fn names_of<T, U: StoredNames>(
    _accessor: fn(&T) -> &U,
) -> &'static [(&'static str, Option<&'static str>)] {
    U::STORED_NAMES
}

/// The stored name of the Rust field `rust` in `names`; a compile-time error when serde does
/// not store it under a name of its own. A field that does not exist at all is the compiler's
/// own error on the same token, so it gets no second one here.
pub const fn stored_name(
    names: &'static [(&'static str, Option<&'static str>)],
    rust: &str,
) -> &'static str {
    let mut i = 0;
    while i < names.len() {
        if bytes_eq(names[i].0.as_bytes(), rust.as_bytes()) {
            match names[i].1 {
                Some(stored) => return stored,
                None => panic!(
                    "a nested index path goes through a field that serde skips or flattens, so it is not stored under a name of its own"
                ),
            }
        }
        i += 1;
    }
    ""
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

pub use sharded_indexes::field_path::path_len;

/// `segments` joined into a Firestore field path, each quoted with backticks where Firestore
/// needs it ([`sharded_indexes::field_path`], the front end's quoting), at compile time.
pub const fn path_bytes<const N: usize>(segments: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    sharded_indexes::field_path::write_path(segments, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn path<const N: usize>(segments: &[&str]) -> [u8; N] {
        path_bytes::<N>(segments)
    }

    #[test]
    fn paths_are_quoted_like_the_front_end_quotes_them() {
        let check = |segments: &[&str], expected: &str| {
            assert_eq!(path_len(segments), expected.len(), "{segments:?}");
            let bytes: [u8; 64] = path(segments);
            assert_eq!(&bytes[..expected.len()], expected.as_bytes());
        };
        check(&["price", "currency"], "price.currency");
        check(&["_private1"], "_private1");
        check(&["x-y"], "`x-y`");
        check(&["1st", "a`b"], "`1st`.`a\\`b`");
        check(&["place", "région"], "place.`région`");
    }
}
