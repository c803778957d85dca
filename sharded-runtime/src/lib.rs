#![doc = include_str!("../README.md")]
#![warn(missing_docs, missing_debug_implementations)]

mod atomic;
mod balanced_parts;
#[macro_use]
mod declined;
pub mod bulk;
mod collection;
mod document;
mod document_id;
mod document_path;
mod error;
mod fields;
mod get_many;
pub mod guide;
mod job;
mod option_check;
mod order_key;
mod parent;
mod partition;
mod query;
pub mod reshard;
mod retired;
mod retry;
mod serialize;
mod shard;
mod shard_job;
mod sharded;
mod status;
mod stored;
mod stored_names;
mod task_part;
mod transform;
mod value_order;
mod write;
mod write_guard;

pub use atomic::{
    AtomicBatch, AtomicBatchIn, InTransaction, MAX_COMMIT_WRITES, TransactionError,
    transaction_error,
};
pub use balanced_parts::{Parts, SplitBy};
pub use collection::ShardedCollection;
pub use document_id::check_document_id;
pub use error::{Error, Result};
pub use fields::Field;
pub use get_many::Many;
pub use job::{
    JOB_STATE_COLLECTION, JobClosing, JobStatus, PartPhase, PartRun, PartStatus, TrackedPart,
};
pub use order_key::{OrderBound, OrderKey};
pub use parent::{CollectionGroup, Parent};
pub use partition::{IdRange, MAX_PARTS};
pub use query::{
    ChangeKind, Cursor, CursorArgument, CursorOf, DocumentChange, DynamicOr, InCollection, InGroup,
    ListenCheckpoint, ListenOptions, MAX_DISJUNCTIONS, MAX_FILTER_VALUE_BYTES, MAX_LIMIT,
    MAX_NOT_IN, Number, Numeric, NumericField, Or, Page, PageOf, Queries, QueryPlan, QueryShape,
    QuerySnapshot, QueryStats, RangeField, RangeFilter, Reversed, ShardedQuery, SnapshotStream,
    WHOLE_COLLECTION, Whole, WholeCollection, WholeCollectionReversed, Windowed, query_id,
};
pub use shard_job::{
    BothNames, Checkpoint, MAX_LISTED, Progress, ShardCensus, ShardJob, ShardedCollectionGroup,
};
pub use sharded::Sharded;
pub use sharded_derive::Sharded;
pub use sharded_derive::StoredNames;
pub use sharded_indexes::{
    CollectionDescription, CollectionDescriptionBuf, CompositeIndex, Direction, FieldOverride,
    IndexField, IndexNeed, IndexPlan, QueryScope,
};
pub use status::StatusCode;
pub use stored::{Decoded, Stored, Undecodable};
pub use stored_names::StoredNames;
pub use task_part::{
    CLOUD_RUN_EXECUTION, CLOUD_RUN_TASK_ATTEMPT, CLOUD_RUN_TASK_COUNT, CLOUD_RUN_TASK_INDEX,
    Engine, HOSTNAME, JOB_COMPLETION_INDEX, SHARDED_TASK_COUNT, TaskPart,
};
pub use transform::{MAX_TRANSFORMS, ServerTime, Transform, TransformNumber, TypedField};
pub use write::{OrderStamp, Written};

/// The traits that generic code over sharded types names in its bounds. The derive implements
/// them for each `#[derive(Sharded)]` type (and this crate for its own marker types); no user
/// type implements them by hand. Name them to write code generic over sharded types:
/// `fn feed<T: Sharded + bounds::TopLevel + bounds::Reversible>(..)`, or `R: bounds::Reach` for
/// a query of either reach.
pub mod bounds {
    pub use crate::parent::{ParentDepth, Reversible, Subcollection, TopLevel};
    pub use crate::query::{
        EveryMatch, EveryQuery, PagedQuery, RangedOver, Reach, SummedOver, Window,
    };
    pub use crate::sharded::{HasAggregates, HasRanges};
}

/// The firestore crate this runtime talks through, for `FirestoreDb` and `FirestoreTimestamp`.
pub use firestore;

/// What generated code names. Not a public API.
#[doc(hidden)]
pub mod __private {
    // The constructors generated code calls, each generic argument written out.
    pub use crate::fields::field;
    pub use crate::order_key::NoOrderField;
    pub use crate::query::queries::{Contained, Indexed, NotIndexed};
    pub use crate::query::{
        compare_documents, compare_references, compare_values, merge_sorted, merge_streams,
        numeric_field, queries, range_field, shard_chunks, usable_in_cursor,
    };
    pub use crate::shard::{draw_shard, numbered_shards};
    pub use crate::sharded::{Derived, NoFields, PLAIN_PATHS, Tables};
    pub use crate::stored_names::{names_of, path_bytes, path_len, stored_name};
    pub use crate::transform::typed_field;
    pub use crate::write::ServerTimestamp;
    pub use crate::write_guard::Required;
    pub use sharded_indexes::{CollectionDescription, Direction, FieldOfQuery};

    /// Serializes `document` for writing, the shard drawn now; the benchmarks measure this.
    pub use crate::serialize::{serialize, serialize_unguarded};
}
