//! The data model of the recipe's instruments app
//! (<https://firebase.google.com/docs/firestore/solutions/shard-timestamp>), sharded.
// What the derive generates passes the lints a careful library turns on.
#![deny(missing_debug_implementations)]

use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Sharded, StoredNames};

/// A price in a currency, in millionths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StoredNames)]
pub struct Price {
    pub currency: String,
    pub micros: i64,
}

/// One instrument update. 1,000–1,500 of them arrive per second, so the recipe spreads writes
/// over three shard values, `x`, `y` and `z`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(shard_values = ["x", "y", "z"], order_by = "timestamp")]
#[sharded(index(exchange, instrument_type))]
pub struct Instrument {
    pub symbol: String,
    #[sharded(index(currency: String))]
    pub price: Price,
    #[sharded(index)]
    pub exchange: String,
    #[sharded(index)]
    pub instrument_type: String,
    pub timestamp: FirestoreTimestamp,
}

/// A chat message, stored under its room: `rooms/{room}/messages/{id}`. Rooms take many
/// messages a second between them, so the newest across every room (a collection group,
/// whose index is one key range for all rooms) is what needs the shards. The server stamps
/// each message as it stores it (`server_timestamp`): clients' clocks do not decide the
/// order. A room's history pages back and forth (`reversible`), and a user's mentions are an
/// `array-contains` query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(
    shards = 3,
    order_by = "sent_at",
    parent = "rooms",
    collection = "messages",
    collection_group,
    server_timestamp,
    reversible
)]
pub struct Message {
    #[sharded(index)]
    pub author: String,
    pub text: String,
    /// The users the text mentions (`@ann`).
    #[sharded(contains)]
    pub mentions: Vec<String>,
    /// Set by the server as it stores the message.
    pub sent_at: FirestoreTimestamp,
}

impl Message {
    /// A message by `author`, mentioning each `@name` in `text`; the server sets `sent_at`.
    pub fn new(author: &str, text: &str) -> Message {
        let mentions = text
            .split_whitespace()
            .filter_map(|word| word.strip_prefix('@'))
            .map(|name| name.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
            .filter(|name| !name.is_empty())
            .collect();
        Message {
            author: author.to_owned(),
            text: text.to_owned(),
            mentions,
            sent_at: FirestoreTimestamp::now(),
        }
    }
}

/// `2019-01-01T13:45:23.010Z` as a Firestore timestamp.
pub fn at(rfc3339: &str) -> FirestoreTimestamp {
    FirestoreTimestamp(rfc3339.parse().expect("an RFC 3339 timestamp"))
}

/// The recipe's three instruments.
pub fn recipe_instruments() -> Vec<Instrument> {
    let instrument =
        |symbol: &str, currency: &str, micros, exchange: &str, kind: &str, time| Instrument {
            symbol: symbol.into(),
            price: Price {
                currency: currency.into(),
                micros,
            },
            exchange: exchange.into(),
            instrument_type: kind.into(),
            timestamp: at(time),
        };
    vec![
        instrument(
            "AAA",
            "USD",
            34_790_000,
            "EXCHG1",
            "commonstock",
            "2019-01-01T13:45:23.010Z",
        ),
        instrument(
            "BBB",
            "JPY",
            64_272_000_000,
            "EXCHG2",
            "commonstock",
            "2019-01-01T13:45:23.101Z",
        ),
        instrument(
            "Index1 ETF",
            "USD",
            473_000_000,
            "EXCHG1",
            "etf",
            "2019-01-01T13:45:23.001Z",
        ),
    ]
}
