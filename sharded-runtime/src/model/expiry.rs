//! Types with an expiry field (`#[sharded(expire_at = "expires")]`): Firestore's TTL policy
//! deletes a document some time after the time it holds, and queries can hide the ones past
//! it before then.

use crate::model::declared::DeclaredExpiry;
use crate::model::order_key::OrderKey;
use crate::model::sharded::Sharded;

/// A type Firestore's TTL policy reads as a time: a timestamp, as `FirestoreTimestamp` and
/// `SystemTime` are stored. A document whose TTL field holds anything else never expires.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not stored as a timestamp, so Firestore's TTL policy cannot expire by it",
    label = "the expiry field (`expire_at`) must hold a timestamp",
    note = "declare the expiry field as `FirestoreTimestamp` or `SystemTime` (not an `Option`: store a time far ahead for a document that should stay)"
)]
pub trait ExpiryTime: OrderKey {}

impl ExpiryTime for firestore::FirestoreTimestamp {}
impl ExpiryTime for std::time::SystemTime {}

/// A sharded type with an expiry field (`#[sharded(expire_at = "expires")]`), implemented by
/// the derive (sealed: an `impl` by hand does not compile): its queries take [`unexpired`](crate::query::ShardedQuery::unexpired), and its
/// collections [`purge_expired`](crate::ShardedCollection::purge_expired).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no expiry field",
    label = "not declared with `expire_at`",
    note = "name the timestamp field after which a document may be deleted: `#[sharded(expire_at = \"expires\")]`; the build then plans its TTL policy and the indexes `unexpired` and `purge_expired` need"
)]
pub trait Expiring: Sharded + DeclaredExpiry {
    /// The expiry field's Rust type.
    type Expiry: ExpiryTime;
    /// The expiry field's stored path (the description's `expiry_field`).
    const EXPIRY_FIELD: &'static str;
}
