//! Many entities written at the ramp the best-practices page asks of a new key range
//! (500 operations a second, 50% more every 5 minutes), in commits of up to 500 upserts, each
//! retried on a transient failure: an upsert written twice is written once.

use std::time::{Duration, Instant};

use super::Kind;
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::model::throttling::Throttling;
use crate::wire::retry::retries_request;
use crate::write::bulk::{Backoff, RateLimiter, WriteFailure};

/// How [`Kind::bulk_put`] writes.
#[derive(Debug, Clone)]
pub struct BulkPut {
    /// The ramp; [`Throttling::ramp`] (500/50/5) unless set.
    pub throttling: Throttling,
    /// Upserts per commit, 1 to 500.
    pub batch_size: usize,
    /// Retries of a commit that failed transiently.
    pub backoff: Backoff,
}

impl Default for BulkPut {
    fn default() -> Self {
        BulkPut {
            throttling: Throttling::ramp(),
            batch_size: super::kind::MAX_MUTATIONS,
            backoff: Backoff::default(),
        }
    }
}

/// What [`Kind::bulk_put`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BulkPutReport {
    /// Entities written.
    pub written: usize,
    /// Commits sent.
    pub commits: usize,
    /// A run of increasing ids the writes of the kind's handle named (`first … last`): the
    /// hotspot the page warns of; also logged as a warning ([`Kind::sequential_ids`]).
    pub sequential_ids: Option<String>,
}

impl<T: Sharded> Kind<T> {
    /// Upserts every `(id, document)` of `documents`, each with a shard drawn, in commits of
    /// `options.batch_size` at the ramp of `options.throttling`, holding one commit in memory.
    /// `progress` is told the count of the input handled after each commit: the input's
    /// first that many are written or refused, so a job resumes by skipping them.
    ///
    /// An entity Datastore would refuse (a queried string or blob longer than it indexes, an
    /// id it reserves, a field queries need missing) is refused alone, before anything is
    /// sent, and every other entity is written: the run then ends with [`Error::BulkWrite`]
    /// naming each refused entity (`InvalidArgument`, not applied). A commit that still fails
    /// after its retries ends the run with [`Error::BulkWrite`] naming its entities (and those
    /// refused before it); none after it is sent.
    pub async fn bulk_put(
        &self,
        documents: impl IntoIterator<Item = (String, T)>,
        options: &BulkPut,
        mut progress: impl FnMut(usize),
    ) -> Result<BulkPutReport> {
        if !(1..=super::kind::MAX_MUTATIONS).contains(&options.batch_size) {
            return Err(Error::InvalidOptions {
                option: "batch_size",
                expected: "1 to 500",
            });
        }
        options.throttling.validate()?;
        options.backoff.validate()?;
        let clock = Instant::now();
        let limiter = RateLimiter::new(options.throttling, Duration::ZERO, options.batch_size);
        let mut report = BulkPutReport::default();
        let mut refused: Vec<WriteFailure> = Vec::new();
        let mut handled = 0;
        let mut documents = documents.into_iter().peekable();
        while documents.peek().is_some() {
            let batch: Vec<(String, T)> = documents.by_ref().take(options.batch_size).collect();
            super::kind::check_distinct(
                &batch.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
            )?;
            let mut mutations = Vec::with_capacity(batch.len());
            let mut written = Vec::with_capacity(batch.len());
            for (id, document) in &batch {
                match self.mutation(super::kind::Put::Upsert, id, document) {
                    Ok(mutation) => {
                        mutations.push(mutation);
                        written.push(id);
                    }
                    Err(
                        error @ (Error::TooLongToIndex { .. }
                        | Error::InvalidDocumentId { .. }
                        | Error::FieldNotWritten { .. }),
                    ) => refused.push(WriteFailure {
                        document: id.clone(),
                        code: crate::wire::status::StatusCode::InvalidArgument,
                        message: error.to_string(),
                        attempts: 0,
                        maybe_applied: false,
                    }),
                    Err(other) => return Err(other),
                }
            }
            handled += batch.len();
            if mutations.is_empty() {
                progress(handled);
                continue;
            }
            while let Err(wait) = limiter.try_acquire(mutations.len(), clock.elapsed()) {
                tokio::time::sleep(wait).await;
            }
            let mut attempts = 0;
            // Whether an attempt's answer was lost: that commit may have been applied.
            let mut answer_lost = false;
            loop {
                attempts += 1;
                let result = self.datastore.commit(mutations.clone(), None).await;
                if let Err(Error::Datastore { code, .. }) = &result {
                    use crate::wire::status::StatusCode as C;
                    answer_lost |= matches!(
                        code,
                        C::DeadlineExceeded
                            | C::Internal
                            | C::Unavailable
                            | C::Unknown
                            | C::Cancelled
                    );
                }
                match result {
                    Ok(_) => break,
                    Err(Error::Datastore { code, message })
                        if attempts < options.backoff.max_attempts && retries_request(code) =>
                    {
                        tracing::debug!(%message, ?code, attempts, "bulk_put commit retried");
                        tokio::time::sleep(options.backoff.delay(attempts, code)).await;
                    }
                    Err(Error::Datastore { code, message }) => {
                        refused.extend(written.iter().map(|id| WriteFailure {
                            document: (*id).clone(),
                            code,
                            message: message.clone(),
                            attempts,
                            maybe_applied: answer_lost,
                        }));
                        return Err(Error::BulkWrite { failures: refused });
                    }
                    Err(other) => return Err(other),
                }
            }
            report.sequential_ids = self.sequential_ids();
            report.commits += 1;
            report.written += written.len();
            progress(handled);
        }
        match refused.is_empty() {
            true => Ok(report),
            false => Err(Error::BulkWrite { failures: refused }),
        }
    }
}
