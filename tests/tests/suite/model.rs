//! What the derive reads from the attributes.

use sharded_runtime::{Sharded, indexes::Direction};
use sharded_tests::models::{Instrument, Tick};

#[test]
fn recipe_attributes_become_the_recipe_collection() {
    assert_eq!(Instrument::COLLECTION, "instruments");
    assert_eq!(Instrument::SHARD_FIELD, "shard");
    assert_eq!(Instrument::SHARD_VALUES, ["x", "y", "z"]);
    assert_eq!(Instrument::ORDER_FIELD, "timestamp");
    assert_eq!(Instrument::DESCRIPTION.direction, Direction::Descending);
    assert_eq!(
        Instrument::DESCRIPTION.indexed_fields,
        ["price.currency", "exchange", "instrumentType"]
    );
}

#[test]
fn sizing_by_writes_per_second_uses_500_per_shard() {
    assert_eq!(Tick::SHARD_VALUES.len(), 40);
    assert_eq!(Tick::SHARD_VALUES.first(), Some(&"0"));
    assert_eq!(Tick::SHARD_VALUES.last(), Some(&"39"));
    assert_eq!(Tick::COLLECTION, "ticks");
    assert_eq!(Tick::SHARD_FIELD, "bucket");
    assert_eq!(Tick::DESCRIPTION.direction, Direction::Ascending);
}

/// What `T::query()` returns can be kept and used again (its methods borrow it), and what
/// `T::fields()` returns holds one value per field; each query names its type by `query_id` of
/// its method, whichever way it is written.
#[test]
fn namespaces_are_reused_and_queries_are_named_by_id() {
    let queries = Instrument::query();
    let by_hand: sharded_runtime::ShardedQuery<
        Instrument,
        { sharded_runtime::reads::query_id("exchange") },
    > = queries.exchange("XNAS");
    let by_alias: sharded_examples::InstrumentExchangeQuery = queries.exchange("XNAS");
    assert_eq!(format!("{by_hand:?}"), format!("{by_alias:?}"));
    let fields = Instrument::fields();
    assert_eq!(
        [fields.symbol, fields.exchange, fields.symbol].map(|field| field.path()),
        ["symbol", "exchange", "symbol"]
    );
}

/// Attribute values that arrive through `macro_rules!` fragments (wrapped in invisible groups).
macro_rules! sharded_struct {
    ($name:ident, $shards:literal, $collection:literal, $value:literal) => {
        #[derive(serde::Serialize, serde::Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection, direction = $value)]
        struct $name {
            #[sharded(index)]
            venue: String,
            at: i64,
        }
    };
}

sharded_struct!(FromMacro, 7, "from_macro", "asc");

#[test]
fn attributes_written_by_macros_are_read() {
    assert_eq!(FromMacro::SHARD_VALUES.len(), 7);
    assert_eq!(FromMacro::COLLECTION, "from_macro");
    assert_eq!(FromMacro::DESCRIPTION.direction, Direction::Ascending);
}

/// An indexed field whose name is a keyword gets a raw query method.
#[derive(serde::Serialize, serde::Deserialize, Sharded)]
#[sharded(shards = 2, order_by = "at")]
struct Keyworded {
    #[sharded(index)]
    r#type: String,
    at: i64,
}

#[test]
fn keyword_field_names_get_raw_query_methods() {
    let _query: sharded_runtime::ShardedQuery<
        Keyworded,
        { sharded_runtime::reads::query_id("type") },
    > = Keyworded::query().r#type("etf");
    assert_eq!(Keyworded::DESCRIPTION.indexed_fields, ["type"]);
}

mod nested {
    use serde::{Deserialize, Serialize};
    use sharded_runtime::firestore::FirestoreTimestamp;
    use sharded_runtime::{Sharded, StoredNames};

    #[derive(Serialize, Deserialize, StoredNames)]
    #[serde(rename_all = "camelCase")]
    pub struct Place {
        region_code: String,
        the_site: Site,
        #[serde(skip)]
        _cache: (),
    }

    #[derive(Serialize, Deserialize, StoredNames)]
    pub struct Site {
        #[serde(rename = "site-id")]
        id: u32,
        r#type: String,
    }

    /// The same layout as sharded-build's `nested_paths_follow_the_inner_types_serde_names`
    /// test: the derive's compile-time paths and the build's source-read paths agree.
    #[derive(Serialize, Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "at", shard_field = "shard-id")]
    pub struct Visit {
        #[sharded(index(region_code: String, the_site.id: u32, the_site.r#type: String))]
        place: Place,
        at: FirestoreTimestamp,
    }

    #[test]
    fn nested_paths_follow_every_inner_types_serde_names() {
        assert_eq!(
            Visit::DESCRIPTION.indexed_fields,
            [
                "place.regionCode",
                "place.theSite.`site-id`",
                "place.theSite.type"
            ]
        );
        assert_eq!(Visit::SHARD_FIELD, "shard-id");
        assert_eq!(Visit::DESCRIPTION.shard_field, "`shard-id`");
        assert_eq!(
            Visit::REQUIRED_FIELDS,
            [
                "at",
                "place.regionCode",
                "place.theSite.`site-id`",
                "place.theSite.type"
            ]
        );
        let _query = Visit::query().place_the_site_type("museum");
    }
}

mod string_order {
    use serde::{Deserialize, Serialize};
    use sharded_runtime::Sharded;

    #[derive(Serialize, Deserialize, Sharded)]
    #[sharded(shards = 40, order_by = "sku")]
    pub struct Item {
        #[sharded(index)]
        shop: String,
        sku: String,
    }

    #[test]
    fn ranges_take_borrowed_bounds_of_the_order_type() {
        let borrowed = Item::query().shop("s").range("a".."p");
        let owned = Item::query()
            .shop("s")
            .range(String::from("a")..String::from("p"));
        assert_eq!(format!("{borrowed:?}"), format!("{owned:?}"));
        let inclusive = Item::query().shop("s").range("a"..="p");
        assert_ne!(format!("{inclusive:?}"), format!("{owned:?}"));
    }
}

/// A type whose unindexed fields' names collide with each other's and with query methods
/// (`kind_in` beside `kind`, `exchange_in` beside the indexed `exchange`, a raw `r#type`,
/// an array beside its `tags_contains`) derives, and its real queries are the indexed ones.
#[test]
fn hints_on_unindexed_fields_take_no_name_a_query_has() {
    #[derive(serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "at")]
    #[allow(dead_code)]
    struct Odd {
        #[sharded(index)]
        exchange: String,
        exchange_in: String,
        kind: String,
        kind_in: String,
        r#type: String,
        #[sharded(contains)]
        tags: Vec<String>,
        tags_contains: String,
        at: i64,
    }
    let query = Odd::query().exchange_in(["a", "b"]);
    assert_eq!(query.chunk_queries().unwrap(), 1);
    let query = Odd::query().tags_contains("x");
    assert_eq!(
        query.index_need().unwrap().contains.as_deref(),
        Some("tags")
    );
}

/// `T::aggregates()` and `T::ranges()` in generic code: the trait's, bounded by
/// `HasAggregates` / `HasRanges`, return what the derive's own return.
#[test]
fn aggregate_and_range_fields_are_reached_in_generic_code() {
    #[derive(serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "at")]
    #[allow(dead_code)]
    struct Sale {
        #[sharded(aggregate)]
        amount: i64,
        #[sharded(range)]
        price: i64,
        at: i64,
    }
    fn summed<T: sharded_runtime::bounds::HasAggregates>() -> T::AggregateFields {
        T::aggregates()
    }
    fn ranged<T: sharded_runtime::bounds::HasRanges>() -> T::RangeFields {
        T::ranges()
    }
    assert_eq!(summed::<Sale>().amount.path(), "amount");
    assert_eq!(ranged::<Sale>().price.path(), "price");
}
