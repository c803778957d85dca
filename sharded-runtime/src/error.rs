use firestore::errors::FirestoreError;

/// What can go wrong in a sharded write or query.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Firestore, or the connection to it, failed. In a fanned-out query this fails the whole
    /// query: no partial result is returned.
    #[error("firestore: {0}")]
    Firestore(#[from] FirestoreError),
    /// A stored document lacks a field sharded relies on (it was not written through sharded).
    #[error("document `{document}` has no `{field}` field; was it written without sharded?")]
    MissingField {
        /// The document's full name.
        document: String,
        /// The stored field it lacks.
        field: String,
    },
    /// A cursor that cannot be used with this query; nothing was sent.
    #[error("invalid cursor: {0}")]
    InvalidCursor(String),
    /// A query Firestore would reject; nothing was sent.
    #[error("invalid query: {0}")]
    InvalidQuery(String),
}

/// `Result` with sharded's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
