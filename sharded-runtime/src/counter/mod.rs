//! Distributed counters (`#[sharded(counter(shards = n))]`) read: Firestore's recipe for a
//! value added to faster than one document takes writes (about one a second, sustained). The
//! exact value is the sum of the shard documents, one aggregation (`read`); a live value
//! (`listen`); folds of the shards into the counted document's field (`fold`,
//! `keep_folded`); and merging shard documents a type no longer declares (`shrink`). The
//! counter fields themselves are in the model (`model::counter_field`), increments in
//! `write::increment`.

mod fold;
mod keep_folded;
mod listen;
mod read;
mod shrink;

use firestore::gcloud_sdk::google::firestore::v1::StructuredQuery;
use firestore::gcloud_sdk::google::firestore::v1::structured_query::CollectionSelector;

pub use fold::Folded;
pub use keep_folded::MIN_FOLD_PERIOD;
pub use listen::CounterSnapshot;

/// Every shard document of a counter whose shard collection id is `collection_id`, under the
/// counted document the request names as its parent: what a live counter listens to and
/// sums, and what a fold reads.
pub(crate) fn shard_documents_query(collection_id: String) -> StructuredQuery {
    StructuredQuery {
        from: vec![CollectionSelector {
            collection_id,
            all_descendants: false,
        }],
        ..Default::default()
    }
}
