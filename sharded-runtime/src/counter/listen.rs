//! A counter's live value: one Listen target over its shard documents, which says when the
//! value may have changed, and at each point the server then marks consistent (a target-less
//! `NO_CHANGE` with a read time, once the target is `CURRENT`) the value read at that read
//! time, one sum aggregation, once [`SETTLE`] has passed. The stream's own documents are not
//! added up: with several writers the emulator marks points consistent before it has sent
//! every commit at or before them (measured: `server_listen_consistency.rs`), so a sum of
//! what it sent can be lower than the value at its read time. A dropped stream is opened
//! again (its first point read the same way); a silent stream is given up after
//! [`ListenOptions::idle_timeout`] and opened over a fresh connection, as a live query's is.
//! Transient failures, of the stream or of a read, go through the same reconnections.

use std::collections::VecDeque;
use std::time::SystemTime;

use firestore::FirestoreDb;
use firestore::errors::FirestoreError;
use firestore::gcloud_sdk::google::firestore::v1::listen_response::ResponseType;
use firestore::gcloud_sdk::google::firestore::v1::structured_aggregation_query::{
    self, Aggregation, aggregation,
};
use firestore::gcloud_sdk::google::firestore::v1::structured_query::FieldReference;
use firestore::gcloud_sdk::google::firestore::v1::target_change::TargetChangeType;
use firestore::gcloud_sdk::google::firestore::v1::{
    ListenRequest, ListenResponse, RunAggregationQueryRequest, StructuredAggregationQuery,
    StructuredQuery, Target, listen_request, run_aggregation_query_request, target,
};
use firestore::gcloud_sdk::tonic;
use futures::TryStreamExt as _;
use futures::stream::{BoxStream, StreamExt as _};
use tokio::sync::mpsc;

use crate::error::{Error, Result};
use crate::model::counter_field::{CounterField, SHARD_VALUE_FIELD, integer};
use crate::model::handle::ShardedCollection;
use crate::model::sharded::Sharded;
use crate::query::ListenOptions;
use crate::query::listen::connection::{self, Connection};
use crate::wire::retry::retries_request;
use crate::wire::status::StatusCode;

/// The one target of a counter's Listen stream.
const TARGET: i32 = 1;

/// How long after a consistent point arrives its value is read. A commit is given its time
/// before it is applied: on the emulator, the answer to a commit came up to about 100 ms
/// after its commit time with 16 writers at once (`server_listen_consistency.rs`); under the
/// whole test suite's load, a read made at once was short of a commit at or before it that a
/// later read at the same time held, and with reads 250 ms after their point CI once failed
/// `a_live_counter_goes_on_through_a_proxy_that_drops_chunks` where it checks each value at
/// its read time; so points are given a second. Firestore's own reads at a time wait for
/// every commit before it; here, values lag their changes by this much.
pub(crate) const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// The least time between two reads, so between two values: a counter changing faster shows
/// at most four values a second, each the newest settled point's (the points between are
/// passed over, and the last change is always shown).
pub(crate) const SPACING: std::time::Duration = std::time::Duration::from_millis(250);

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
    /// time it changes, each the value at a read time the server marked consistent (so never
    /// a sum of two moments, nor one short of a commit before it).
    ///
    /// The emission rule: a value comes a second after the consistent point it
    /// is read at, and at least 250 ms after the value before it, so at most four a second
    /// however fast the counter changes; points that come faster are passed over for the
    /// newest, and the value after the last change always comes. A value equal to the last
    /// shown is not repeated.
    /// [`listen_counter_with`](Self::listen_counter_with) with the default [`ListenOptions`].
    ///
    /// Firestore bills a listener a read per document sent: each shard document once, then
    /// each changed one; and each value is read at its read time by one sum aggregation
    /// (one read), since the stream's documents alone were seen short of it.
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
    /// for `idle_timeout`, or a read of its value unanswered that long, over a fresh
    /// connection. Without an `idle_timeout`, a connection that dies without closing is
    /// noticed only by gRPC's keepalive (about two minutes). The options are checked first
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
            current: false,
            changed: true,
            points: VecDeque::new(),
            shown: None,
            next_read: tokio::time::Instant::now(),
            stream: None,
            failures: 0,
        };
        Ok(crate::wire::until_error::until_error(listener))
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
    /// Whether the target has been in sync since it was (re)opened.
    current: bool,
    /// A shard document changed (or the target was opened) since the last point kept: the
    /// next consistent point is kept, to be read.
    changed: bool,
    /// Consistent points to read, with when each arrived, oldest first: each is read once
    /// [`SETTLE`] has passed since it arrived, the newest of those settled.
    points: VecDeque<(SystemTime, tokio::time::Instant)>,
    /// The last value shown.
    shown: Option<i64>,
    /// The earliest the next read may be: [`SPACING`] after the last.
    next_read: tokio::time::Instant,
    stream: Option<Open>,
    /// Failed connections in a row.
    failures: u32,
}

impl crate::wire::until_error::Source for CounterListener {
    type Item = CounterSnapshot;

    async fn next_item(&mut self) -> Option<Result<CounterSnapshot>> {
        Some(self.next().await)
    }
}

impl CounterListener {
    /// The next value that differs from the last shown.
    async fn next(&mut self) -> Result<CounterSnapshot> {
        loop {
            // A failed connection leaves no stream: connect again (after its backoff) until
            // one opens or the failures end the stream.
            let Some((_, responses)) = self.stream.as_mut() else {
                self.connect().await?;
                continue;
            };
            // Wait for the stream, but no longer than until the oldest point waiting is
            // settled (and the last read is SPACING old), nor than the idle timeout.
            let settled_at = self
                .points
                .front()
                .map(|(_, arrived)| (*arrived + SETTLE).max(self.next_read));
            let idle = self
                .options
                .idle_timeout
                .map(|idle| tokio::time::Instant::now() + idle);
            let wake = settled_at.into_iter().chain(idle).min();
            let next = responses.next();
            let next = match wake {
                Some(wake) => tokio::time::timeout_at(wake, next).await.ok(),
                None => Some(next.await),
            };
            match next {
                Some(Some(Ok(response))) => {
                    if let Some(read_time) = self.receive(response)?
                        && std::mem::take(&mut self.changed)
                    {
                        self.points
                            .push_back((read_time, tokio::time::Instant::now()));
                    }
                }
                Some(Some(Err(status))) => self.failed(status).await?,
                Some(None) => {
                    self.failed(tonic::Status::unavailable("the stream ended"))
                        .await?
                }
                None if settled_at.is_some_and(|at| at <= tokio::time::Instant::now()) => {
                    // The newest point that has settled; older ones are passed over.
                    let now = tokio::time::Instant::now();
                    let mut read_time = None;
                    while let Some(&(time, arrived)) = self.points.front()
                        && arrived + SETTLE <= now
                    {
                        read_time = Some(time);
                        self.points.pop_front();
                    }
                    let Some(read_time) = read_time else { continue };
                    let value = self.sum_at(read_time).await;
                    self.next_read = tokio::time::Instant::now() + SPACING;
                    let value = match value {
                        Ok(value) => value,
                        Err(status) if retries_request(status.code()) => {
                            // A read unanswered for the idle timeout: the connection is
                            // silent, and the stream goes over a fresh one.
                            self.silenced |= connection::is_silence(&status);
                            self.failed(status).await?;
                            continue;
                        }
                        Err(status) => return Err(FirestoreError::from(status).into()),
                    };
                    if self.shown != Some(value) {
                        self.shown = Some(value);
                        return Ok(CounterSnapshot { value, read_time });
                    }
                }
                None => {
                    self.silenced = true;
                    self.failed(tonic::Status::deadline_exceeded("the stream was silent"))
                        .await?
                }
            }
        }
    }

    /// The counter's value at `read_time`: a sum aggregation over the shard documents, over
    /// the stream's own connection (after a silence, the client's may be the dead one),
    /// retried after transient failures as the listener reconnects, each attempt given the
    /// idle timeout ([`connection::retried`]).
    async fn sum_at(&self, read_time: SystemTime) -> std::result::Result<i64, tonic::Status> {
        let request = RunAggregationQueryRequest {
            parent: self.document.clone(),
            query_type: Some(
                run_aggregation_query_request::QueryType::StructuredAggregationQuery(
                    StructuredAggregationQuery {
                        aggregations: vec![Aggregation {
                            alias: "sum".to_owned(),
                            operator: Some(aggregation::Operator::Sum(aggregation::Sum {
                                field: Some(FieldReference {
                                    field_path: SHARD_VALUE_FIELD.to_owned(),
                                }),
                            })),
                        }],
                        query_type: Some(structured_aggregation_query::QueryType::StructuredQuery(
                            self.query(),
                        )),
                    },
                ),
            ),
            consistency_selector: Some(
                run_aggregation_query_request::ConsistencySelector::ReadTime(read_time.into()),
            ),
            ..Default::default()
        };
        let backoff = crate::wire::retry::Backoff {
            max_attempts: crate::query::listen::CHECK_ATTEMPTS,
            ..self.options.backoff()
        };
        let answers = connection::retried(backoff, self.options.idle_timeout, || async {
            let responses: Vec<_> = self
                .connection
                .get()
                .run_aggregation_query(tonic::Request::new(request.clone()))
                .await?
                .into_inner()
                .try_collect()
                .await?;
            Ok(responses)
        })
        .await?;
        let sum = answers
            .iter()
            .filter_map(|answer| answer.result.as_ref())
            .find_map(|result| result.aggregate_fields.get("sum"))
            .ok_or_else(|| tonic::Status::internal("a sum aggregation answered without its sum"))?;
        integer(sum.value_type.as_ref(), &self.document)
            .map_err(|err| tonic::Status::out_of_range(err.to_string()))
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
                // Every shard document comes again, as the target is new, and its first
                // consistent point is read.
                self.current = false;
                self.changed = true;
                Ok(())
            }
            Err(status) => self.failed(status).await,
        }
    }

    /// After a failure: wait and go on, or end with it once it is not transient or the
    /// attempts are spent.
    async fn failed(&mut self, status: tonic::Status) -> Result<()> {
        self.stream = None;
        self.points.clear();
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
        super::shard_documents_query(self.collection.clone())
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
            Some(
                ResponseType::DocumentChange(_)
                | ResponseType::DocumentDelete(_)
                | ResponseType::DocumentRemove(_)
                | ResponseType::Filter(_),
            ) => self.changed = true,
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
                        self.current = false;
                        self.changed = true;
                    }
                    Ok(TargetChangeType::Current) if ours => self.current = true,
                    Ok(TargetChangeType::NoChange)
                        if change.target_ids.is_empty() && self.current =>
                    {
                        self.failures = 0;
                        let read_time = change
                            .read_time
                            .map(crate::wire::server_clock::system_time)
                            .unwrap_or_else(SystemTime::now);
                        return Ok(Some(read_time));
                    }
                    _ => {}
                }
            }
            None => {}
        }
        Ok(None)
    }
}
