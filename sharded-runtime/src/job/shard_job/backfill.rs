//! The job's run: a scan a page at a time, each document that needs the job's change (a
//! current shard value, or a field's new name) given it by a field-masked write with the
//! scanned update time as a precondition; a write that lost to a concurrent change is read
//! again and tried again.

use std::time::Instant;

use super::change::Needs;
use super::{Checkpoint, Progress, ShardJob};
use crate::error::{Error, Result};
use crate::model::handle::Scope;
use crate::model::sharded::Sharded;
use crate::wire::status::StatusCode;
use crate::write::bulk::{BulkWriter, PendingWrite, WriteFailure};

/// One document's shard write, in flight.
pub(super) struct Fix {
    /// The document's full name.
    pub(super) name: String,
    pub(super) pending: PendingWrite,
    pub(super) conflicts: u32,
}

impl<'db, T: Sharded> ShardJob<'db, T> {
    /// Runs the job, calling `progress` after each page; returns the final progress.
    ///
    /// On an error (a write given up on, a scan that kept failing) it stops and returns it;
    /// the last progress reported holds the checkpoint to resume from. A checkpoint whose id
    /// no document could have is [`Error::InvalidCursor`], and a type whose resharding onto
    /// new values starts at a `since` still to come is [`Error::ReshardingNotStarted`]; both
    /// with nothing sent. Dropping the future stops the job and its writer at once.
    pub async fn run(self, mut progress: impl FnMut(&Progress)) -> Result<Progress> {
        self.scope.check::<T>()?;
        let group = self.scope == Scope::Group;
        if !group && self.ids.has_path_bound() {
            return Err(Error::InvalidOptions {
                option: "ids",
                expected: "an IdRange of document ids: a document path bounds a collection group's job only",
            });
        }
        if self.ids.is_empty_under(self.bound_prefix()) {
            return Err(Error::InvalidOptions {
                option: "ids",
                expected: "an IdRange whose start comes before its end",
            });
        }
        if let Some(checkpoint) = &self.resume {
            // Over a collection group a checkpoint is a path: `rooms/lobby/messages/m1`.
            let checked = match group {
                true => crate::model::document_id::check_document_path(checkpoint.last_id()),
                false => crate::model::document_id::check_document_id(checkpoint.last_id()),
            };
            checked.map_err(|error| Error::InvalidCursor(format!("checkpoint: {error}")))?;
            if !self
                .ids
                .contains_under(self.bound_prefix(), checkpoint.last_id())
            {
                return Err(Error::InvalidCursor(format!(
                    "checkpoint: `{}` is not in the job's id range {:?}",
                    checkpoint.last_id(),
                    self.ids
                )));
            }
        }
        if let Some(since) = crate::model::reshard::not_started::<T>() {
            return Err(Error::ReshardingNotStarted { since });
        }
        let started = Instant::now();
        let writer = BulkWriter::new(self.db, self.writer.clone())?;
        let mut report = Progress {
            total: match &self.resume {
                None => Some(self.count().await?),
                Some(_) => None,
            },
            checkpoint: self.resume.clone(),
            ..Progress::default()
        };
        let after = self.resume.as_ref().map(|c| c.last_id().to_owned());
        let mut page = self.scan_page(after.as_deref()).await?;
        // Each page's writes finish while the next page is read.
        while let Some(last) = page.last().map(|document| self.position(&document.name)) {
            let mut fixes = Vec::new();
            for document in &page {
                report.scanned += 1;
                match self.change.needs::<T>(document) {
                    Needs::Nothing => report.unchanged += 1,
                    Needs::Decision => {
                        report.left_with_both_names(self.position(&document.name));
                    }
                    Needs::Write(write) => fixes.push(Fix {
                        name: document.name.clone(),
                        pending: writer.queue(write).await?,
                        conflicts: 0,
                    }),
                }
            }
            let full = page.len() == self.page_size as usize;
            let (next, finished) = tokio::join!(
                async {
                    if full {
                        self.scan_page(Some(&last)).await
                    } else {
                        Ok(Vec::new())
                    }
                },
                self.finish(&writer, fixes, &mut report)
            );
            finished?;
            report.checkpoint = Some(Checkpoint::after(last));
            report.elapsed = started.elapsed();
            if full {
                progress(&report);
            }
            page = next?;
        }
        if self.sweep_after_scan && self.change == super::Change::Shard {
            self.sweep(&writer, &mut report).await?;
        }
        writer.close().await?;
        report.elapsed = started.elapsed();
        progress(&report);
        Ok(report)
    }

    /// Waits for a page's writes; a write that lost to a concurrent change is read again
    /// and, if the document still needs a shard, written again.
    pub(super) async fn finish(
        &self,
        writer: &BulkWriter,
        fixes: Vec<Fix>,
        report: &mut Progress,
    ) -> Result<()> {
        // Every handle is awaited here, so each failure is claimed from it (a flush would
        // report the conflicts this loop resolves).
        let mut queue = fixes;
        let mut failures = Vec::new();
        while !queue.is_empty() {
            let mut retry = Vec::new();
            for fix in queue {
                let failure = match fix.pending.await {
                    Ok(_) => {
                        report.updated += 1;
                        continue;
                    }
                    Err(failure) => failure,
                };
                // A concurrent change (a failed precondition, a deletion), or a transaction
                // holding the document past the writer's retries (ABORTED: a lock timeout):
                // read it again and go on, slower, rather than fail the job.
                let conflict = matches!(
                    failure.code,
                    StatusCode::FailedPrecondition | StatusCode::NotFound | StatusCode::Aborted
                );
                if !conflict {
                    failures.push(failure);
                    continue;
                }
                report.conflicts += 1;
                let again = self.read_again(&fix.name).await?;
                let needs = again
                    .as_ref()
                    .map(|document| self.change.needs::<T>(document));
                match (again, needs) {
                    (None, _) => report.deleted += 1,
                    (Some(_), Some(Needs::Nothing)) => report.unchanged += 1,
                    (Some(document), Some(Needs::Decision)) => {
                        report.left_with_both_names(self.position(&document.name));
                    }
                    (Some(_), _) if fix.conflicts + 1 >= self.max_conflicts => {
                        failures.push(WriteFailure {
                            message: format!(
                                "changed by another writer {} times in a row; run the job again",
                                fix.conflicts + 1
                            ),
                            ..failure
                        })
                    }
                    (Some(document), _) => retry.push(Fix {
                        pending: writer.queue(self.change.write::<T>(&document)).await?,
                        name: fix.name,
                        conflicts: fix.conflicts + 1,
                    }),
                }
            }
            queue = retry;
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Error::BulkWrite { failures })
        }
    }
}
