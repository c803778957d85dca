//! Firestore's rules for document ids, checked before anything is sent.

use crate::error::{Error, Result};

/// The longest document id Firestore accepts, in bytes.
pub const MAX_DOCUMENT_ID_BYTES: usize = 1500;

/// Checks `id` against Firestore's rules for a document id in this collection: not empty, at
/// most 1,500 bytes, no `/` (which would name a document in a subcollection that no sharded
/// query reads), not `.` or `..`, and not of the reserved form `__…__`, except the legacy
/// numeric ids `__id<N>__` of documents imported from Datastore, which Firestore reads and
/// writes by that name: N a non-zero 64-bit integer written as Rust writes it (no `+`, no
/// leading zeros). Measured on the emulator in both modes: `__id5__` and `__id-3__` are
/// taken, `__id0__`, `__id07__`, `__id-0__`, `__id+5__` refused as reserved, and
/// `__id9223372036854775808__` as "not a 64 bit integer".
pub fn check_document_id(id: &str) -> Result<()> {
    if numeric_id(id).is_some() {
        return Ok(());
    }
    let reason = if id.is_empty() {
        "a document id cannot be empty"
    } else if id.len() > MAX_DOCUMENT_ID_BYTES {
        "a document id is at most 1,500 bytes"
    } else if id.contains('/') {
        "a document id cannot contain `/`: it would name a document in a subcollection, which no sharded query reads"
    } else if id == "." || id == ".." {
        "a document id cannot be `.` or `..`"
    } else if id.len() >= 4 && id.starts_with("__") && id.ends_with("__") {
        "ids of the form `__…__` are reserved by Firestore"
    } else {
        return Ok(());
    };
    Err(Error::InvalidDocumentId {
        id: id.to_owned(),
        reason,
    })
}

/// N of a legacy numeric id `__id<N>__` in the one form Firestore and Datastore take: N a
/// non-zero `i64` written without a sign of `+` or leading zeros.
pub(crate) fn numeric_id(id: &str) -> Option<i64> {
    let digits = id.strip_prefix("__id")?.strip_suffix("__")?;
    let number: i64 = digits.parse().ok()?;
    (number != 0 && number.to_string() == digits).then_some(number)
}

/// A document's path below the database root (`rooms/lobby/messages/m1`): pairs of a
/// collection id and a document id, each a valid id.
pub(crate) fn check_document_path(path: &str) -> Result<()> {
    let segments: Vec<&str> = path.split('/').collect();
    if !segments.len().is_multiple_of(2) {
        return Err(Error::InvalidDocumentId {
            id: path.to_owned(),
            reason: "a document path is pairs of a collection id and a document id",
        });
    }
    segments.into_iter().try_for_each(check_document_id)
}

/// A new random document id as Firestore's clients make them: 20 characters from
/// `[A-Za-z0-9]`, spread evenly over the document-name index.
pub(crate) fn generate_document_id() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..20)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_firestores_rules() {
        for ok in [
            "a",
            "gen-0001",
            "é",
            "_",
            "__",
            "___",
            "a__",
            "__a",
            ".a",
            "...",
            "__id5__",
            "__id-7__",
            &"x".repeat(1500),
        ] {
            assert!(check_document_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a/b",
            "/",
            ".",
            "..",
            "__x__",
            "____",
            "__id__",
            "__idx__",
            "__id5x__",
            &"x".repeat(1501),
        ] {
            assert!(
                matches!(check_document_id(bad), Err(Error::InvalidDocumentId { .. })),
                "{bad}"
            );
        }
    }
}
