//! The seals of the marker traits the derive implements from a type's declaration
//! ([`Reversible`](crate::model::sharded::Reversible), [`TopLevel`](crate::model::sharded::TopLevel),
//! [`CollectionGroup`](crate::model::sharded::CollectionGroup), ...). Each marker says what the
//! declaration planned: the indexes in the other direction, the place the documents live,
//! the `COLLECTION_GROUP` indexes. Written by hand, one would let a query compile without its
//! index, or a write go where the type does not live. So each marker has one of these as a
//! supertrait, which generated code implements beside it (through `__private`), and an `impl`
//! written by hand is an error that names the attribute to declare instead. Not a public API.

/// `Reversible`'s seal: the type is declared `reversible`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not declared `reversible`: `Reversible` comes from the declaration, not from an `impl`",
    label = "`Reversible` implemented by hand",
    note = "remove this `impl` and add `reversible` to `{Self}`'s `#[sharded(...)]`: the derive then implements `Reversible`, and the build plans each query's index in the other direction, without which Firestore refuses a reversed query"
)]
pub trait DeclaredReversible {}

/// `CollectionGroup`'s seal: the type is declared `collection_group`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not declared `collection_group`: `CollectionGroup` comes from the declaration, not from an `impl`",
    label = "`CollectionGroup` implemented by hand",
    note = "remove this `impl` and add `collection_group` to `{Self}`'s `#[sharded(...)]`: the derive then implements `CollectionGroup`, and the build plans the COLLECTION_GROUP indexes without which Firestore refuses a group query"
)]
pub trait DeclaredCollectionGroup {}

/// `TopLevel`'s seal: the type is declared without a parent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared under parent documents: `TopLevel` comes from the declaration, not from an `impl`",
    label = "`TopLevel` implemented by hand",
    note = "remove this `impl`: a `{Self}` lives under a parent, so write and read it there (`{Self}::collection_in(&db, &parent)`); for a top-level collection, drop `parent = \"...\"` from its `#[sharded(...)]`"
)]
pub trait DeclaredTopLevel {}

/// `Subcollection`'s seal: the type is declared with a parent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared at the top level: `Subcollection` comes from the declaration, not from an `impl`",
    label = "`Subcollection` implemented by hand",
    note = "remove this `impl` and declare where `{Self}` lives: `#[sharded(parent = \"rooms\")]`; the derive then implements `Subcollection` and its `ParentDepth`"
)]
pub trait DeclaredSubcollection {}

/// `ParentDepth`'s seal: the type's `parent` names `N` collections.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not declared {N} level(s) down: `ParentDepth` comes from the declaration, not from an `impl`",
    label = "`ParentDepth` implemented by hand",
    note = "remove this `impl`: the derive implements `ParentDepth` for the number of collections `{Self}`'s `#[sharded(parent = \"...\")]` names"
)]
pub trait DeclaredParentDepth<const N: usize> {}

/// `HasAggregates`' seal: the type has `#[sharded(aggregate)]` fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no `#[sharded(aggregate)]` field: `HasAggregates` comes from the declaration, not from an `impl`",
    label = "`HasAggregates` implemented by hand",
    note = "remove this `impl` and mark a numeric field `#[sharded(aggregate)]`: the derive then implements `HasAggregates` with it"
)]
pub trait DeclaredAggregates {}

/// `HasRanges`' seal: the type has `#[sharded(range)]` fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no `#[sharded(range)]` field: `HasRanges` comes from the declaration, not from an `impl`",
    label = "`HasRanges` implemented by hand",
    note = "remove this `impl` and mark the field to filter `#[sharded(range)]`: the derive then implements `HasRanges` with it"
)]
pub trait DeclaredRanges {}

/// `Expiring`'s seal: the type is declared `expire_at = "..."`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no expiry field: `Expiring` comes from the declaration, not from an `impl`",
    label = "`Expiring` implemented by hand",
    note = "remove this `impl` and name the timestamp field after which a document may be deleted: `#[sharded(expire_at = \"expires\")]`; the derive then implements `Expiring`, and the build plans the TTL policy and the indexes its queries and purges need"
)]
pub trait DeclaredExpiry {}
