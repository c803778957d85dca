use firestore::errors::FirestoreError;

/// What can go wrong in a sharded write or query.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Firestore, or the connection to it, failed. In a fanned-out query this fails the whole
    /// query: no partial result is returned.
    #[error("firestore: {0}")]
    Firestore(#[from] FirestoreError),
    /// A stored document lacks a field sharded relies on (it was not written through sharded).
    #[error("document `{document}` has no `{field}` field; was it written without sharded?")]
    MissingField {
        /// The document's full name.
        document: String,
        /// The stored field it lacks.
        field: String,
    },
    /// A cursor that cannot be used with this query; nothing was sent.
    #[error("invalid cursor: {0}")]
    InvalidCursor(String),
    /// A document id Firestore would reject or misplace; nothing was sent.
    #[error("invalid document id `{id}`: {reason}")]
    InvalidDocumentId {
        /// The id given.
        id: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// A document to write lacks a field that sharded queries filter or order on, so it would
    /// silently drop out of them (a `#[serde(into)]`, a hand-written `Serialize`, or a stored
    /// name other than the one the derive read); nothing was sent.
    #[error(
        "the document to write has no `{path}`, which sharded queries filter or order on; it would drop out of them"
    )]
    FieldNotWritten {
        /// The stored field path it lacks.
        path: &'static str,
    },
    /// An update that would write nothing or lose data; nothing was sent.
    #[error("invalid update: {0}")]
    InvalidUpdate(String),
    /// Bulk writes that failed and whose [`PendingWrite`](crate::write::bulk::PendingWrite) no one
    /// awaited: each with its document and last status.
    #[error("{} bulk write(s) failed{}", failures.len(), first_failure(failures))]
    BulkWrite {
        /// Every unclaimed failure.
        failures: Vec<crate::write::bulk::WriteFailure>,
    },
    /// Options a bulk writer (or a job's) cannot run with; nothing was started.
    #[error("invalid option `{option}`: expected {expected}")]
    InvalidOptions {
        /// The option, as its field is named.
        option: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A document to write has a field Firestore refuses, or a top-level field of the shard
    /// field's name (a key of a flattened map), which sharded writes itself; nothing was sent.
    #[error("invalid field name `{field}`: {reason}")]
    InvalidFieldName {
        /// The field's name.
        field: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The bulk writer's task ended (it panicked, or its runtime shut down) with writes
    /// queued; what they became is unknown.
    #[error("the bulk writer stopped with writes queued")]
    BulkWriterStopped,
    /// A live query's Listen stream failed: the server removed a target (a missing index, a
    /// permission), or connections kept failing. It ends the snapshot stream.
    #[error("listen: {code:?}: {message}")]
    Listen {
        /// The status code.
        code: crate::wire::status::StatusCode,
        /// The server's message.
        message: String,
    },
    /// A rebalance of a type whose `previous(since = ...)` is still to come: until then writes
    /// may not use its new shard values (readers of the type before the change do not read
    /// them), so there is nothing to move documents to. Nothing was sent.
    #[error("the resharding starts at {since:?}; run the job after that")]
    ReshardingNotStarted {
        /// The declared `since`.
        since: std::time::SystemTime,
    },
    /// A rebalance kept finding documents with retired shard values after its scan: a
    /// process still running the type before the change keeps writing them. Deploy the new
    /// type everywhere, then run the job again.
    #[error(
        "`{collection}`: documents with retired shard values keep being written ({swept} fixed after the scan); is a process still running the type before the change?"
    )]
    RetiredValuesStillWritten {
        /// The collection.
        collection: &'static str,
        /// Documents fixed after the scan before the job gave up.
        swept: u64,
    },
    /// A read of a type that declares `retired(...)` found a document still holding a retired
    /// shard value: queries read the current values only, so it would be missing from their
    /// results. Run [`rebalance()`](crate::model::handle::ShardedCollection::rebalance) (with this type,
    /// which moves retired values too) until [`verify()`](crate::model::handle::ShardedCollection::verify)
    /// reports none retired, or declare the values `previous(...)` again. Nothing else was
    /// read.
    #[error(
        "`{collection}`: document `{document}` still holds the retired shard value {value:?}, which queries no longer read; run `rebalance()` before reading with this type, or declare the value in `previous(...)` again"
    )]
    NotRebalanced {
        /// The collection.
        collection: &'static str,
        /// The full name of one such document.
        document: String,
        /// Its shard value.
        value: String,
    },
    /// A subcollection's call without its parent, a parent of the wrong shape, or a
    /// collection-group query the type did not declare; nothing was sent.
    #[error("parent: {0}")]
    InvalidParent(String),

    /// A [`ListenCheckpoint`](crate::query::ListenCheckpoint) that is not one, or is another query's.
    #[error("invalid listen checkpoint: {0}")]
    InvalidCheckpoint(String),

    /// A query Firestore would reject; nothing was sent.
    #[error("invalid query: {0}")]
    InvalidQuery(String),

    /// Firestore answered a request without what every answer to it holds (a count without
    /// its value, a page without its read time): the call fails rather than guess.
    #[error("unexpected answer from Firestore: {0}")]
    UnexpectedAnswer(String),

    /// A counter's increment whose every attempt ended without an answer: it may have been
    /// applied. Applying the same [`Increment`](crate::write::increment::Increment) again counts it
    /// once either way; [`was_applied`](crate::model::handle::ShardedCollection::was_applied) says which.
    #[error(
        "increment `{increment}` of `{document}` is unsettled (it may have been applied; apply the same Increment again, which counts it once): {cause}"
    )]
    IncrementUnsettled {
        /// The increment's id.
        increment: String,
        /// The counted document's full name.
        document: String,
        /// The last attempt's failure.
        cause: Box<FirestoreError>,
    },

    /// An increment whose id was applied to the document with another counter or amount:
    /// an id names one increment, bound to what it adds. Nothing was written.
    #[error(
        "increment `{increment}` of `{document}` was applied as {recorded}; it cannot be {attempted} under the same id (nothing was written)"
    )]
    IncrementConflict {
        /// The increment's id.
        increment: String,
        /// The counted document's full name.
        document: String,
        /// What the id's marker records: `` `likes` +5 ``.
        recorded: String,
        /// What this increment adds, written the same way.
        attempted: String,
    },

    /// A commit holding an increment that another commit applied before (a new atomic batch
    /// holding an increment that landed alone, or in another batch): nothing of this commit
    /// was applied. Send its other writes without that increment, which counted once.
    #[error(
        "increment `{increment}` of `{document}` was applied by another commit; nothing of this one was (send it again without that increment)"
    )]
    IncrementAlreadyApplied {
        /// The increment's id.
        increment: String,
        /// The counted document's full name.
        document: String,
    },

    /// An increment that Firestore's integers could not take on its shard document: the
    /// shard's value would have passed `i64::MAX` (or `i64::MIN`), where Firestore's
    /// `increment` stops without an error. It was undone and counts nothing (the other writes
    /// of an atomic batch that held it landed); applied again, it draws a shard again.
    #[error(
        "increment `{increment}` of `{document}` would pass the end of Firestore's integers on shard {shard} of the counter `{field}`; it was undone and counts nothing"
    )]
    CounterSaturated {
        /// The increment's id.
        increment: String,
        /// The counted document's full name.
        document: String,
        /// The counter's stored field path.
        field: String,
        /// The shard document its addition went to.
        shard: u32,
    },

    /// An increment Firestore cut at the end of its integers (as for
    /// [`CounterSaturated`](Error::CounterSaturated)) whose undo failed: `added`, the part
    /// of it that was added before the cut, stays on its shard with the increment's marker,
    /// so the counter holds it and [`was_applied`](crate::model::handle::ShardedCollection::was_applied)
    /// says `true`. Applying the same [`Increment`](crate::write::increment::Increment) again finds it
    /// landed and undoes it (within the marker's lifetime).
    #[error(
        "increment `{increment}` of `{document}` was cut at the end of Firestore's integers on shard {shard} of the counter `{field}`, and undoing it failed: {added:+} of it stays counted until the same increment is applied again ({cause})"
    )]
    CounterUndoFailed {
        /// The increment's id.
        increment: String,
        /// The counted document's full name.
        document: String,
        /// The counter's stored field path.
        field: String,
        /// The shard document its addition went to.
        shard: u32,
        /// What it added before the cut, which stays.
        added: i64,
        /// Why the undo failed.
        cause: Box<FirestoreError>,
    },

    /// A batch get answered without a result for an id it was asked for: the call fails
    /// rather than return a result that leaves the id out.
    #[error("`{collection}`: Firestore answered nothing for the id `{id}`")]
    IncompleteGet {
        /// The collection id.
        collection: &'static str,
        /// The id left unanswered.
        id: String,
    },

    /// Another attempt of this part of a tracked job took it over (its lease was held for
    /// longer than [`lease_timeout`](crate::job::tracked::TrackedPart::lease_timeout) without a heartbeat
    /// from this one); this attempt stopped, and the other goes on from the checkpoint.
    #[error(
        "job `{job}`, part {part}: another attempt took the part over after this one's heartbeat stopped for longer than the lease; this one stopped"
    )]
    JobLeaseLost {
        /// The job's id.
        job: String,
        /// The part's index.
        part: u32,
    },

    /// A stream read for longer than Firestore keeps its read time readable: an hour.
    /// (Point-in-time recovery keeps seven days, but of whole-minute read times only, which
    /// a stream's is not.) Nothing was skipped: `resume_after` is the token of the cursor
    /// after the last document the stream yielded (its query's own start when it yielded
    /// none, `None` for no cursor): open a new stream from it,
    /// `query.after(token.parse::<CursorOf<Query>>()?)`, at a new read time.
    #[error(
        "the stream outlived its read time (Firestore keeps one readable for an hour); resume after the cursor in this error"
    )]
    ReadTimeExpired {
        /// The token of the cursor to resume after.
        resume_after: Option<String>,
    },

    /// A tracked job's state document holds what no task writes (a negative, infinite or
    /// NaN duration or rate): edited by hand, or by another program. Nothing was written.
    #[error("the job state document `{document}` is corrupt: {reason}")]
    JobStateCorrupt {
        /// The document's full name.
        document: String,
        /// What is wrong with it.
        reason: String,
    },

    /// No tracked job of this id was started in the state collection.
    #[error("no job `{job}` in `{collection}`")]
    NoSuchJob {
        /// The job's id.
        job: String,
        /// The state collection looked in.
        collection: String,
    },

    /// The job's stored state does not match this run's: another number of parts, another
    /// collection, or a part index out of range; nothing was written.
    #[error("job `{job}`: {reason}")]
    JobMismatch {
        /// The job's id.
        job: String,
        /// What differs.
        reason: String,
    },
    /// A call to a database in Datastore mode failed ([`datastore`](crate::datastore)).
    #[error("datastore: {code:?}: {message}")]
    Datastore {
        /// The status code.
        code: crate::wire::status::StatusCode,
        /// The server's message.
        message: String,
    },
    /// An entity whose indexed property holds a string or blob longer than Datastore indexes
    /// (1,500 bytes): a property some query reads stays indexed, and Datastore refuses the
    /// whole commit it is in. Nothing was sent.
    #[error(
        "entity `{entity}`: `{property}` holds {bytes} bytes, more than the 1,500 Datastore indexes; a query reads it, so it stays indexed (shorten the value, or read it in no query)"
    )]
    TooLongToIndex {
        /// The entity's key, as a document path below the root (`Reading/r1`).
        entity: String,
        /// The property's path (`tags`, `price.currency`).
        property: String,
        /// The value's length in bytes.
        bytes: usize,
    },
}

/// `Result` with sharded's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn first_failure(failures: &[crate::write::bulk::WriteFailure]) -> String {
    failures
        .first()
        .map(|failure| format!("; the first: {failure}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bulk_error_prints_with_or_without_failures() {
        assert_eq!(
            Error::BulkWrite { failures: vec![] }.to_string(),
            "0 bulk write(s) failed"
        );
        let failure = crate::write::bulk::WriteFailure {
            document: "d".into(),
            code: crate::wire::status::StatusCode::Aborted,
            message: "m".into(),
            attempts: 2,
            maybe_applied: false,
        };
        assert_eq!(
            Error::BulkWrite {
                failures: vec![failure]
            }
            .to_string(),
            "1 bulk write(s) failed; the first: write of `d` failed after 2 attempt(s): Aborted: m"
        );
    }
}
