//! A BatchGetDocuments request sent as written, for the reads that need what the firestore
//! crate's gets do not give: the answer's read time, a read-time selector, or the names of
//! the missing documents.

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    BatchGetDocumentsRequest, BatchGetDocumentsResponse,
};
use futures::TryStreamExt as _;

use crate::error::Result;
use crate::wire::retry::{Backoff, retry_reads};

/// Every answer of `request`, the whole stream collected, sent again after a transient
/// failure as `backoff` says.
pub(crate) async fn batch_get(
    db: &FirestoreDb,
    request: BatchGetDocumentsRequest,
    backoff: &Backoff,
) -> Result<Vec<BatchGetDocumentsResponse>> {
    retry_reads(backoff, || async {
        let answers: Vec<_> = db
            .client()
            .get()
            .batch_get_documents(request.clone())
            .await?
            .into_inner()
            .try_collect()
            .await?;
        Ok(answers)
    })
    .await
}
