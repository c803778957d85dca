//! A sharded kind in Firestore's Datastore mode: an older App Engine app's sensor readings,
//! stamped with the time they were taken. Thousands arrive a second, so an indexed
//! `recorded_at` alone would send every write to one key range (the best-practices page's
//! hotspot): the readings spread over 10 shard values, and `build.rs` writes the `index.yaml`
//! whose indexes all start with the shard.

use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

/// One reading of one sensor at one site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 10,
    order_by = "recorded_at",
    collection = "Reading",
    reversible
)]
pub struct Reading {
    /// Queried by equality (and `IN`): the latest readings of a sensor.
    #[sharded(index)]
    pub sensor: String,
    /// Queried by equality: a site's readings.
    #[sharded(index)]
    pub site: String,
    /// Microseconds since the Unix epoch, as the app has always stored them.
    pub recorded_at: i64,
    /// Summed over any query.
    #[sharded(aggregate)]
    pub value: i64,
    /// Read back, never queried: excluded from indexes on every write.
    pub raw: String,
}
