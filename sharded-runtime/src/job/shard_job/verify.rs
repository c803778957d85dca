//! The census after a job: how every document's shard value stands against the type's sets.

use firestore::gcloud_sdk::google::firestore::v1::Document;

use super::ShardJob;
use crate::error::Result;
use crate::model::sharded::Sharded;
use crate::model::stored::shard_value;

/// How a collection's documents stand against its shard set: what [`verify`] counts.
///
/// [`verify`]: crate::model::handle::ShardedCollection::verify
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardCensus {
    /// Documents read.
    pub scanned: u64,
    /// Documents with a current shard value.
    pub current: u64,
    /// Documents with a shard value the current set dropped (a `previous(...)` value that is
    /// not current, or a `retired(...)` one): queries read them while `previous(...)`
    /// declares them, and no longer after.
    pub retired: u64,
    /// Documents with no shard field, or a value no set has: invisible to sharded queries.
    /// A client the security rules do not govern wrote them (a server SDK), or they predate
    /// sharding.
    pub missing: u64,
    /// The first [`MAX_LISTED`](crate::job::shard_job::MAX_LISTED) of them, by document name: their
    /// paths below the database root (`rooms/lobby/messages/m1`).
    pub missing_ids: Vec<String>,
}

impl ShardCensus {
    /// Documents a [`ShardJob`] would still update: `missing + retired`. Zero means every
    /// document has a current value, so `previous(...)` can become `retired(...)`.
    pub fn outstanding(&self) -> u64 {
        self.missing + self.retired
    }
}

impl<'db, T: Sharded> ShardJob<'db, T> {
    /// Counts the documents by how their shard value stands: the check after a backfill or a
    /// rebalance. It scans the whole collection as the job does, so it costs one billed read
    /// per document; nothing is written.
    pub async fn verify(&self) -> Result<ShardCensus> {
        self.scope.check::<T>()?;
        let mut counts = ShardCensus::default();
        let mut after: Option<String> = None;
        loop {
            let page = self
                .scan_page_of(after.as_deref(), &[T::SHARD_FIELD_PATH.to_owned()])
                .await?;
            for document in &page {
                census::<T>(&mut counts, document);
            }
            match page.last() {
                Some(last) if page.len() == self.page_size as usize => {
                    after = Some(self.position(&last.name));
                }
                _ => return Ok(counts),
            }
        }
    }
}

impl<T: Sharded> ShardJob<'_, T> {
    /// The documents of the job's range that still need its change: for the backfill, those
    /// without a current shard value ([`ShardCensus::outstanding`]); for a rename, those
    /// still storing the old name.
    pub(crate) async fn outstanding(&self) -> Result<u64> {
        if self.change == super::Change::Shard {
            return Ok(self.verify().await?.outstanding());
        }
        let mut outstanding = 0;
        let mut after: Option<String> = None;
        loop {
            let page = self.scan_page(after.as_deref()).await?;
            outstanding += page
                .iter()
                .filter(|document| self.change.needed::<T>(document))
                .count() as u64;
            match page.last() {
                Some(last) if page.len() == self.page_size as usize => {
                    after = Some(self.position(&last.name));
                }
                _ => return Ok(outstanding),
            }
        }
    }
}

/// What a [`ShardCensus`] counts `document` as.
fn census<T: Sharded>(census: &mut ShardCensus, document: &Document) {
    census.scanned += 1;
    match shard_value::<T>(document) {
        Some(shard) if T::SHARD_VALUES.contains(&shard) => census.current += 1,
        Some(shard) if T::DESCRIPTION.moves_out_of(shard) => census.retired += 1,
        _ => {
            census.missing += 1;
            if census.missing_ids.len() < super::MAX_LISTED {
                let path = crate::model::document_path::DocumentPath::parse(&document.name);
                census.missing_ids.push(path.relative().to_owned());
            }
        }
    }
}
