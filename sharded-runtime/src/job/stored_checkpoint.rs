//! A part's checkpoint kept where every attempt of the part finds it (a Firestore document, a
//! Datastore entity), stored every [`STORE_EVERY`] while the part runs and at its end, after a
//! failure too: what a tracked purge and a per-user migration resume from.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::error::{Error, Result};
use crate::job::task_part::TaskPart;

/// How often a running part stores its latest checkpoint.
pub(crate) const STORE_EVERY: Duration = Duration::from_secs(2);

/// The id part `part` of the job `job` keeps its checkpoint under, `<job>-<index>-of-<count>`;
/// [`Error::InvalidOptions`] for a job name that is no document id.
pub(crate) fn part_id(job: &str, part: &TaskPart) -> Result<String> {
    if job.is_empty() || job.contains('/') || job.starts_with("__") {
        return Err(Error::InvalidOptions {
            option: "job",
            expected: "a job name that is a document id: not empty, no `/`, not `__...`",
        });
    }
    Ok(format!("{job}-{}-of-{}", part.index, part.count))
}

/// Where a part's checkpoint is kept, by the part's id.
pub(crate) trait CheckpointStore<C>: Sync {
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<C>>>;
    fn write<'a>(&'a self, id: &'a str, state: &'a C) -> BoxFuture<'a, Result<()>>;
}

/// The latest checkpoint a run reported: set by its progress report, read by the store.
pub(crate) struct Latest<C>(Mutex<Option<C>>);

impl<C: Clone> Latest<C> {
    pub(crate) fn new() -> Self {
        Latest(Mutex::new(None))
    }

    pub(crate) fn set(&self, state: &C) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(state.clone());
    }

    fn get(&self) -> Option<C> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Runs `running` (which reports to `latest`), storing the latest checkpoint under `id` every
/// [`STORE_EVERY`] while it runs (a failed store is tried at the next tick), then its result,
/// or after a failure the last checkpoint reported, for the retry.
pub(crate) async fn store_while<C: Clone + PartialEq>(
    store: &dyn CheckpointStore<C>,
    id: &str,
    latest: &Latest<C>,
    running: impl Future<Output = Result<C>>,
) -> Result<C> {
    let storing = async {
        let mut stored: Option<C> = None;
        loop {
            tokio::time::sleep(STORE_EVERY).await;
            let now = latest.get();
            if let Some(state) = now.as_ref().filter(|_| now != stored)
                && store.write(id, state).await.is_ok()
            {
                stored = now;
            }
        }
    };
    futures::pin_mut!(running, storing);
    let result = match futures::future::select(running, storing).await {
        futures::future::Either::Left((result, _)) => result,
        futures::future::Either::Right((never, _)) => never,
    };
    match result {
        Ok(done) => {
            store.write(id, &done).await?;
            Ok(done)
        }
        Err(err) => {
            if let Some(last) = latest.get() {
                let _ = store.write(id, &last).await;
            }
            Err(err)
        }
    }
}
