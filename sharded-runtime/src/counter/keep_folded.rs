//! A counter kept folded: its live value (`listen.rs`) says when its shard documents change,
//! and a fold (`fold.rs`) writes the exact value into the document's field, at most once a
//! period, so that a burst of increments costs one fold. The stream does the work as it is
//! polled: no task runs beside it, and dropping it stops the listener and the folds.

use std::time::Duration;

use futures::stream::{BoxStream, StreamExt as _};
use tokio::time::Instant;

use super::{CounterField, CounterSnapshot, Folded};
use crate::parent::Scope;
use crate::{Result, Sharded, ShardedCollection};

/// The shortest period between two folds of one document: about one write a second is what
/// a Firestore document sustains.
pub const MIN_FOLD_PERIOD: Duration = Duration::from_secs(1);

impl<T: Sharded> ShardedCollection<'_, T> {
    /// Keeps the counter `field` of the document `id` folded into the document's own field,
    /// for clients that read one field: a stream of the folds it makes. It listens to the
    /// counter ([`listen_counter`](Self::listen_counter)) and, when the value has changed
    /// since the last fold, [`fold`](Self::fold)s it, at most once every `every` (from
    /// [`MIN_FOLD_PERIOD`] to [`MAX_DURATION`](crate::bulk::MAX_DURATION), or
    /// [`Error::InvalidOptions`](crate::Error::InvalidOptions)); the first fold comes with the first
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
    pub fn keep_folded(
        &self,
        id: &str,
        field: CounterField<T>,
        every: Duration,
    ) -> Result<BoxStream<'static, Result<Folded>>> {
        // Past a day, the next fold's deadline could overflow the clock inside the stream.
        crate::option_check::check(
            (MIN_FOLD_PERIOD..=crate::option_check::MAX_DURATION).contains(&every),
            "every",
            "from MIN_FOLD_PERIOD (1 s: a document takes about one write a second) to MAX_DURATION (a day)",
        )?;
        let folder = Folder {
            changes: self.listen_counter(id, field)?,
            db: self.db().clone(),
            scope: self.scope().clone(),
            id: id.to_owned(),
            field,
            every,
            last: None,
            changed: false,
        };
        Ok(crate::until_error::until_error(folder))
    }
}

struct Folder<T> {
    changes: BoxStream<'static, Result<CounterSnapshot>>,
    db: firestore::FirestoreDb,
    scope: Scope,
    id: String,
    field: CounterField<T>,
    every: Duration,
    /// The last fold: when it was made here, and what it wrote.
    last: Option<(Instant, Folded)>,
    /// The counter has changed since the last fold.
    changed: bool,
}

impl<T: Sharded> crate::until_error::Source for Folder<T> {
    type Item = Folded;

    /// The next fold, once one is due; `None` when the listener ends.
    async fn next_item(&mut self) -> Option<Result<Folded>> {
        loop {
            let due = self.changed.then(|| {
                self.last
                    .map_or_else(Instant::now, |(made, _)| made + self.every)
            });
            tokio::select! {
                biased;
                () = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                    let collection = ShardedCollection::<T>::scoped(&self.db, self.scope.clone());
                    let fold = collection.fold(&self.id, self.field).await;
                    if let Ok(fold) = &fold {
                        self.last = Some((Instant::now(), *fold));
                        self.changed = false;
                    }
                    return Some(fold);
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
    /// Whether `snapshot` shows a value the last fold did not write: one read after the
    /// fold's commit (a value read at or before it is one the fold read past).
    fn is_news(&self, snapshot: &CounterSnapshot) -> bool {
        match &self.last {
            None => true,
            Some((_, fold)) => snapshot.read_time > fold.at && snapshot.value != fold.value,
        }
    }
}
