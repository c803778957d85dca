//! The status codes sharded reports, gRPC's, as a type of this crate's own.

use firestore::gcloud_sdk::tonic;

/// Why Firestore refused or failed a request: gRPC's status codes, as Firestore documents
/// them. A [`WriteFailure`](crate::write::bulk::WriteFailure) and [`Error::Listen`](crate::error::Error)
/// carry one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatusCode {
    /// Not an error.
    Ok,
    /// Cancelled; the bulk writer also reports this for a write it was dropped before
    /// finishing.
    Cancelled,
    /// Unknown; also a connection that broke.
    Unknown,
    /// The request is invalid (a reserved name, a document too large).
    InvalidArgument,
    /// The deadline passed.
    DeadlineExceeded,
    /// The document does not exist (an update of a missing document).
    NotFound,
    /// The document exists already (a create).
    AlreadyExists,
    /// The caller may not do this.
    PermissionDenied,
    /// A quota or rate limit; retried after a long wait.
    ResourceExhausted,
    /// A precondition failed: the document changed since it was read, or an index is missing.
    FailedPrecondition,
    /// Contention (a transaction holding the document); retried.
    Aborted,
    /// Out of range.
    OutOfRange,
    /// Not implemented.
    Unimplemented,
    /// An internal error; also a broken HTTP/2 stream.
    Internal,
    /// The service is unavailable, or the connection dropped; retried.
    Unavailable,
    /// Data loss.
    DataLoss,
    /// No valid credentials.
    Unauthenticated,
}

impl From<tonic::Code> for StatusCode {
    fn from(code: tonic::Code) -> Self {
        use tonic::Code as C;
        match code {
            C::Ok => StatusCode::Ok,
            C::Cancelled => StatusCode::Cancelled,
            C::Unknown => StatusCode::Unknown,
            C::InvalidArgument => StatusCode::InvalidArgument,
            C::DeadlineExceeded => StatusCode::DeadlineExceeded,
            C::NotFound => StatusCode::NotFound,
            C::AlreadyExists => StatusCode::AlreadyExists,
            C::PermissionDenied => StatusCode::PermissionDenied,
            C::ResourceExhausted => StatusCode::ResourceExhausted,
            C::FailedPrecondition => StatusCode::FailedPrecondition,
            C::Aborted => StatusCode::Aborted,
            C::OutOfRange => StatusCode::OutOfRange,
            C::Unimplemented => StatusCode::Unimplemented,
            C::Internal => StatusCode::Internal,
            C::Unavailable => StatusCode::Unavailable,
            C::DataLoss => StatusCode::DataLoss,
            C::Unauthenticated => StatusCode::Unauthenticated,
        }
    }
}
