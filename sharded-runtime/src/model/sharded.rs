use serde::Serialize;
use serde::de::DeserializeOwned;
use sharded_indexes::{CollectionDescription, Direction, IndexPlan};

use crate::model::declared::{
    DeclaredAggregates, DeclaredCollectionGroup, DeclaredParentDepth, DeclaredRanges,
    DeclaredReversible, DeclaredSubcollection, DeclaredTopLevel,
};
use crate::model::handle::ShardedCollection;
use crate::model::order_key::OrderKey;

/// What the runtime reads besides [`Sharded::DESCRIPTION`], computed by the derive from the
/// same attributes: the query names, which paths a write must hold (the description does not
/// say which indexed fields are `Option`s) and the unquoted names the write path matches, in
/// one constant beside it, because everything the derive emits costs every user's build. The
/// trait's `SHARD_FIELD` and `REQUIRED_FIELDS` read it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Tables {
    /// The name of every typed query but `all`: one per indexed field, then one per field set,
    /// in the order of [`CollectionDescription::indexed_fields`] and
    /// [`CollectionDescription::field_sets`], which hold the fields each compares.
    pub query_names: &'static [&'static str],
    /// The stored paths every written document must hold.
    pub required_fields: &'static [&'static str],
    /// The stored name of every field serde stores under a name of its own: what a
    /// projection may read.
    pub stored_fields: &'static [&'static str],
    /// The same paths as stored segments, unquoted; empty when each path is one segment
    /// spelled as its path (no nesting, no quoting), as in most types, which spares every
    /// user's build a constant per path.
    pub required_segments: &'static [&'static [&'static str]],
}

/// [`Tables::required_segments`] when each required path is its own one segment: a constant
/// of its own, so that a type's tables name it rather than borrow an empty array.
pub const PLAIN_PATHS: &[&[&str]] = &[];

/// A document type stored in a sharded collection. Implemented by `#[derive(Sharded)]`; see the
/// [crate documentation](crate) for the attributes.
///
/// [`DESCRIPTION`](Self::DESCRIPTION) is what the derive read from the attributes: the runtime
/// writes and queries from it, and the index plan and the build's `firestore.indexes.json`
/// are made from it: read the shard sets, the direction and the declared fields there.
/// [`COLLECTION`](Self::COLLECTION), [`SHARD_FIELD`](Self::SHARD_FIELD),
/// [`SHARD_VALUES`](Self::SHARD_VALUES) and [`ORDER_FIELD`](Self::ORDER_FIELD) are views of it
/// for the names code most often needs; the runtime's hot paths read (hidden) tables the
/// derive computes from the same attributes. The trait is sealed:
/// only the derive implements it, so its constants cannot disagree with `DESCRIPTION`, and
/// adding one is not a breaking change.
pub trait Sharded: Serialize + DeserializeOwned + Send + Sync + Derived + 'static {
    /// The collection, described once.
    const DESCRIPTION: CollectionDescription<'static>;
    /// The collection id.
    const COLLECTION: &'static str = Self::DESCRIPTION.collection;
    /// What the runtime's hot paths read, computed by the derive.
    #[doc(hidden)]
    const TABLES: Tables;
    /// The stored name of the shard field (unquoted; `DESCRIPTION.shard_field` is its field
    /// path, backtick-quoted where Firestore needs it).
    const SHARD_FIELD: &'static str =
        sharded_indexes::field_path::unquoted_segment(Self::DESCRIPTION.shard_field);
    #[doc(hidden)]
    /// The shard field as a field path, backtick-quoted where Firestore needs it
    /// (`` `shard-id` ``): what queries and indexes name.
    const SHARD_FIELD_PATH: &'static str = Self::DESCRIPTION.shard_field;
    /// The values the shard field takes; one is drawn at random for every write (uniformly,
    /// except while resharding onto new values).
    const SHARD_VALUES: &'static [&'static str] = Self::DESCRIPTION.shard_values;
    #[doc(hidden)]
    /// While resharding (`previous(...)` on the type), the shard values of the set the
    /// collection is moving from: queries read them too, writes draw only current values.
    /// Empty otherwise. See [`reshard`](crate::model::reshard).
    const PREVIOUS_SHARD_VALUES: &'static [&'static str] = Self::DESCRIPTION.previous_shard_values;
    #[doc(hidden)]
    /// After a rebalance (`retired(...)` on the type), the values no document holds any more:
    /// queries neither read nor write them, and check that no document of the scope they
    /// read still holds one ([`Error::NotRebalanced`](crate::error::Error::NotRebalanced)): again
    /// 10 minutes after a scope was found clean (a stale writer's document is noticed then),
    /// for at most 4,096 scopes per process, and for a `collection_group` type with one
    /// check of the whole group while it is clean.
    /// None is a current or previous value. Empty otherwise.
    const RETIRED_SHARD_VALUES: &'static [&'static str] = Self::DESCRIPTION.retired_shard_values;
    #[doc(hidden)]
    /// While resharding, when writes began moving to the new values, in seconds since the
    /// Unix epoch (`previous(since = "...")`); `None` starts the schedule when this process
    /// first writes. See [`reshard`](crate::model::reshard).
    const RESHARD_SINCE: Option<u64> = Self::DESCRIPTION.reshard_since;
    /// The values queries read: the current ones, then any previous ones not among them.
    #[doc(hidden)]
    const READ_SHARD_VALUES: &'static [&'static str] = Self::SHARD_VALUES;
    /// Current values that are not previous ones: new key ranges, which writes move to
    /// gradually.
    #[doc(hidden)]
    const NEW_SHARD_VALUES: &'static [&'static str] = &[];
    /// Current values that are previous ones too (all of them when not resharding).
    #[doc(hidden)]
    const KEPT_SHARD_VALUES: &'static [&'static str] = Self::SHARD_VALUES;
    /// The stored field path that sharded queries order by.
    const ORDER_FIELD: &'static str = Self::DESCRIPTION.order_field;
    #[doc(hidden)]
    /// The direction sharded queries order in.
    const ORDER_DIRECTION: Direction = Self::DESCRIPTION.direction;
    #[doc(hidden)]
    /// The stored field paths with a typed equality query, in declaration order.
    const INDEXED_FIELDS: &'static [&'static str] = Self::DESCRIPTION.indexed_fields;
    #[doc(hidden)]
    /// The sets of stored field paths with one typed equality query on all of them
    /// (`#[sharded(index(a, b))]` on the struct), in declaration order.
    const FIELD_SETS: &'static [&'static [&'static str]] = Self::DESCRIPTION.field_sets;
    #[doc(hidden)]
    /// The stored paths of the numeric fields with `sum` and `avg` queries
    /// (`#[sharded(aggregate)]`), in declaration order.
    const AGGREGATE_FIELDS: &'static [&'static str] = Self::DESCRIPTION.aggregate_fields;
    #[doc(hidden)]
    /// The stored field paths every written document must hold: the order field (unless the
    /// server fills it, `server_timestamp`) and each indexed path whose Rust field is not an
    /// `Option`. Writes check them before sending.
    const REQUIRED_FIELDS: &'static [&'static str] = Self::TABLES.required_fields;
    /// The derive's query methods of this type, which [`Queries`](crate::query::Queries)
    /// dereferences to.
    #[doc(hidden)]
    type QueryMethods;
    /// What the derive's `T::aggregates()` returns (`()` for a type without aggregate fields).
    #[doc(hidden)]
    type AggregateFields;
    /// What the derive's `T::ranges()` returns (`()` for a type without range fields).
    #[doc(hidden)]
    type RangeFields;
    /// The Rust type of the order field: what range bounds on it are given as. Its
    /// [`OrderKey`] bound is what keeps types that would mis-sort out of `order_by`.
    type OrderValue: OrderKey;

    /// The composite indexes and field overrides this collection needs: this type's part of
    /// `firestore.indexes.json`.
    fn indexes() -> IndexPlan {
        Self::DESCRIPTION.plan()
    }

    /// Writes and reads of this type's collection in `db`, for a top-level type; a type
    /// declared under parent documents (`parent = "..."`) takes its parent,
    /// [`collection_in`](Self::collection_in) (calling this on it does not compile).
    fn collection(db: &firestore::FirestoreDb) -> ShardedCollection<'_, Self>
    where
        Self: Sized + crate::model::sharded::TopLevel,
    {
        ShardedCollection::new(db)
    }

    #[cfg(feature = "jobs")]
    /// The backfill, rebalance and verification of this type's collection under every parent
    /// at once (a collection group), for a type that declares `collection_group`.
    fn collection_group(
        db: &firestore::FirestoreDb,
    ) -> crate::model::handle::ShardedCollectionGroup<'_, Self>
    where
        Self: Sized + crate::model::sharded::CollectionGroup,
    {
        crate::model::handle::ShardedCollectionGroup::new(db)
    }

    /// Writes and reads of this type's collection under `parent` (`rooms/lobby/messages`).
    fn collection_in<'db>(
        db: &'db firestore::FirestoreDb,
        parent: &crate::model::handle::Parent<Self>,
    ) -> ShardedCollection<'db, Self>
    where
        Self: Sized + crate::model::sharded::Subcollection,
    {
        ShardedCollection::under(db, parent)
    }

    /// The numeric fields to sum and average, `T::aggregates().price`: the derive's own
    /// `aggregates()` for a type with `#[sharded(aggregate)]` fields, which this one (reached
    /// in generic code, or on a type without such fields, where it does not compile) returns.
    fn aggregates() -> Self::AggregateFields
    where
        Self: HasAggregates,
    {
        <Self as HasAggregates>::fields()
    }

    /// The fields to filter by range, `T::ranges().price`: the derive's own `ranges()` for a
    /// type with `#[sharded(range)]` fields, which this one (reached in generic code, or on a
    /// type without such fields, where it does not compile) returns.
    fn ranges() -> Self::RangeFields
    where
        Self: HasRanges,
    {
        <Self as HasRanges>::fields()
    }
}

/// What `T::aggregates()` and `T::ranges()` of a type without such fields would return, had
/// they compiled: nothing has a field of it.
#[doc(hidden)]
#[derive(Debug)]
pub struct NoFields;

/// A type with `#[sharded(aggregate)]` fields: implemented by the derive, so that
/// `T::aggregates()` on a type without any is an error that names the fix.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no aggregate fields, so it has no `aggregates()`",
    label = "no field of it is `#[sharded(aggregate)]`",
    note = "add `#[sharded(aggregate)]` to a numeric field (or `aggregate(all, ..)`, naming the queries that sum it): it gets `T::aggregates().<field>` for `sum` and `avg`, and the indexes they need"
)]
pub trait HasAggregates: Sharded + DeclaredAggregates {
    /// The derive's `aggregates()`: one `NumericField` per aggregate field.
    fn fields() -> Self::AggregateFields;
}

/// A type with `#[sharded(range)]` fields: implemented by the derive, so that `T::ranges()`
/// on a type without any is an error that names the fix.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no range fields, so it has no `ranges()`",
    label = "no field of it is `#[sharded(range)]`",
    note = "add `#[sharded(range)]` to the field to filter (or `range(all, ..)`, naming the queries that filter it): it gets `T::ranges().<field>` for `filter`, and the indexes it needs"
)]
pub trait HasRanges: Sharded + DeclaredRanges {
    /// The derive's `ranges()`: one `RangeField` per range field.
    fn fields() -> Self::RangeFields;
}

/// Implemented by the derive alongside [`Sharded`], which requires it: no other impl of
/// `Sharded` compiles. Not a public API.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`Sharded` is implemented by its derive only",
    label = "`{Self}` implements it by hand",
    note = "derive it instead: `#[derive(Serialize, Deserialize, Sharded)]` with `#[sharded(...)]`, from which the queries, the write guard and the index plan all come"
)]
pub trait Derived {}

/// A sharded type declared under parent documents (`#[sharded(parent = "rooms")]`):
/// implemented by the derive, and what [`Parent`](crate::Parent) and
/// [`collection_in`](crate::model::sharded::Sharded::collection_in) require, so a top-level type given a
/// parent does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a top-level collection: it lives under no parent document",
    label = "not declared with a parent",
    note = "for a subcollection, declare where it lives: `#[sharded(parent = \"rooms\")]`"
)]
pub trait Subcollection: Sharded + DeclaredSubcollection {}

/// A sharded type that declares queries across every parent (`collection_group`):
/// implemented by the derive, and what [`in_group`](crate::query::ShardedQuery::in_group) requires,
/// since those queries need `COLLECTION_GROUP` indexes that only the declaration plans.
///
/// A group query reads every collection with the type's id, wherever it lives: the top-level
/// collection of that id too, and those under other parents (Firestore's collection-group
/// semantics, which the same unsharded query shares). `cargo build` warns when another
/// sharded type's collection has the group's id.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no collection-group queries",
    label = "not declared with `collection_group`",
    note = "add `collection_group` to its `#[sharded(...)]`: the build then plans the COLLECTION_GROUP indexes these queries need"
)]
pub trait CollectionGroup: Sharded + DeclaredCollectionGroup {}

/// A sharded type stored at the top level of the database (no `parent`): implemented by the
/// derive, and what the writes and reads that take no parent require
/// ([`Sharded::collection`](crate::model::sharded::Sharded::collection), [`AtomicBatch`](crate::write::atomic::AtomicBatch)'s
/// and [`BulkWriter`](crate::write::bulk::BulkWriter)'s own writes), since a subcollection's
/// document is always under a parent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` lives under parent documents: name the parent",
    label = "declared with `parent = \"...\"`",
    note = "write and read it under a parent: `{Self}::collection_in(&db, &parent)`, `batch.in_parent(&parent)`, `writer.in_parent(&parent)`, `query.in_parent(&parent)`, with `let parent = Parent::<{Self}>::new(&[..])?`",
    note = "in generic code over top-level types, bound the type `T: TopLevel`"
)]
pub trait TopLevel: Sharded + DeclaredTopLevel {}

/// A subcollection type `N` levels down: implemented by the derive for the number of
/// collections its `#[sharded(parent = "...")]` names, and what [`Parent::new`](crate::Parent::new) requires of
/// its array of ids, so a parent with one id too few or too many does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not live under {N} parent document(s)",
    label = "one id per collection of the type's `parent`",
    note = "give `Parent::new` one id per collection of `{Self}`'s `#[sharded(parent = \"...\")]`, outermost first (`parent = \"users/devices\"` takes two: `users/{{uid}}/devices/{{did}}`); `Parent::from_ids` takes a slice whose length is checked when it runs"
)]
pub trait ParentDepth<const N: usize>: Subcollection + DeclaredParentDepth<N> {}

/// A sharded type whose queries run in both directions (`reversible`): implemented by the
/// derive, and what [`reversed`](crate::query::ShardedQuery::reversed) and
/// [`before`](crate::query::ShardedQuery::before) require, since those queries need the indexes in
/// the other direction that only the declaration plans.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no queries in the other direction",
    label = "not declared `reversible`",
    note = "add `reversible` to its `#[sharded(...)]`: the build then plans each query's index in the other direction too, which reversed queries and previous pages need"
)]
pub trait Reversible: Sharded + DeclaredReversible {}
