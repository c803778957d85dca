//! The bulk writer's handle: what callers queue writes through, flush and close.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Write, write::Operation};
use futures::future::BoxFuture;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use super::batcher::{Batcher, Message, Op, Payload};
use super::options::BulkWriterOptions;
use super::outcome::{BulkStats, PendingWrite, Shared};
use crate::error::{Error, Result};
use crate::model::document_id::check_document_id;
use crate::model::handle::{Parent, Scope};
use crate::model::sharded::{Sharded, Subcollection, TopLevel};
use crate::write::firestore_write::{Existing, sharded_write};
use crate::write::increment::Increment;
use crate::write::serialize::serialize;

/// Writes many documents at the rate Firestore's best practices allow, with Google's bulk
/// writers' batching, retries and guarantees.
///
/// # Guarantees
/// Each is proven by a test on the emulator through a proxy that drops connections before
/// and after the server applies a request.
/// - **Order per document:** writes to one document are applied in the order they were
///   queued. A write waits until every earlier write to its document has an outcome,
///   retries included; writes to different documents go out together, in any order. One
///   limit no client can lift: a request whose connection broke may still be applied by the
///   server a moment later (Firestore cannot cancel it), so the writer waits out its backoff
///   (1 s by default) before it sends that document anything again.
/// - **Every outcome reaches the caller:** each write returns a [`PendingWrite`]. Await it
///   for that write's outcome; a failure no handle has yielded is also returned by the next
///   [`flush`](Self::flush) or [`close`](Self::close) ([`Error::BulkWrite`]), so dropping
///   handles, before or after `close`, loses no failure.
/// - **A write that landed is never reported failed:** when an attempt's answer is lost (a
///   dropped connection, a deadline), the write may have been applied. If a later attempt
///   then fails on its precondition (a retried `create` meeting ALREADY_EXISTS from its own
///   first attempt), or the writer is about to give up, it reads the document back: a
///   document that shows the write makes it a success. A failure it cannot settle so says
///   [`WriteFailure::maybe_applied`](super::WriteFailure::maybe_applied).
/// - **Each write succeeds or fails on its own:** one write the server rejects in a way that
///   fails its whole request (an invalid field name, say) does not take its neighbours down:
///   the request's writes are sent again one by one, and only the invalid one fails.
/// - **Drop:** dropping the writer without [`close`](Self::close) stops it at once: nothing
///   more is sent, and every write without an outcome yet resolves to a failure with
///   [`StatusCode::Cancelled`](crate::wire::status::StatusCode::Cancelled) (`maybe_applied`
///   when a request carrying it was in flight). No task outlives the writer.
///
/// # Pacing
/// - **Ramp-up ("500/50/5"):** operations start at 500/s and grow by half every 5 minutes
///   ([`Throttling::ramp`](super::Throttling::ramp)); [`BulkWriterOptions::for_type`] stops
///   the ramp at 500 per shard value, the rate the type's shards were sized for. Throttling
///   can be turned off.
/// - **Batches:** BatchWrite requests of 20 writes and at most 9 MiB (not atomic: each write
///   succeeds or fails on its own), at most 500 operations in flight; beyond that, `upsert`
///   and the other writes wait. A part-full batch goes out after 10 ms, so awaiting one write
///   needs no flush. A counter's [`increment`](Self::increment) is a Commit of its own (its
///   two writes land together), one operation of the ramp.
/// - **Retries:** each write that fails with RESOURCE_EXHAUSTED, ABORTED or UNAVAILABLE (or
///   whose whole request failed, as a dropped connection does) is retried on its own, after
///   1 s × 1.5 per attempt (60 s at most, and after RESOURCE_EXHAUSTED), ±30 % jitter, up to
///   10 attempts.
/// - **Ids:** the writer warns once (a `tracing` warning, and [`BulkStats::sequential_ids`])
///   when the ids it creates keep increasing: sequential ids (`gen-0001`, timestamps)
///   hotspot the document-name index however well the fields are sharded. Use
///   [`insert`](Self::insert), which draws ids as Firestore does.
///
/// Needs a tokio runtime: the batches go out from a task of their own.
#[derive(Debug)]
pub struct BulkWriter {
    messages: mpsc::Sender<Message>,
    shared: Arc<Shared>,
    next_seq: AtomicU64,
    documents_path: String,
    order_stamp: crate::model::order_stamp::OrderStamp,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for BulkWriter {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl BulkWriter {
    /// A writer into `db` with `options`; [`Error::InvalidOptions`] if they are out of range
    /// ([`BulkWriterOptions::validate`]).
    pub fn new(db: &FirestoreDb, options: BulkWriterOptions) -> Result<BulkWriter> {
        options.validate()?;
        let shared = Arc::new(Shared::default());
        let (messages, receiver) = mpsc::channel(options.batch_size);
        let order_stamp = options.order_stamp;
        let task = tokio::spawn(Batcher::new(db.clone(), options, shared.clone(), receiver).run());
        Ok(BulkWriter {
            messages,
            shared,
            next_seq: AtomicU64::new(0),
            documents_path: db.get_documents_path().clone(),
            order_stamp,
            task: Some(task),
        })
    }

    // The writes of top-level types return a boxed future rather than being `async fn`s: a
    // subcollection type then fails the `TopLevel` bound once, on the call, instead of three
    // times over (the fn, its future and its output).

    /// Creates or replaces the sharded document `id`, its shard drawn as on every write path.
    /// The id and the document are checked now; on an error nothing is queued. For a
    /// top-level type; a subcollection type's document is written through
    /// [`in_parent`](Self::in_parent) (without it, this does not compile).
    pub fn upsert<'w, T: TopLevel>(
        &'w self,
        id: &'w str,
        document: &'w T,
    ) -> BoxFuture<'w, Result<PendingWrite>> {
        Box::pin(async move {
            self.write_sharded(&Scope::Top, id, document, Existing::Any)
                .await
        })
    }

    /// Creates the sharded document `id`; fails (in its [`PendingWrite`]) with ALREADY_EXISTS
    /// if it exists.
    pub fn create<'w, T: TopLevel>(
        &'w self,
        id: &'w str,
        document: &'w T,
    ) -> BoxFuture<'w, Result<PendingWrite>> {
        Box::pin(async move {
            self.write_sharded(&Scope::Top, id, document, Existing::Absent)
                .await
        })
    }

    /// Replaces the existing sharded document `id`, its shard drawn anew; fails (in its
    /// [`PendingWrite`]) with NOT_FOUND if it does not exist.
    pub fn update<'w, T: TopLevel>(
        &'w self,
        id: &'w str,
        document: &'w T,
    ) -> BoxFuture<'w, Result<PendingWrite>> {
        Box::pin(async move {
            self.write_sharded(&Scope::Top, id, document, Existing::Present)
                .await
        })
    }

    /// A whole sharded document under `id`, checked and with its shard drawn, queued.
    async fn write_sharded<T: Sharded>(
        &self,
        scope: &Scope,
        id: &str,
        document: &T,
        existing: Existing,
    ) -> Result<PendingWrite> {
        let name = scope.document_name_in::<T>(&self.documents_path, id)?;
        let document = serialize(document, &name)?;
        self.note_created(id);
        self.queue(sharded_write::<T>(
            document,
            None,
            existing,
            self.order_stamp,
        )?)
        .await
    }

    /// Creates a sharded document under a new random id, drawn as Firestore's own clients
    /// draw them (20 letters and digits), which spread over the document-name index. Returns
    /// the id. Fails (in its [`PendingWrite`]) if the id exists, which is as likely as
    /// guessing 119 random bits.
    pub fn insert<'w, T: TopLevel>(
        &'w self,
        document: &'w T,
    ) -> BoxFuture<'w, Result<(String, PendingWrite)>> {
        Box::pin(async move { self.insert_sharded(&Scope::Top, document).await })
    }

    async fn insert_sharded<T: Sharded>(
        &self,
        scope: &Scope,
        document: &T,
    ) -> Result<(String, PendingWrite)> {
        let id = crate::model::document_id::generate_document_id();
        let name = scope.document_name_in::<T>(&self.documents_path, &id)?;
        let document = serialize(document, &name)?;
        let pending = self
            .queue(sharded_write::<T>(
                document,
                None,
                Existing::Absent,
                self.order_stamp,
            )?)
            .await?;
        Ok((id, pending))
    }

    /// Deletes the sharded document `id`; deleting a missing document succeeds.
    pub fn delete<'w, T: TopLevel>(&'w self, id: &'w str) -> BoxFuture<'w, Result<PendingWrite>> {
        Box::pin(async move { self.delete_sharded::<T>(&Scope::Top, id).await })
    }

    async fn delete_sharded<T: Sharded>(&self, scope: &Scope, id: &str) -> Result<PendingWrite> {
        let name = scope.document_name_in::<T>(&self.documents_path, id)?;
        self.queue(Write {
            operation: Some(Operation::Delete(name)),
            ..Write::default()
        })
        .await
    }

    /// Applies `increment` to the counter of the document `id` exactly once, at the writer's
    /// pace and with its retries (a counter declared `#[sharded(counter(...))]`): the same
    /// two writes as [`ShardedCollection::apply`](crate::model::handle::ShardedCollection::apply), the
    /// increment's marker and its shard's addition, committed together in a Commit of their
    /// own (a BatchWrite would apply them one by one). An attempt refused because the marker
    /// exists had landed before, so it succeeds; a failure that may have been applied is
    /// settled by reading the marker back. Applying the same `Increment` again, here or
    /// through any other path, counts nothing more (within
    /// [`MARKER_LIFETIME`](crate::write::increment::MARKER_LIFETIME)).
    ///
    /// Its [`PendingWrite`]'s document, and a failure's, is the increment's marker
    /// (`<document>/_sharded_increments/<increment id>`). Increments to one document go out
    /// side by side, not one after another. Each is one operation of the ramp.
    pub fn increment<'w, T: TopLevel>(
        &'w self,
        id: &'w str,
        increment: &'w Increment<T>,
    ) -> BoxFuture<'w, Result<PendingWrite>> {
        Box::pin(async move { self.increment_in(&Scope::Top, id, increment).await })
    }

    async fn increment_in<T: Sharded>(
        &self,
        scope: &Scope,
        id: &str,
        increment: &Increment<T>,
    ) -> Result<PendingWrite> {
        let document = scope.document_name_in::<T>(&self.documents_path, id)?;
        let placed = increment.placed(document)?;
        self.enqueue(placed.marker_name(), Payload::Increment(placed))
            .await
    }

    /// Creates or replaces a plain (unsharded) document `collection/id`.
    pub async fn set<S: Serialize + Sync>(
        &self,
        collection: &str,
        id: &str,
        document: &S,
    ) -> Result<PendingWrite> {
        check_document_id(id)?;
        let name = self.document_name(collection, id);
        let document = firestore::firestore_document_from_serializable(&name, document)?;
        self.note_created(id);
        self.queue(Write {
            operation: Some(Operation::Update(document)),
            ..Write::default()
        })
        .await
    }

    /// Queues `write` as it is (the backfill and rebalance jobs queue masked writes);
    /// [`Error::InvalidFieldName`] for a field Firestore would refuse, with nothing queued.
    pub(crate) async fn queue(&self, write: Write) -> Result<PendingWrite> {
        let document = match &write.operation {
            Some(Operation::Update(document)) => {
                super::field_names::check(&document.fields)?;
                document.name.clone()
            }
            Some(Operation::Delete(name)) => name.clone(),
            _ => String::new(),
        };
        self.enqueue(document, Payload::Write(write)).await
    }

    /// Hands `payload`, ordered and read back by `document`, to the writer's task.
    async fn enqueue(&self, document: String, payload: Payload) -> Result<PendingWrite> {
        let (reply, outcome) = oneshot::channel();
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        let op = Op::new(document.clone(), payload, seq, reply);
        self.messages
            .send(Message::Write(Box::new(op)))
            .await
            .map_err(|_| Error::BulkWriterStopped)?;
        Ok(PendingWrite {
            document,
            seq,
            shared: self.shared.clone(),
            outcome,
        })
    }

    /// Waits until every write queued before this call has an outcome (writes queued while
    /// it waits, from other tasks, do not hold it up). Errs with each of those writes'
    /// failures that no [`PendingWrite`] has yielded yet.
    pub async fn flush(&self) -> Result<BulkStats> {
        let (done, flushed) = oneshot::channel();
        self.messages
            .send(Message::Flush(done))
            .await
            .map_err(|_| Error::BulkWriterStopped)?;
        let mark = flushed.await.map_err(|_| Error::BulkWriterStopped)?;
        let failures = self.shared.take_unclaimed(mark);
        if failures.is_empty() {
            Ok(self.stats())
        } else {
            Err(Error::BulkWrite { failures })
        }
    }

    /// [`flush`](Self::flush), then stops the writer; its task has ended when this returns.
    pub async fn close(mut self) -> Result<BulkStats> {
        let flushed = self.flush().await;
        let task = self.task.take();
        drop(self);
        if let Some(task) = task {
            task.await.map_err(|_| Error::BulkWriterStopped)?;
        }
        flushed
    }

    /// What the writer has done so far.
    pub fn stats(&self) -> BulkStats {
        self.shared.stats().clone()
    }

    /// The writes of a subcollection type's documents under `parent`: the same writes, with
    /// the same guarantees, as the top-level ones (which refuse a subcollection type with
    /// [`Error::InvalidParent`] before queuing).
    pub fn in_parent<'w, T: Subcollection>(&'w self, parent: &Parent<T>) -> BulkWriterIn<'w, T> {
        BulkWriterIn {
            writer: self,
            scope: Scope::under(parent),
            marker: std::marker::PhantomData,
        }
    }

    fn document_name(&self, collection: &str, id: &str) -> String {
        crate::model::document_path::document_name(&self.documents_path, None, collection, id)
    }

    fn note_created(&self, id: &str) {
        let run = self.shared.ids.lock().expect("ids lock").note(id);
        if let Some(run) = run {
            self.shared.stats().sequential_ids = true;
            tracing::warn!(
                ids = %run,
                "sharded: the last {} document ids written increase monotonically ({run}). \
                 Sequential ids hotspot the document-name index however the fields are sharded \
                 (Firestore best practices: avoid monotonically increasing document IDs); \
                 use `BulkWriter::insert` or random ids",
                super::sequential_ids::RUN,
            );
        }
    }
}

/// A [`BulkWriter`]'s writes under one parent document, for a subcollection type `T`
/// ([`BulkWriter::in_parent`]); each is the top-level write of the same name.
#[derive(Debug)]
pub struct BulkWriterIn<'w, T> {
    writer: &'w BulkWriter,
    scope: Scope,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T: Subcollection> BulkWriterIn<'_, T> {
    /// [`BulkWriter::upsert`] under the parent.
    pub async fn upsert(&self, id: &str, document: &T) -> Result<PendingWrite> {
        self.writer
            .write_sharded(&self.scope, id, document, Existing::Any)
            .await
    }

    /// [`BulkWriter::create`] under the parent.
    pub async fn create(&self, id: &str, document: &T) -> Result<PendingWrite> {
        let absent = Existing::Absent;
        self.writer
            .write_sharded(&self.scope, id, document, absent)
            .await
    }

    /// [`BulkWriter::update`] under the parent.
    pub async fn update(&self, id: &str, document: &T) -> Result<PendingWrite> {
        let present = Existing::Present;
        self.writer
            .write_sharded(&self.scope, id, document, present)
            .await
    }

    /// [`BulkWriter::insert`] under the parent.
    pub async fn insert(&self, document: &T) -> Result<(String, PendingWrite)> {
        self.writer.insert_sharded(&self.scope, document).await
    }

    /// [`BulkWriter::delete`] under the parent.
    pub async fn delete(&self, id: &str) -> Result<PendingWrite> {
        self.writer.delete_sharded::<T>(&self.scope, id).await
    }

    /// [`BulkWriter::increment`] under the parent.
    pub async fn increment(&self, id: &str, increment: &Increment<T>) -> Result<PendingWrite> {
        self.writer.increment_in(&self.scope, id, increment).await
    }
}
