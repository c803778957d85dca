#![doc = include_str!("../README.md")]
#![warn(missing_docs, missing_debug_implementations)]

// One folder per purpose, each `mod.rs` saying what it is for. The floors: `wire` imports no
// room, `model` only the wire; `write` and `query` import those two, not each other;
// `counter`, `job` (feature `jobs`) and `datastore` (feature `datastore`) sit above.
#[macro_use]
mod wire;
mod counter;
#[cfg(feature = "datastore")]
pub mod datastore;
mod error;
pub mod guide;
#[cfg(feature = "jobs")]
mod job;
mod model;
mod query;
mod write;

pub use model::reshard;
pub use write::bulk;

// The crate root holds what users write and name; the rest is in a module by what it is for.
pub use error::{Error, Result};
pub use model::handle::{InTransaction, Parent, ShardedCollection};
pub use model::sharded::Sharded;
pub use model::stored::Stored;
pub use model::stored_names::StoredNames;
pub use query::{
    Cursor, CursorOf, InGroup, Page, PageOf, QueryPlan, ShardedQuery, WholeCollection,
    WholeCollectionReversed,
};
pub use sharded_derive::Sharded;
pub use sharded_derive::StoredNames;
pub use write::atomic::AtomicBatch;

/// What a query is built from and reads besides the query itself: the typed fields it sums
/// and filters, its reach and window (in its type), what a read returns (`Number`, `Many`,
/// `QueryStats`, `Decoded`, `Undecodable`), and what orders a field (`OrderKey`).
pub mod reads {
    pub use crate::model::order_key::{OrderBound, OrderKey};
    pub use crate::model::stored::{Decoded, Undecodable};
    pub use crate::query::get_many::Many;
    pub use crate::query::{
        Aggregation, Aggregations, Avg, Count, CursorArgument, DynamicOr, ExplainedChunk,
        ExplainedQuery, InCollection, Neighbor, Number, NumericField, Or, Queries, QueryStats,
        RangeField, RangeFilter, Reversed, Sum, VectorField, WHOLE_COLLECTION, Whole, Windowed,
        avg, count, query_id, sum,
    };
}

/// What writes take and return besides the document: the fields an update writes, typed
/// transforms (`Transform`), a server-filled order field, transactions' errors, a batch under
/// a parent.
pub mod writes {
    pub use crate::model::document_id::check_document_id;
    pub use crate::model::fields::Field;
    pub use crate::model::order_stamp::OrderStamp;
    pub use crate::wire::status::StatusCode;
    pub use crate::write::atomic::{AtomicBatchIn, TransactionError, transaction_error};
    pub use crate::write::firestore_write::Written;
    pub use crate::write::transform::{ServerTime, Transform, TypedField};
}

/// Distributed counters (`#[sharded(counter(shards = n))]`): a counter field's type
/// (`T::counters().likes`), an increment that counts once, and where their documents live.
/// See the README's "Counters".
pub mod counters {
    pub use crate::counter::{CounterSnapshot, Folded, MIN_FOLD_PERIOD};
    pub use crate::model::counter_field::{
        COUNTER_COLLECTION_PREFIX, CounterField, INCREMENTS_COLLECTION, MARKER_AMOUNT_FIELD,
        MARKER_COMMIT_FIELD, MARKER_COUNTER_FIELD, MARKER_EXPIRY_FIELD,
        MARKER_EXPIRY_TOLERANCE_SECONDS, MARKER_SHARD_FIELD, SHARD_INCREMENT_FIELD,
        SHARD_VALUE_FIELD,
    };
    pub use crate::write::increment::{Increment, MARKER_LIFETIME};
}

/// Live queries: `query.listen(&db)`'s snapshots, their changes, options and checkpoints.
pub mod listen {
    pub use crate::query::{
        ChangeKind, DocumentChange, ListenCheckpoint, ListenOptions, QuerySnapshot, SnapshotStream,
    };
}

#[cfg(feature = "jobs")]
/// Jobs over a whole collection (backfill, rebalance, rename, verify) and their state: one
/// process, or parts tracked across the tasks of Cloud Run or Kubernetes jobs; over every
/// parent's collection at once, from `T::collection_group(&db)` (`ShardedCollectionGroup`).
pub mod jobs {
    pub use crate::job::balanced_parts::{Parts, SplitBy};
    pub use crate::job::purge::{
        PURGE_STATE_COLLECTION, PurgeOptions, PurgeProgress, PurgeTime, ShardPurge,
    };
    pub use crate::job::shard_job::{
        BothNames, Checkpoint, MAX_LISTED, Progress, ShardCensus, ShardJob, ShardedCollectionGroup,
    };
    pub use crate::job::task_part::{Engine, TaskPart};
    pub use crate::job::tracked::{
        JOB_STATE_COLLECTION, JobClosing, JobStatus, PartPhase, PartRun, PartStatus, TrackedPart,
    };
    pub use crate::model::partition::{IdRange, MAX_PARTS};
}

/// Traffic moved from one kind (or collection) to another user by user, at a share the app
/// raises step by step, with writes to both until every user is moved: see the README's
/// "Traffic moved user by user".
pub mod rollout {
    pub use crate::model::rollout::{Rollout, WHOLE};
}

/// Firestore's limits that a query or a write is checked against before it is sent.
pub mod limits {
    pub use crate::query::{
        MAX_DISJUNCTIONS, MAX_FILTER_VALUE_BYTES, MAX_LIMIT, MAX_NEIGHBORS, MAX_NOT_IN,
    };
    pub use crate::write::atomic::MAX_COMMIT_WRITES;
    pub use crate::write::transform::MAX_TRANSFORMS;
}

/// The index plan of a sharded type (`T::indexes()`), what a query needs of an index
/// (`query.index_need()`), and the description both are made from.
pub mod indexes {
    /// The same indexes for Firestore in Datastore mode: `index.yaml`'s kind indexes.
    pub use sharded_indexes::datastore;
    pub use sharded_indexes::{
        ArrayConfig, CollectionDescription, CollectionDescriptionBuf, CompositeIndex, Direction,
        FieldOverride, Flat, IndexField, IndexMode, IndexNeed, IndexPlan, QueryScope, StoredField,
        StoredFieldBuf, StoredType, VectorConfig,
    };
}

/// The traits that generic code over sharded types names in its bounds. The derive implements
/// them for each `#[derive(Sharded)]` type (and this crate for its own marker types); no user
/// type implements them by hand. Those a declaration implies (`TopLevel`, `Subcollection`,
/// `ParentDepth`, `CollectionGroup`, `Reversible`, `HasAggregates`, `HasRanges`) are sealed:
/// an `impl` written by hand does not compile, and its error names the attribute to declare,
/// so no query compiles without the index its declaration plans. Name them to write code
/// generic over sharded types:
/// `fn feed<T: Sharded + bounds::TopLevel + bounds::Reversible>(..)`, or `R: bounds::Reach` for
/// a query of either reach.
pub mod bounds {
    pub use crate::model::expiry::{Expiring, ExpiryTime};
    pub use crate::model::numeric::Numeric;
    pub use crate::model::sharded::{
        CollectionGroup, HasAggregates, HasRanges, ParentDepth, Reversible, Subcollection, TopLevel,
    };
    pub use crate::query::{
        AllQueries, PagedQuery, RangedOver, Reach, Summable, SummedOver, Window,
    };

    // Their names before "every" was kept for one idea (see the README's "Stability").
    #[doc(hidden)]
    pub use crate::query::{AllQueries as EveryQuery, Summable as EveryMatch};
}

// The paths these items had at the root before they moved into the modules above, kept so
// that code written against them still compiles; hidden, as the README's "Stability" says.
// Each is listed, not globbed, so that no item added to a module later gets a root path,
// and the API snapshot lists each of these (`tools/public-api` renders hidden root paths).
#[doc(hidden)]
pub use bounds::{
    AllQueries, CollectionGroup, EveryMatch, EveryQuery, HasAggregates, HasRanges, Numeric,
    PagedQuery, ParentDepth, RangedOver, Reach, Reversible, Subcollection, Summable, SummedOver,
    TopLevel, Window,
};
#[doc(hidden)]
pub use indexes::{
    ArrayConfig, CollectionDescription, CollectionDescriptionBuf, CompositeIndex, Direction,
    FieldOverride, Flat, IndexField, IndexMode, IndexNeed, IndexPlan, QueryScope, StoredType,
    VectorConfig,
};
#[cfg(feature = "jobs")]
#[doc(hidden)]
pub use jobs::{
    BothNames, Checkpoint, Engine, IdRange, JOB_STATE_COLLECTION, JobClosing, JobStatus,
    MAX_LISTED, MAX_PARTS, PartPhase, PartRun, PartStatus, Parts, Progress, ShardCensus, ShardJob,
    ShardedCollectionGroup, SplitBy, TaskPart, TrackedPart,
};
#[doc(hidden)]
pub use limits::{
    MAX_COMMIT_WRITES, MAX_DISJUNCTIONS, MAX_FILTER_VALUE_BYTES, MAX_LIMIT, MAX_NEIGHBORS,
    MAX_NOT_IN, MAX_TRANSFORMS,
};
#[doc(hidden)]
pub use listen::{
    ChangeKind, DocumentChange, ListenCheckpoint, ListenOptions, QuerySnapshot, SnapshotStream,
};
#[doc(hidden)]
pub use reads::{
    Aggregation, Aggregations, Avg, Count, CursorArgument, Decoded, DynamicOr, ExplainedChunk,
    ExplainedQuery, InCollection, Many, Neighbor, Number, NumericField, Or, OrderBound, OrderKey,
    Queries, QueryStats, RangeField, RangeFilter, Reversed, Sum, Undecodable, VectorField,
    WHOLE_COLLECTION, Whole, Windowed, avg, count, query_id, sum,
};
#[doc(hidden)]
pub use writes::{
    AtomicBatchIn, Field, OrderStamp, ServerTime, StatusCode, TransactionError, Transform,
    TypedField, Written, check_document_id, transaction_error,
};

/// The firestore crate this runtime talks through, for `FirestoreDb` and `FirestoreTimestamp`.
pub use firestore;

/// What generated code names. Not a public API.
#[doc(hidden)]
pub mod __private {
    // The constructors generated code calls, each generic argument written out.
    pub use crate::model::counter_field::{CounterValue, ValueRange, counter_field};
    pub use crate::model::declared::*;
    pub use crate::model::fields::field;
    pub use crate::model::order_key::NoOrderField;
    pub use crate::model::shard::{draw_shard, numbered_shards};
    pub use crate::model::sharded::{Derived, NoFields, PLAIN_PATHS, Tables};
    pub use crate::model::stored_names::{names_of, path_bytes, path_len, stored_name};
    pub use crate::query::queries::{Contained, Indexed, NotIndexed};
    pub use crate::query::{VectorValue, vector_field};
    pub use crate::query::{
        compare_documents, compare_references, compare_values, merge_sorted, merge_streams,
        numeric_field, queries, range_field, shard_chunks, usable_in_cursor,
    };
    pub use crate::write::firestore_write::ServerTimestamp;
    pub use crate::write::transform::typed_field;
    pub use crate::write::write_guard::Required;
    pub use sharded_indexes::{
        CollectionDescription, Counter, Direction, FieldOfQuery, StoredField, StoredType,
        VectorField,
    };

    /// Serializes `document` for writing, the shard drawn now; the benchmarks measure this.
    pub use crate::write::serialize::{serialize, serialize_unguarded};
}
