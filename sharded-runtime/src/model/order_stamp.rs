//! How a `server_timestamp` type's whole-document writes set its order field.

/// How the whole-document writes of a `server_timestamp` type set its order field. The
/// default, [`OnCreate`](Self::OnCreate), stamps a document when it is created and keeps
/// the stored time when it is replaced, as Firebase apps stamp `createdAt` on create: an
/// edited chat message stays where it was in every page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OrderStamp {
    /// The server's time (`REQUEST_TIME`) on create (`insert`, and `upsert` of a document
    /// that does not exist); a replace (`update`, and `upsert` of one that does) keeps the
    /// stored time. A batch, bulk or transaction `upsert` cannot tell the two apart before
    /// it is applied, so it is [`Error::InvalidUpdate`](crate::error::Error::InvalidUpdate) there,
    /// nothing queued: use `insert` or `update`, or another stamp.
    #[default]
    OnCreate,
    /// The server's time on every whole-document write: a replaced document moves to now.
    Always,
    /// The document's own value, as any other field: for imports of documents that have
    /// their times already (historical orders, another database's export).
    FromDocument,
}
