//! A counter kept folded: its live value (`listen.rs`) says when its shard documents change,
//! and a fold (`fold.rs`) writes the exact value into the document's field, at most once a
//! period, so that a burst of increments costs one fold. The stream does the work as it is
//! polled: no task runs beside it, and dropping it stops the listener and the folds. The
//! folds go over a connection of their own, given the listener's idle timeout: one that goes
//! unanswered that long is made again over a fresh connection, as the listener reconnects.

use std::time::Duration;

use futures::stream::{BoxStream, StreamExt as _};
use tokio::time::Instant;

use firestore::gcloud_sdk::tonic::Code;

use super::fold::{failed_with, fold_over, retry_aborted};
use super::{CounterSnapshot, Folded};
use crate::error::{Error, Result};
use crate::model::counter_field::CounterField;
use crate::model::handle::ShardedCollection;
use crate::model::sharded::Sharded;
use crate::query::ListenOptions;
use crate::query::listen::connection::{self, Connection};
use crate::wire::status::StatusCode;

/// The shortest period between two folds of one document: about one write a second is what
/// a Firestore document sustains.
pub const MIN_FOLD_PERIOD: Duration = Duration::from_secs(1);

impl<T: Sharded> ShardedCollection<'_, T> {
    /// Keeps the counter `field` of the document `id` folded into the document's own field,
    /// for clients that read one field: a stream of the folds it makes. It listens to the
    /// counter ([`listen_counter`](Self::listen_counter)) and, when the value has changed
    /// since the last fold, [`fold`](Self::fold)s it, at most once every `every` (from
    /// [`MIN_FOLD_PERIOD`] to [`MAX_DURATION`](crate::write::bulk::MAX_DURATION), or
    /// [`Error::InvalidOptions`](crate::error::Error::InvalidOptions)); the first fold comes with the first
    /// value. Each fold is exact at its commit, as `fold` is.
    ///
    /// The work happens as the stream is polled: poll it (`while let Some(fold) =
    /// stream.next().await`) in a task of yours. Dropping it stops the listener and the
    /// folds; no task outlives it. An error (the listener's, or a fold's: the document does
    /// not exist) is its last item. A whole-document write of the type (`upsert`, `update`)
    /// puts the struct's value in the field until the counter next changes.
    ///
    /// Cost: the listener's reads (each shard document once, then each changed one) and one
    /// fold per period with changes (a read per shard document, one write).
    ///
    /// [`keep_folded_with`](Self::keep_folded_with) with the default [`ListenOptions`].
    pub fn keep_folded(
        &self,
        id: &str,
        field: CounterField<T>,
        every: Duration,
    ) -> Result<BoxStream<'static, Result<Folded>>> {
        self.keep_folded_with(id, field, every, ListenOptions::default())
    }

    /// [`keep_folded`](Self::keep_folded), its listener reconnecting as `options` say
    /// ([`listen_counter_with`](Self::listen_counter_with)), and its folds too: a fold that
    /// fails for a transient reason (a dropped connection) is made again after the
    /// listener's backoff, and one unanswered for `idle_timeout` over a fresh connection;
    /// `reconnects` failed folds in a row at most (then the failure is the last item).
    pub fn keep_folded_with(
        &self,
        id: &str,
        field: CounterField<T>,
        every: Duration,
        options: ListenOptions,
    ) -> Result<BoxStream<'static, Result<Folded>>> {
        // Past a day, the next fold's deadline could overflow the clock inside the stream.
        crate::wire::option_check::check(
            (MIN_FOLD_PERIOD..=crate::wire::option_check::MAX_DURATION).contains(&every),
            "every",
            "from MIN_FOLD_PERIOD (1 s: a document takes about one write a second) to MAX_DURATION (a day)",
        )?;
        let folder = Folder {
            changes: self.listen_counter_with(id, field, options)?,
            document: self.scope().document_name::<T>(self.db(), id)?,
            connection: self.db().client().clone(),
            db: self.db().clone(),
            id: id.to_owned(),
            field,
            every,
            options,
            last: None,
            changed: false,
            retry_at: None,
            failures: 0,
        };
        Ok(crate::wire::until_error::until_error(folder))
    }
}

struct Folder<T> {
    changes: BoxStream<'static, Result<CounterSnapshot>>,
    /// The counted document's full name.
    document: String,
    /// What the folds go over: the client's own connection until one is silent.
    connection: Connection,
    db: firestore::FirestoreDb,
    id: String,
    field: CounterField<T>,
    every: Duration,
    options: ListenOptions,
    /// The last fold: when it was made here, and what it wrote.
    last: Option<(Instant, Folded)>,
    /// The counter has changed since the last fold.
    changed: bool,
    /// After a failed fold, when the next is made.
    retry_at: Option<Instant>,
    /// Failed folds in a row.
    failures: u32,
}

impl<T: Sharded> crate::wire::until_error::Source for Folder<T> {
    type Item = Folded;

    /// The next fold, once one is due; `None` when the listener ends.
    async fn next_item(&mut self) -> Option<Result<Folded>> {
        loop {
            let due = self.changed.then(|| {
                let period = self
                    .last
                    .map_or_else(Instant::now, |(made, _)| made + self.every);
                self.retry_at.map_or(period, |retry| retry.max(period))
            });
            tokio::select! {
                biased;
                () = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                    match self.fold().await {
                        Ok(Some(fold)) => return Some(Ok(fold)),
                        Ok(None) => {}
                        Err(err) => return Some(Err(err)),
                    }
                }
                next = self.changes.next() => match next? {
                    Ok(snapshot) => self.changed |= self.is_news(&snapshot),
                    Err(err) => return Some(Err(err)),
                },
            }
        }
    }
}

impl<T> Folder<T> {
    /// One fold: what it wrote, or `None` after a transient failure (made again after the
    /// backoff), or the failure that ends the stream.
    async fn fold(&mut self) -> Result<Option<Folded>> {
        let fold = retry_aborted(|| {
            fold_over(
                &self.connection,
                &self.db,
                &self.document,
                &self.id,
                self.field,
                self.options.idle_timeout,
            )
        })
        .await;
        let err = match fold {
            Ok(fold) => {
                self.last = Some((Instant::now(), fold));
                self.changed = false;
                self.retry_at = None;
                self.failures = 0;
                return Ok(Some(fold));
            }
            Err(err) => err,
        };
        let transient =
            matches!(&err, Error::Firestore(cause) if crate::wire::retry::transient(cause));
        self.failures += 1;
        let spent = self
            .options
            .reconnects
            .is_some_and(|reconnects| self.failures > reconnects);
        if !transient || spent {
            return Err(err);
        }
        if failed_with(&err, Code::DeadlineExceeded)
            && let Ok(fresh) = connection::fresh(&self.db).await
        {
            tracing::debug!("sharded: a fold was silent; the next goes over a fresh connection");
            self.connection = fresh;
        }
        let delay = self
            .options
            .backoff()
            .delay(self.failures, StatusCode::Unavailable);
        tracing::debug!(%err, ?delay, "sharded: a fold failed; made again after the backoff");
        self.retry_at = Some(Instant::now() + delay);
        Ok(None)
    }

    /// Whether `snapshot` shows a value the last fold did not write: one read after the
    /// fold's commit (a value read at or before it is one the fold read past).
    fn is_news(&self, snapshot: &CounterSnapshot) -> bool {
        match &self.last {
            None => true,
            Some((_, fold)) => snapshot.read_time > fold.at && snapshot.value != fold.value,
        }
    }
}
