use serde::Serialize;
use serde::de::DeserializeOwned;
use sharded_indexes::{CollectionSpec, Direction, IndexPlan};

use crate::OrderKey;
use crate::collection::ShardedCollection;

/// A document type stored in a sharded collection. Implemented by `#[derive(Sharded)]`; see the
/// [crate documentation](crate) for the attributes.
///
/// The constants are what the derive read from the attributes; the runtime writes, queries and
/// plans indexes from them alone.
pub trait Sharded: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The collection id.
    const COLLECTION: &'static str;
    /// The stored name of the shard field.
    const SHARD_FIELD: &'static str;
    /// The shard field as a field path, backtick-quoted where Firestore needs it
    /// (`` `shard-id` ``): what queries and indexes name.
    const SHARD_FIELD_PATH: &'static str;
    /// The values the shard field takes; one is drawn at random for every write (uniformly,
    /// except while resharding onto new values).
    const SHARD_VALUES: &'static [&'static str];
    /// While resharding (`previous(...)` on the type), the shard values of the set the
    /// collection is moving from: queries read them too, writes draw only current values.
    /// Empty otherwise. See [`reshard`](crate::reshard).
    const PREVIOUS_SHARD_VALUES: &'static [&'static str] = &[];
    /// While resharding, when writes began moving to the new values, in seconds since the
    /// Unix epoch (`previous(since = "...")`); `None` starts the schedule when this process
    /// first writes. See [`reshard`](crate::reshard).
    const RESHARD_SINCE: Option<u64> = None;
    /// The values queries read: the current ones, then any previous ones not among them.
    const READ_SHARD_VALUES: &'static [&'static str] = Self::SHARD_VALUES;
    /// Current values that are not previous ones: new key ranges, which writes move to
    /// gradually.
    #[doc(hidden)]
    const NEW_SHARD_VALUES: &'static [&'static str] = &[];
    /// Current values that are previous ones too (all of them when not resharding).
    #[doc(hidden)]
    const KEPT_SHARD_VALUES: &'static [&'static str] = Self::SHARD_VALUES;
    /// The stored field path that sharded queries order by.
    const ORDER_FIELD: &'static str;
    /// The direction sharded queries order in.
    const ORDER_DIRECTION: Direction;
    /// The stored field paths with a typed equality query, in declaration order.
    const INDEXED_FIELDS: &'static [&'static str];
    /// The sets of stored field paths with one typed equality query on all of them
    /// (`#[sharded(index(a, b))]` on the struct), in declaration order.
    const FIELD_SETS: &'static [&'static [&'static str]] = &[];
    /// The stored paths of the numeric fields with `sum` and `avg` queries
    /// (`#[sharded(aggregate)]`), in declaration order.
    const AGGREGATE_FIELDS: &'static [&'static str] = &[];
    /// Every typed query of `T::query()`: the whole collection, one per indexed field, one per
    /// field set. A `ShardedQuery<T, QUERY>` is the shape whose id is `QUERY`.
    const QUERIES: &'static [crate::QueryShape];
    /// The stored field paths every written document must hold: the order field and each
    /// indexed path whose Rust field is not an `Option`. Writes check them before sending.
    const REQUIRED_FIELDS: &'static [&'static str];
    /// [`REQUIRED_FIELDS`](Self::REQUIRED_FIELDS) as stored segments (unquoted), in the same
    /// order: what the write guard matches keys against while serializing.
    #[doc(hidden)]
    const REQUIRED_SEGMENTS: &'static [&'static [&'static str]];
    /// The Rust type of the order field: what range bounds on it are given as. Its
    /// [`OrderKey`] bound is what keeps types that would mis-sort out of `order_by`.
    type OrderValue: OrderKey;

    /// The description the index plan is made from.
    fn spec() -> CollectionSpec<'static> {
        CollectionSpec {
            collection: Self::COLLECTION,
            shard_field: Self::SHARD_FIELD_PATH,
            order_field: Self::ORDER_FIELD,
            direction: Self::ORDER_DIRECTION,
            indexed_fields: Self::INDEXED_FIELDS,
            field_sets: Self::FIELD_SETS,
            aggregate_fields: Self::AGGREGATE_FIELDS,
        }
    }

    /// The composite indexes and field overrides this collection needs: this type's part of
    /// `firestore.indexes.json`.
    fn indexes() -> IndexPlan {
        sharded_indexes::plan(&Self::spec())
    }

    /// Writes and reads of this type's collection in `db`.
    fn collection(db: &firestore::FirestoreDb) -> ShardedCollection<'_, Self>
    where
        Self: Sized,
    {
        ShardedCollection::new(db)
    }
}
