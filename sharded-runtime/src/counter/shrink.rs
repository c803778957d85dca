//! A counter's shard documents past its declared count merged into the declared ones: after a
//! resize to fewer shard documents (or a client's own documents in the shard collection),
//! reads stay exact without it (a read sums every document there is), but a transaction's
//! read and a fold read each one. The merge runs in read-write transactions that read the
//! documents they delete, so no increment landing meanwhile is lost.

use firestore::FirestoreTransactionOps as _;
use firestore::gcloud_sdk::google::firestore::v1::{Document, Write, write::Operation};

use crate::error::Result;
use crate::model::counter_field::{CounterField, shard_value, total};
use crate::model::handle::ShardedCollection;
use crate::model::sharded::Sharded;
use crate::write::atomic::Built;
use crate::write::increment::shard_addition;

/// Shard documents one transaction deletes at most: with the one addition, under
/// Firestore's 500 writes per commit.
const MERGED_PER_COMMIT: usize = 499;

impl<T: Sharded> ShardedCollection<'_, T> {
    /// Merges the shard documents of the counter `field` of the document `id` that are not
    /// among its declared ones (`0` to `shards - 1`) into shard document `0`, and returns how
    /// many it merged: each read-write transaction reads every shard document, deletes up to
    /// 499 undeclared ones and adds their sum to `0`, run again (as [`fold`](Self::fold) is)
    /// when increments land meanwhile. The value never changes, for readers either: each
    /// commit moves a sum from some documents to another at once. Run it after declaring
    /// fewer shards, once no process writes with the old count.
    pub async fn merge_undeclared_shards(&self, id: &str, field: CounterField<T>) -> Result<u64> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        let mut merged = 0;
        loop {
            let count = super::fold::retry_aborted(|| self.merge_once(&document, field)).await?;
            merged += count as u64;
            if count < MERGED_PER_COMMIT {
                return Ok(merged);
            }
        }
    }

    /// One transaction of [`merge_undeclared_shards`](Self::merge_undeclared_shards): how
    /// many documents it merged.
    async fn merge_once(&self, document: &str, field: CounterField<T>) -> Result<usize> {
        let mut transaction = self.db().begin_transaction().await?;
        // What to delete and how much it held, read inside the transaction.
        let read = async {
            let inside = self.in_transaction(&mut transaction);
            let shards = super::read::shard_documents(inside.db(), document, field).await?;
            let undeclared: Vec<Document> = shards
                .into_iter()
                .filter(|shard| !declared(&shard.name, field.shards()))
                .take(MERGED_PER_COMMIT)
                .collect();
            let values = undeclared
                .iter()
                .map(shard_value)
                .collect::<Result<Vec<_>>>()?;
            Ok::<_, crate::error::Error>((undeclared, total(values, document)?))
        };
        let (undeclared, sum) = match read.await {
            Ok((undeclared, sum)) if !undeclared.is_empty() => (undeclared, sum),
            other => {
                let _ = transaction.rollback().await;
                return other.map(|_| 0);
            }
        };
        for shard in &undeclared {
            transaction.add(Built(Write {
                operation: Some(Operation::Delete(shard.name.clone())),
                ..Write::default()
            }))?;
        }
        transaction.add(Built(shard_addition(
            format!("{document}/{}/0", field.collection_id()),
            sum,
        )))?;
        transaction.commit().await?;
        Ok(undeclared.len())
    }
}

/// Whether the shard document `name` is one of the `shards` declared ones (`0` to
/// `shards - 1`, as written).
fn declared(name: &str, shards: u32) -> bool {
    let id = name.rsplit('/').next().unwrap_or(name);
    id.parse::<u32>()
        .is_ok_and(|shard| shard < shards && shard.to_string() == id)
}

#[cfg(test)]
mod tests {
    use super::declared;

    #[test]
    fn the_declared_shard_documents_are_the_numbers_below_the_count_as_written() {
        let name = |id: &str| {
            format!("projects/p/databases/(default)/documents/posts/p1/_sharded_counter_likes/{id}")
        };
        for id in ["0", "4"] {
            assert!(declared(&name(id), 5), "{id}");
        }
        for id in ["5", "19", "04", "-1", "+1", "x", ""] {
            assert!(!declared(&name(id), 5), "{id}");
        }
    }
}
