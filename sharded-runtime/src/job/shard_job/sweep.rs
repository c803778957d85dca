//! After the scan: documents of the job's id range that still hold a value a rebalance moves
//! out of, written behind the scan by a process still running the type before the change,
//! found and fixed until none is left.

use super::Change;
use super::backfill::Fix;
use super::{Progress, ShardJob};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::write::bulk::BulkWriter;

/// Pages of documents with retired values a job fixes after its scan before it gives up:
/// past that, a process still running the type before the change keeps writing them.
const MAX_SWEEPS: usize = 100;

impl<'db, T: Sharded> ShardJob<'db, T> {
    /// The sweep alone, over the job's whole id range, with a writer of its own: a tracked
    /// job's closing step, run once after every part's scan. The documents it fixed.
    pub(crate) async fn sweep_alone(&self) -> Result<u64> {
        let writer = BulkWriter::new(self.db, self.writer.clone())?;
        let mut report = Progress::default();
        self.sweep(&writer, &mut report).await?;
        writer.close().await?;
        Ok(report.swept)
    }

    /// After the scan: the documents of the job's id range that still hold a retired value,
    /// which a process still running the type before the change wrote behind the scan,
    /// found with `shard in [retired] ORDER BY order field` (the query the whole-collection
    /// index serves, so it reads only them; the range is a `__name__` inequality, which that
    /// index ends with) and fixed, a page at a time, until none is left. Each part of a
    /// partitioned job sweeps its own range only, so parts never race for a document.
    pub(super) async fn sweep(&self, writer: &BulkWriter, report: &mut Progress) -> Result<()> {
        let retired = T::DESCRIPTION.moved_out_of();
        if retired.is_empty() {
            return Ok(());
        }
        for _ in 0..MAX_SWEEPS {
            let mut found = Vec::new();
            for chunk in retired.chunks(crate::query::MAX_DISJUNCTIONS) {
                found.extend(
                    crate::query::retired::holding::<T>(
                        self.db,
                        &self.scope,
                        chunk,
                        self.page_size,
                        self.id_filter(),
                        &self.scan_backoff,
                    )
                    .await?,
                );
            }
            if found.is_empty() {
                return Ok(());
            }
            report.swept += found.len() as u64;
            let mut fixes = Vec::with_capacity(found.len());
            for document in &found {
                fixes.push(Fix {
                    name: document.name.clone(),
                    pending: writer.queue(Change::Shard.write::<T>(document)).await?,
                    conflicts: 0,
                });
            }
            self.finish(writer, fixes, report).await?;
        }
        Err(Error::RetiredValuesStillWritten {
            collection: T::COLLECTION,
            swept: report.swept,
        })
    }
}
