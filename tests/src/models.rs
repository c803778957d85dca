//! The recipe's `instruments` (the example app's own model) and a collection sized past one `in`.

use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

pub use sharded_examples::{Instrument, Price};

/// Sized for 20,000 writes/s: 40 shards, more than one `in` can hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    writes_per_second = 20_000,
    order_by = "at",
    direction = "asc",
    collection = "ticks",
    shard_field = "bucket"
)]
pub struct Tick {
    #[sharded(index)]
    pub venue: String,
    pub at: FirestoreTimestamp,
    pub seq: i64,
}

/// A struct of readings (`venue`, `at`, `seq`) with the given `#[sharded(...)]`: the one shape
/// the resharding tests declare over and over, each time with another shard set.
macro_rules! readings {
    ($(#[$attr:meta])* $name:ident) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        $(#[$attr])*
        pub struct $name {
            #[sharded(index)]
            pub venue: String,
            pub at: FirestoreTimestamp,
            pub seq: i64,
        }
    };
}

/// A collection resharded from `["a", "b", "c"]` to `["c", "d"]`: the type before, the type
/// while documents move (`previous(...)`), and the type after (`retired(...)`).
pub mod moving {
    use super::*;

    readings!(
        #[sharded(shard_values = ["a", "b", "c"], order_by = "at", collection = "moving")]
        Before
    );
    readings!(
        #[sharded(
            shard_values = ["c", "d"],
            previous(shard_values = ["a", "b", "c"]),
            order_by = "at",
            collection = "moving"
        )]
        During
    );
    readings!(
        #[sharded(
            shard_values = ["c", "d"],
            retired(shard_values = ["a", "b", "c"]),
            order_by = "at",
            collection = "moving"
        )]
        After
    );
}

/// A collection grown from 3 to 6 shards, the move started at a declared time; and from 3
/// to 30.
pub mod growing {
    use super::*;

    readings!(
        #[sharded(shards = 3, order_by = "at", collection = "growing")]
        Three
    );
    readings!(
        #[sharded(
            shards = 6,
            previous(shards = 3, since = "2026-11-22T19:00:00Z"),
            order_by = "at",
            collection = "growing"
        )]
        Six
    );
    readings!(
        #[sharded(
            shards = 30,
            previous(shards = 3),
            order_by = "at",
            collection = "growing"
        )]
        Thirty
    );
}

/// A collection to grow from 3 to 6 shards at a time still to come: until then writes draw
/// only the 3 values readers of the old type know.
pub mod scheduled {
    use super::*;

    readings!(
        #[sharded(
            shards = 6,
            previous(shards = 3, since = "2099-01-01T00:00:00Z"),
            order_by = "at",
            collection = "scheduled"
        )]
        Later
    );
}
