//! One description of a collection: what the derive compiles into `Sharded::DESCRIPTION` is
//! what `sharded-build` reads from the same sources (and plans and records), field for field:
//! renames, a quoted shard field, nested paths through `StoredNames`, field sets, aggregates
//! and a reshard schedule. The build scans a copy of this very file.

use serde::{Deserialize, Serialize};
use sharded_runtime::{
    Sharded, StoredNames,
    indexes::{CollectionDescriptionBuf, QueryScope, StoredType},
};

#[derive(Serialize, Deserialize, StoredNames)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    region_code: String,
    #[serde(rename = "postal code")]
    postal: String,
}

#[derive(Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(
    shards = 4,
    previous(shards = 6, since = "2026-01-01T00:00:00Z"),
    order_by = "visited_at",
    direction = "asc",
    collection = "visits",
    shard_field = "shard-id"
)]
#[sharded(index(venue_code, kind), ranges(wait_minutes, rating))]
pub struct Visit {
    #[sharded(index(region_code: String, postal: String))]
    place: Place,
    #[sharded(index)]
    venue_code: String,
    kind: String,
    #[sharded(aggregate)]
    spend: i64,
    #[sharded(range)]
    rating: i64,
    #[sharded(range)]
    wait_minutes: i64,
    visited_at: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shard_values = ["x", "y"], order_by = "at")]
pub struct Reading {
    at: f64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "users/sessions",
    collection = "events",
    collection_group
)]
pub struct Event {
    #[sharded(index)]
    kind: String,
    at: i64,
}

/// Fields of every kind a write is held to: required and not, by type, renamed, defaulted,
/// skipped and flattened.
#[derive(Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(shards = 3, order_by = "posted_at", server_timestamp)]
pub struct Post {
    #[sharded(index)]
    topic: String,
    title: Option<String>,
    #[sharded(counter(shards = 4))]
    like_count: i64,
    #[serde(default)]
    views: u32,
    score: f64,
    tags: Vec<String>,
    flags: std::collections::BTreeMap<String, bool>,
    place: Place,
    #[serde(rename = "pinned!")]
    pinned: bool,
    // Skipped by serde, so nothing reads it: what the description leaves out.
    #[serde(skip)]
    #[allow(dead_code)]
    cache: u8,
    #[serde(flatten)]
    extra: std::collections::HashMap<String, String>,
    posted_at: sharded_runtime::firestore::FirestoreTimestamp,
}

// The most shard values a type may have: the derive takes numbered values from the runtime's
// shared table, whose end this reaches.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 1000, order_by = "at")]
pub struct Crowd {
    at: i64,
}

#[test]
fn the_derive_and_the_build_describe_a_collection_alike() {
    let dir = std::env::temp_dir().join(format!("sharded-description-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let this = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/description.rs");
    std::fs::copy(this, src.join("lib.rs")).unwrap();
    let outcome = sharded_build::Indexes::from_env()
        .sources(&src)
        .output(dir.join("firestore.indexes.json"))
        .crate_name("description")
        .check(false)
        .run()
        .unwrap();
    let built = |name: &str| {
        outcome
            .types
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("the build found no {name}"))
            .description
            .clone()
    };
    let visit = CollectionDescriptionBuf::from(&Visit::DESCRIPTION);
    assert_eq!(built("Visit"), visit);
    assert_eq!(visit.shard_field, "`shard-id`");
    assert_eq!(
        visit.indexed_fields,
        ["place.regionCode", "place.`postal code`", "venueCode"]
    );
    assert_eq!(visit.field_sets, [["venueCode", "kind"]]);
    // Stored names, in the order Firestore orders inequality fields.
    assert_eq!(visit.range_sets, [["rating", "waitMinutes"]]);
    assert_eq!(visit.reshard_since, Some(1_767_225_600));
    assert_eq!(
        built("Reading"),
        CollectionDescriptionBuf::from(&Reading::DESCRIPTION)
    );
    assert_eq!(Reading::DESCRIPTION.collection, "readings");
    let crowd = built("Crowd");
    assert_eq!(crowd, CollectionDescriptionBuf::from(&Crowd::DESCRIPTION));
    assert_eq!(crowd.shard_values.len(), 1000);
    assert_eq!(crowd.shard_values.last().map(String::as_str), Some("999"));
    assert_eq!(built("Visit").plan(), Visit::indexes());
    // Every stored field, with the type a write must hold and whether it must be there.
    let post = built("Post");
    assert_eq!(post, CollectionDescriptionBuf::from(&Post::DESCRIPTION));
    let fields: Vec<(String, StoredType, bool)> = post
        .fields
        .iter()
        .map(|f| (f.path.clone(), f.stored_type, f.required))
        .collect();
    let field = |path: &str, stored_type, required| (path.to_owned(), stored_type, required);
    assert_eq!(
        fields,
        [
            field("topic", StoredType::String, true),
            field("title", StoredType::String, false),
            field("likeCount", StoredType::Integer, true),
            field("views", StoredType::Integer, false),
            field("score", StoredType::Number, true),
            field("tags", StoredType::List, true),
            field("flags", StoredType::Map, true),
            field("place", StoredType::Other, true),
            field("`pinned!`", StoredType::Boolean, true),
            field("postedAt", StoredType::Timestamp, true),
        ]
    );
    // A subcollection with group queries: every index in both scopes, side by side.
    let event = built("Event");
    assert_eq!(event, CollectionDescriptionBuf::from(&Event::DESCRIPTION));
    assert_eq!(event.parent_collections, ["users", "sessions"]);
    let plan = event.plan();
    let scopes = |scope| {
        plan.indexes
            .iter()
            .filter(|index| index.query_scope == scope)
            .map(|index| index.fields.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(scopes(QueryScope::Collection).len(), 2);
    assert_eq!(
        scopes(QueryScope::Collection),
        scopes(QueryScope::CollectionGroup)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
