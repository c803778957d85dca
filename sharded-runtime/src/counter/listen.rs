//! A counter's live value: one Listen target over its shard documents, whose values are
//! added up at each consistent point the server marks (a target-less `NO_CHANGE` with a read
//! time, once the target is `CURRENT`), so each value shown is the counter's exact value at
//! that read time. A dropped stream is opened again and reads every shard document afresh
//! (at most 1,000, one read each) rather than resuming from a token: a counter's target is
//! small, and a resumed target is what the live queries must check (`verify.rs`); a silent
//! stream is given up after [`ListenOptions::idle_timeout`] and opened over a fresh
//! connection, as a live query's is.

use std::collections::HashMap;
use std::time::SystemTime;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::listen_response::ResponseType;
use firestore::gcloud_sdk::google::firestore::v1::structured_query::CollectionSelector;
use firestore::gcloud_sdk::google::firestore::v1::target_change::TargetChangeType;
use firestore::gcloud_sdk::google::firestore::v1::{
    ListenRequest, ListenResponse, StructuredQuery, Target, listen_request, target,
};
use firestore::gcloud_sdk::tonic;
use futures::stream::{BoxStream, StreamExt as _};
use tokio::sync::mpsc;

use super::CounterField;
use crate::listen::ListenOptions;
use crate::query::listen::connection::{self, Connection};
use crate::retry::retries_request;
use crate::{Error, Result, Sharded, ShardedCollection, StatusCode};

/// The one target of a counter's Listen stream.
const TARGET: i32 = 1;

/// A counter's value at one moment, from [`ShardedCollection::listen_counter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CounterSnapshot {
    /// The counter's exact value at `read_time`.
    pub value: i64,
    /// The read time the server marked this value consistent at.
    pub read_time: SystemTime,
}

impl<T: Sharded> ShardedCollection<'_, T> {
    /// The live value of the counter `field` of the document `id`: a stream of its exact
    /// value, the first as soon as the server has sent every shard document, then one each
    /// time it changes, each at a read time the server marked consistent (so never a sum of
    /// two moments). [`listen_counter_with`](Self::listen_counter_with) with the default
    /// [`ListenOptions`].
    ///
    /// It reads each shard document once, then each changed one: Firestore bills a listener
    /// a read per document sent.
    pub fn listen_counter(
        &self,
        id: &str,
        field: CounterField<T>,
    ) -> Result<BoxStream<'static, Result<CounterSnapshot>>> {
        self.listen_counter_with(id, field, ListenOptions::default())
    }

    /// [`listen_counter`](Self::listen_counter), reconnecting as `options` say, as a live
    /// query does: a dropped stream is opened again, reading every shard document afresh (transient
    /// failures, `reconnects` in a row at most, then `Error::Listen`), and a stream silent
    /// for `idle_timeout` over a fresh connection. The options are checked first
    /// ([`Error::InvalidOptions`]); `checkpoints` does not apply. The stream owns its client,
    /// so it may be kept or moved into a task; dropping it closes the Listen stream.
    pub fn listen_counter_with(
        &self,
        id: &str,
        field: CounterField<T>,
        options: ListenOptions,
    ) -> Result<BoxStream<'static, Result<CounterSnapshot>>> {
        options.validate()?;
        let document = self.scope().document_name::<T>(self.db(), id)?;
        if self
            .db()
            .get_session_params()
            .consistency_selector
            .is_some()
        {
            return Err(Error::InvalidQuery(
                "a live counter shows the present: listen on a client without a read time or transaction".into(),
            ));
        }
        let listener = CounterListener {
            connection: self.db().client().clone(),
            options,
            silenced: false,
            db: self.db().clone(),
            document,
            collection: field.collection_id(),
            shards: HashMap::new(),
            current: false,
            shown: None,
            unverified: true,
            stream: None,
            failures: 0,
        };
        Ok(crate::until_error::until_error(listener))
    }
}

/// An open Listen stream: the sender that keeps its requests open, and its responses.
type Open = (
    mpsc::UnboundedSender<ListenRequest>,
    tonic::Streaming<ListenResponse>,
);

struct CounterListener {
    /// The connection the stream goes over: the client's own until a silence.
    connection: Connection,
    options: ListenOptions,
    /// The last stream went silent: the next goes over a fresh connection.
    silenced: bool,
    db: FirestoreDb,
    document: String,
    collection: String,
    /// Each shard document's value, by name, as the target holds it now.
    shards: HashMap<String, i64>,
    /// Whether the target has been in sync since it was (re)opened.
    current: bool,
    /// The last value shown.
    shown: Option<i64>,
    /// The target was (re)opened and has not been checked yet: the emulator has marked a
    /// fresh target current without all of its documents (what the live queries check in
    /// `verify.rs`), so its first consistent point is read again at its read time.
    unverified: bool,
    stream: Option<Open>,
    /// Failed connections in a row.
    failures: u32,
}

impl crate::until_error::Source for CounterListener {
    type Item = CounterSnapshot;

    async fn next_item(&mut self) -> Option<Result<CounterSnapshot>> {
        Some(self.next().await)
    }
}

impl CounterListener {
    /// The next value that differs from the last shown.
    async fn next(&mut self) -> Result<CounterSnapshot> {
        loop {
            if self.stream.is_none() {
                self.connect().await?;
            }
            let (_, responses) = self.stream.as_mut().expect("connected");
            let next = responses.next();
            let next = match self.options.idle_timeout {
                Some(idle) => tokio::time::timeout(idle, next).await.ok(),
                None => Some(next.await),
            };
            match next {
                Some(Some(Ok(response))) => {
                    let Some(read_time) = self.receive(response)? else {
                        continue;
                    };
                    if self.unverified {
                        self.read_shards_at(read_time).await?;
                    }
                    let value = super::read::total(self.shards.values().copied(), &self.document)?;
                    if self.shown != Some(value) {
                        self.shown = Some(value);
                        return Ok(CounterSnapshot { value, read_time });
                    }
                }
                Some(Some(Err(status))) => self.failed(status).await?,
                Some(None) => {
                    self.failed(tonic::Status::unavailable("the stream ended"))
                        .await?
                }
                None => {
                    self.silenced = true;
                    self.failed(tonic::Status::deadline_exceeded("the stream was silent"))
                        .await?
                }
            }
        }
    }

    /// Replaces the shard documents with those a read at `read_time` returns, over the
    /// stream's own connection (after a silence, the client's may be the dead one).
    async fn read_shards_at(&mut self, read_time: SystemTime) -> Result<()> {
        use firestore::gcloud_sdk::google::firestore::v1::{RunQueryRequest, run_query_request};
        let request = RunQueryRequest {
            parent: self.document.clone(),
            query_type: Some(run_query_request::QueryType::StructuredQuery(self.query())),
            consistency_selector: Some(run_query_request::ConsistencySelector::ReadTime(
                read_time.into(),
            )),
            ..Default::default()
        };
        let mut answers = self
            .connection
            .get()
            .run_query(request)
            .await
            .map_err(firestore::errors::FirestoreError::from)?
            .into_inner();
        let mut read = HashMap::new();
        while let Some(answer) = answers.next().await {
            let answer = answer.map_err(firestore::errors::FirestoreError::from)?;
            if let Some(shard) = answer.document {
                read.insert(shard.name.clone(), super::read::shard_value(&shard)?);
            }
        }
        if read != self.shards {
            tracing::debug!("sharded: a counter's fresh target was short; read again");
        }
        self.shards = read;
        self.unverified = false;
        Ok(())
    }

    async fn connect(&mut self) -> Result<()> {
        if self.silenced {
            match connection::fresh(&self.db).await {
                Ok(fresh) => {
                    self.connection = fresh;
                    self.silenced = false;
                }
                Err(status) => return self.failed(status).await,
            }
        }
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let _ = sender.send(self.add_target());
        let requests = futures::stream::poll_fn(move |cx| receiver.poll_recv(cx));
        let mut client = self.connection.get();
        let opened = client.listen(tonic::Request::new(requests));
        let opened = match self.options.idle_timeout {
            Some(idle) => tokio::time::timeout(idle, opened).await.ok(),
            None => Some(opened.await),
        };
        let Some(opened) = opened else {
            self.silenced = true;
            return self
                .failed(tonic::Status::deadline_exceeded(
                    "opening the stream was silent",
                ))
                .await;
        };
        match opened {
            Ok(response) => {
                self.stream = Some((sender, response.into_inner()));
                // Every shard document comes again, as the target is new.
                self.shards.clear();
                self.current = false;
                self.unverified = true;
                Ok(())
            }
            Err(status) => self.failed(status).await,
        }
    }

    /// After a failure: wait and go on, or end with it once it is not transient or the
    /// attempts are spent.
    async fn failed(&mut self, status: tonic::Status) -> Result<()> {
        self.stream = None;
        self.failures += 1;
        let spent = self
            .options
            .reconnects
            .is_some_and(|reconnects| self.failures > reconnects);
        if !retries_request(status.code()) || spent {
            return Err(Error::Listen {
                code: StatusCode::from(status.code()),
                message: status.message().to_owned(),
            });
        }
        tracing::debug!(%status, failures = self.failures, "sharded: a counter's listener reconnects");
        let backoff = self.options.backoff();
        tokio::time::sleep(backoff.delay(self.failures, StatusCode::from(status.code()))).await;
        Ok(())
    }

    /// Every shard document of the counter.
    fn query(&self) -> StructuredQuery {
        StructuredQuery {
            from: vec![CollectionSelector {
                collection_id: self.collection.clone(),
                all_descendants: false,
            }],
            ..Default::default()
        }
    }

    fn add_target(&self) -> ListenRequest {
        let query = self.query();
        ListenRequest {
            database: self.db.get_database_path().to_string(),
            target_change: Some(listen_request::TargetChange::AddTarget(Target {
                target_id: TARGET,
                target_type: Some(target::TargetType::Query(target::QueryTarget {
                    parent: self.document.clone(),
                    query_type: Some(target::query_target::QueryType::StructuredQuery(query)),
                })),
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    /// Applies one response; the read time of a consistent point it completes.
    fn receive(&mut self, response: ListenResponse) -> Result<Option<SystemTime>> {
        match response.response_type {
            Some(ResponseType::DocumentChange(change)) => {
                let Some(document) = change.document else {
                    return Ok(None);
                };
                if change.target_ids.contains(&TARGET) {
                    let value = super::read::shard_value(&document)?;
                    self.shards.insert(document.name, value);
                } else if change.removed_target_ids.contains(&TARGET) {
                    self.shards.remove(&document.name);
                }
            }
            Some(ResponseType::DocumentDelete(delete)) => {
                self.shards.remove(&delete.document);
            }
            Some(ResponseType::DocumentRemove(remove)) => {
                self.shards.remove(&remove.document);
            }
            // The server counts otherwise: start over.
            Some(ResponseType::Filter(filter)) if filter.count as usize != self.shards.len() => {
                self.stream = None;
            }
            Some(ResponseType::TargetChange(change)) => {
                let ours = change.target_ids.is_empty() || change.target_ids.contains(&TARGET);
                match TargetChangeType::try_from(change.target_change_type) {
                    Ok(TargetChangeType::Remove) if ours => {
                        let cause = change.cause.unwrap_or_default();
                        return Err(Error::Listen {
                            code: StatusCode::from(tonic::Code::from(cause.code)),
                            message: cause.message,
                        });
                    }
                    Ok(TargetChangeType::Reset) if ours => {
                        self.shards.clear();
                        self.current = false;
                    }
                    Ok(TargetChangeType::Current) if ours => self.current = true,
                    Ok(TargetChangeType::NoChange)
                        if change.target_ids.is_empty() && self.current =>
                    {
                        self.failures = 0;
                        let read_time = change
                            .read_time
                            .map(crate::stored::system_time)
                            .unwrap_or_else(SystemTime::now);
                        return Ok(Some(read_time));
                    }
                    _ => {}
                }
            }
            Some(ResponseType::Filter(_)) | None => {}
        }
        Ok(None)
    }
}
