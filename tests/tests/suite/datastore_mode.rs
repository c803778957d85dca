//! Firestore in Datastore mode, on the emulator started with `--database-mode=datastore-mode`:
//! a sharded kind answers every query shape (equality, `IN`, ranges, both directions, pages
//! through Datastore cursors, counts, sums) exactly as the same Datastore query on an
//! unsharded twin kind holding the same entities answers it, at 3, 40 and 61 shard values,
//! with ties on the order property, null properties and legacy entities that lack the order
//! or the queried property. Each query's index need is checked against the `index.yaml` the
//! build writes for the type.

use std::collections::HashMap;
use std::ops::Bound;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_emulator::emulator::Emulator;
use sharded_runtime::datastore::{BulkPut, Datastore, Kind};
use sharded_runtime::firestore::gcloud_sdk::google::datastore::v1 as ds;
use sharded_runtime::firestore::gcloud_sdk::google::datastore::v1::datastore_client::DatastoreClient;
use sharded_runtime::firestore::gcloud_sdk::google_cloud_auth::credentials::anonymous;
use sharded_runtime::firestore::gcloud_sdk::{GoogleApi, GoogleAuthMiddleware};
use sharded_runtime::reads::{Number, NumericField, query_id};
use sharded_runtime::{Sharded, ShardedQuery};

pub(crate) fn emulator() -> &'static Emulator {
    Emulator::shared_datastore_mode().unwrap_or_else(|err| panic!("{err}"))
}

pub(crate) fn project(name: &str) -> String {
    format!("{name}-{:08x}", rand::random::<u32>())
}

/// A client of a project of its own on the shared Datastore-mode emulator, and the project.
pub(crate) async fn fresh_datastore(name: &str) -> (Datastore, String) {
    let project = project(name);
    let datastore = Datastore::emulator(emulator().host(), &project)
        .await
        .unwrap();
    (datastore, project)
}

pub(crate) type Raw = GoogleApi<DatastoreClient<GoogleAuthMiddleware>>;

/// A client of the Datastore API itself, for the unsharded twin.
pub(crate) async fn raw_client() -> Raw {
    GoogleApi::from_function_with_credentials(
        DatastoreClient::new,
        format!("http://{}", emulator().host()),
        None,
        anonymous::Builder::new().build(),
    )
    .await
    .unwrap()
}

macro_rules! reading {
    ($name:ident, $shards:literal, $direction:literal, $kind:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $kind, reversible)]
        pub(crate) struct $name {
            #[sharded(index)]
            pub(crate) venue: String,
            #[sharded(index)]
            pub(crate) region: Option<String>,
            pub(crate) at: i64,
            #[sharded(aggregate)]
            pub(crate) qty: i64,
            pub(crate) note: String,
        }

        impl Reading for $name {
            fn new(venue: String, region: Option<String>, at: i64, qty: i64, note: String) -> Self {
                $name { venue, region, at, qty, note }
            }
            fn at_venue(venue: String) -> ShardedQuery<Self, { query_id("venue") }> {
                $name::query().venue(venue)
            }
            fn venues_in(venues: Vec<String>) -> ShardedQuery<Self, { query_id("venue") }> {
                $name::query().venue_in(venues)
            }
            fn in_region(region: String) -> ShardedQuery<Self, { query_id("region") }> {
                $name::query().region(region)
            }
            fn all() -> ShardedQuery<Self, { query_id("all") }> {
                $name::query().all()
            }
            fn summed() -> NumericField<Self> {
                $name::aggregates().qty
            }
        }
    };
}

pub(crate) trait Reading:
    Sharded<OrderValue = i64>
    + sharded_runtime::bounds::TopLevel
    + sharded_runtime::bounds::Reversible
    + Clone
    + std::fmt::Debug
{
    fn new(venue: String, region: Option<String>, at: i64, qty: i64, note: String) -> Self;
    fn at_venue(venue: String) -> ShardedQuery<Self, { query_id("venue") }>;
    fn venues_in(venues: Vec<String>) -> ShardedQuery<Self, { query_id("venue") }>;
    fn in_region(region: String) -> ShardedQuery<Self, { query_id("region") }>;
    fn all() -> ShardedQuery<Self, { query_id("all") }>;
    fn summed() -> NumericField<Self>;
}

reading!(Reading3, 3, "desc", "Reading3");
reading!(Reading40, 40, "asc", "Reading40");
reading!(Reading61, 61, "desc", "Reading61");

pub(crate) const VENUES: [&str; 4] = ["XNAS", "XNYS", "XLON", "XTKS"];
const REGIONS: [&str; 2] = ["eu", "us"];

/// One query shape, as the sharded query and as the twin's filter.
#[derive(Debug, Clone)]
enum Shape {
    All,
    Venue(String),
    VenuesIn(Vec<String>),
    Region(String),
}

pub(crate) fn string(value: &str) -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::StringValue(value.to_owned())),
        ..Default::default()
    }
}

pub(crate) fn integer(value: i64) -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::IntegerValue(value)),
        ..Default::default()
    }
}

pub(crate) fn null() -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::NullValue(0)),
        ..Default::default()
    }
}

fn property_filter(name: &str, op: ds::property_filter::Operator, value: ds::Value) -> ds::Filter {
    ds::Filter {
        filter_type: Some(ds::filter::FilterType::PropertyFilter(ds::PropertyFilter {
            property: Some(ds::PropertyReference { name: name.into() }),
            op: op as i32,
            value: Some(value),
        })),
    }
}

/// The unsharded twin: a kind holding the same entities without a shard, queried by
/// Datastore itself.
pub(crate) struct Twin {
    pub(crate) raw: Raw,
    pub(crate) partition: ds::PartitionId,
    pub(crate) kind: String,
}

impl Twin {
    pub(crate) fn key(&self, id: &str) -> ds::Key {
        let numeric = id
            .strip_prefix("__id")
            .and_then(|rest| rest.strip_suffix("__"))
            .and_then(|n| n.parse().ok());
        ds::Key {
            partition_id: Some(self.partition.clone()),
            path: vec![ds::key::PathElement {
                kind: self.kind.clone(),
                id_type: Some(match numeric {
                    Some(n) => ds::key::path_element::IdType::Id(n),
                    None => ds::key::path_element::IdType::Name(id.into()),
                }),
            }],
        }
    }

    pub(crate) async fn write(&self, entities: Vec<(String, HashMap<String, ds::Value>)>) {
        for chunk in entities.chunks(500) {
            let mutations = chunk
                .iter()
                .map(|(id, properties)| ds::Mutation {
                    operation: Some(ds::mutation::Operation::Upsert(ds::Entity {
                        key: Some(self.key(id)),
                        properties: properties.clone(),
                    })),
                    ..Default::default()
                })
                .collect();
            self.raw
                .get()
                .commit(ds::CommitRequest {
                    project_id: self.partition.project_id.clone(),
                    mode: ds::commit_request::Mode::NonTransactional as i32,
                    mutations,
                    ..Default::default()
                })
                .await
                .unwrap();
        }
    }

    fn query(&self, shape: &Shape, range: (Bound<i64>, Bound<i64>), descending: bool) -> ds::Query {
        use ds::property_filter::Operator as Op;
        let mut filters = Vec::new();
        match shape {
            Shape::All => {}
            Shape::Venue(venue) => filters.push(property_filter("venue", Op::Equal, string(venue))),
            Shape::VenuesIn(venues) => filters.push(property_filter(
                "venue",
                Op::In,
                ds::Value {
                    value_type: Some(ds::value::ValueType::ArrayValue(ds::ArrayValue {
                        values: venues.iter().map(|v| string(v)).collect(),
                    })),
                    ..Default::default()
                },
            )),
            Shape::Region(region) => {
                filters.push(property_filter("region", Op::Equal, string(region)))
            }
        }
        match range.0 {
            Bound::Included(at) => {
                filters.push(property_filter("at", Op::GreaterThanOrEqual, integer(at)))
            }
            Bound::Excluded(at) => {
                filters.push(property_filter("at", Op::GreaterThan, integer(at)))
            }
            Bound::Unbounded => {}
        }
        match range.1 {
            Bound::Included(at) => {
                filters.push(property_filter("at", Op::LessThanOrEqual, integer(at)))
            }
            Bound::Excluded(at) => filters.push(property_filter("at", Op::LessThan, integer(at))),
            Bound::Unbounded => {}
        }
        let direction = match descending {
            true => ds::property_order::Direction::Descending,
            false => ds::property_order::Direction::Ascending,
        } as i32;
        let order = |name: &str| ds::PropertyOrder {
            property: Some(ds::PropertyReference { name: name.into() }),
            direction,
        };
        ds::Query {
            kind: vec![ds::KindExpression {
                name: self.kind.clone(),
            }],
            filter: Some(ds::Filter {
                filter_type: Some(ds::filter::FilterType::CompositeFilter(
                    ds::CompositeFilter {
                        op: ds::composite_filter::Operator::And as i32,
                        filters,
                    },
                )),
            }),
            order: vec![order("at"), order("__key__")],
            ..Default::default()
        }
    }

    /// The ids the twin query returns, read a page of `limit` at a time by Datastore cursors.
    async fn ids(&self, mut query: ds::Query) -> Vec<String> {
        let mut ids = Vec::new();
        loop {
            let batch = self
                .raw
                .get()
                .run_query(ds::RunQueryRequest {
                    project_id: self.partition.project_id.clone(),
                    partition_id: Some(self.partition.clone()),
                    query_type: Some(ds::run_query_request::QueryType::Query(query.clone())),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .batch
                .unwrap();
            for result in &batch.entity_results {
                let key = result.entity.as_ref().unwrap().key.as_ref().unwrap();
                match &key.path.last().unwrap().id_type {
                    Some(ds::key::path_element::IdType::Name(name)) => ids.push(name.clone()),
                    Some(ds::key::path_element::IdType::Id(n)) => ids.push(format!("__id{n}__")),
                    None => panic!("a key without an id"),
                }
            }
            if batch.more_results == ds::query_result_batch::MoreResultsType::NoMoreResults as i32
                || batch.entity_results.is_empty()
            {
                return ids;
            }
            query.start_cursor = batch.end_cursor;
        }
    }

    /// The aggregations `aggregations` (alias, operator) of `query`, each by its alias.
    async fn aggregate(
        &self,
        query: ds::Query,
        aggregations: Vec<(&str, ds::aggregation_query::aggregation::Operator)>,
    ) -> HashMap<String, ds::Value> {
        let batch = self
            .raw
            .get()
            .run_aggregation_query(ds::RunAggregationQueryRequest {
                project_id: self.partition.project_id.clone(),
                partition_id: Some(self.partition.clone()),
                query_type: Some(
                    ds::run_aggregation_query_request::QueryType::AggregationQuery(
                        ds::AggregationQuery {
                            aggregations: aggregations
                                .into_iter()
                                .map(|(alias, operator)| ds::aggregation_query::Aggregation {
                                    alias: alias.into(),
                                    operator: Some(operator),
                                })
                                .collect(),
                            query_type: Some(ds::aggregation_query::QueryType::NestedQuery(query)),
                        },
                    ),
                ),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .batch
            .unwrap();
        batch.aggregation_results[0].aggregate_properties.clone()
    }
}

fn count_all() -> ds::aggregation_query::aggregation::Operator {
    use ds::aggregation_query::aggregation::{Count, Operator};
    Operator::Count(Count { up_to: None })
}

fn sum_of(property: &str) -> ds::aggregation_query::aggregation::Operator {
    use ds::aggregation_query::aggregation::{Operator, Sum};
    Operator::Sum(Sum {
        property: Some(ds::PropertyReference {
            name: property.into(),
        }),
    })
}

fn ids<T>(items: &[sharded_runtime::Stored<T>]) -> Vec<String> {
    items.iter().map(|item| item.id.clone()).collect()
}

/// The sharded query's answers against the twin's: every entity in order, every page, the
/// count and the sum; and its index need served by the written `index.yaml`.
async fn check<T: Reading, const Q: u64, R: sharded_runtime::bounds::Reach>(
    kind: &Kind<T>,
    twin: &Twin,
    query: ShardedQuery<T, Q, R>,
    expected_query: ds::Query,
    page: u32,
    index_yaml: &[sharded_runtime::indexes::datastore::KindIndex],
    what: &str,
) {
    let expected = twin.ids(expected_query.clone()).await;
    let fetched = kind
        .fetch(&query)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(ids(&fetched), expected, "{what}: fetch");
    let keys = kind.fetch_keys(&query).await.unwrap();
    let key_ids: Vec<String> = keys.iter().map(|key| key.id.clone()).collect();
    assert_eq!(key_ids, expected, "{what}: fetch_keys");
    let mut paged = Vec::new();
    let mut cursor = None;
    loop {
        let next = kind.page(&query, page, cursor.as_ref()).await.unwrap();
        assert!(next.items.len() <= page as usize, "{what}: page size");
        paged.extend(ids(&next.items));
        match next.next {
            Some(next) => {
                let token = next.to_token();
                cursor =
                    Some(sharded_runtime::datastore::DatastoreCursor::from_token(&token).unwrap());
            }
            None => break,
        }
        assert!(
            paged.len() <= expected.len() + page as usize,
            "{what}: pages without end"
        );
    }
    assert_eq!(paged, expected, "{what}: pages of {page}");
    let count = kind.count(&query).await.unwrap();
    // The unsharded aggregation reads in the order property's order, as the sharded one does.
    let ordered = ds::Query {
        order: expected_query.order[..1].to_vec(),
        ..expected_query
    };
    let twin_count = match &twin
        .aggregate(ordered.clone(), vec![("v", count_all())])
        .await["v"]
        .value_type
    {
        Some(ds::value::ValueType::IntegerValue(n)) => *n as u64,
        other => panic!("{other:?}"),
    };
    assert_eq!(count, twin_count, "{what}: count");
    let sum = kind.sum(&query, T::summed()).await.unwrap();
    let twin_sum = match &twin.aggregate(ordered, vec![("v", sum_of("qty"))]).await["v"].value_type
    {
        Some(ds::value::ValueType::IntegerValue(n)) => Number::Integer(*n),
        Some(ds::value::ValueType::DoubleValue(d)) => Number::Double(*d),
        other => panic!("{other:?}"),
    };
    assert_eq!(sum, twin_sum, "{what}: sum");
    for need in query.index_needs().unwrap() {
        assert!(
            index_yaml.iter().any(|index| index.serves(&need, false)),
            "{what}: no index of index.yaml serves {need:?}"
        );
    }
}

/// The `index.yaml` the build writes for `T`, read back.
fn written_index_yaml<T: Sharded>() -> Vec<sharded_runtime::indexes::datastore::KindIndex> {
    let dir = std::env::temp_dir().join(format!(
        "sharded-datastore-{}-{:08x}",
        T::COLLECTION,
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let output = dir.join("index.yaml");
    sharded_build::Indexes::from_env()
        .sources(dir.join("src"))
        .crate_name("app")
        .include(T::COLLECTION, &T::DESCRIPTION)
        .datastore()
        .output(&output)
        .run()
        .unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    sharded_build::read_index_yaml(&text).unwrap()
}

async fn equal_to_the_twin<T: Reading>(seed: u64) {
    let project = project(&format!("ds-{}", T::COLLECTION.to_lowercase()));
    let datastore = Datastore::emulator(emulator().host(), &project)
        .await
        .unwrap()
        .namespace("tenant-a");
    let kind = datastore.kind::<T>();
    let twin = Twin {
        raw: raw_client().await,
        partition: ds::PartitionId {
            project_id: project.clone(),
            database_id: String::new(),
            namespace_id: "tenant-a".into(),
        },
        kind: format!("Twin{}", T::COLLECTION),
    };
    let index_yaml = written_index_yaml::<T>();
    let mut rng = StdRng::seed_from_u64(seed);
    let times = rng.random_range(2..10);
    let mut documents: Vec<(String, T)> = Vec::new();
    for i in 0..rng.random_range(60..180) {
        let reading = T::new(
            VENUES[rng.random_range(0..VENUES.len())].into(),
            match rng.random_range(0..3) {
                0 => None,
                n => Some(REGIONS[n - 1].into()),
            },
            rng.random_range(0..times),
            rng.random_range(-1_000..1_000),
            format!("note {i}"),
        );
        // Ids of mixed case, digits and non-ASCII, so that key order is tested, not assumed.
        let id = format!(
            "{}{:04}-{i}",
            ["a", "B", "é", "z", "0"][rng.random_range(0..5)],
            rng.random_range(0..10_000)
        );
        documents.push((id, reading));
    }
    // Numeric ids Datastore allocates, which order before every name.
    for (i, id) in kind.allocate_ids(6).await.unwrap().into_iter().enumerate() {
        let reading = T::new(
            VENUES[i % 4].into(),
            None,
            rng.random_range(0..times),
            1,
            format!("n{i}"),
        );
        documents.push((id, reading));
    }
    let report = kind
        .bulk_put(documents.clone(), &BulkPut::default(), |_| {})
        .await
        .unwrap();
    assert_eq!(report.written, documents.len());
    // The twin holds the same properties without the shard.
    let stored = kind.fetch(&T::all()).await.unwrap();
    assert_eq!(stored.len(), documents.len());
    let twin_entities = documents
        .iter()
        .map(|(id, document)| {
            let json = serde_json::to_value(document).unwrap();
            let mut properties = HashMap::new();
            for (name, value) in json.as_object().unwrap() {
                let value = match value {
                    serde_json::Value::Null => null(),
                    serde_json::Value::String(s) => string(s),
                    serde_json::Value::Number(n) => integer(n.as_i64().unwrap()),
                    other => panic!("{other:?}"),
                };
                properties.insert(name.clone(), value);
            }
            (id.clone(), properties)
        })
        .collect();
    twin.write(twin_entities).await;
    // Legacy entities another program wrote: with a shard but no `at` (no ordered query
    // returns it), or no `region` (a region query does not return it; the others do).
    let legacy = |shard: bool, without: &str| {
        let mut properties = HashMap::from([
            ("venue".to_owned(), string("XNAS")),
            ("region".to_owned(), string("eu")),
            ("at".to_owned(), integer(1)),
            ("qty".to_owned(), integer(7)),
            ("note".to_owned(), string("legacy")),
        ]);
        properties.remove(without);
        if shard {
            properties.insert("shard".into(), string(T::READ_SHARD_VALUES[0]));
        }
        properties
    };
    let sharded_twin = Twin {
        raw: raw_client().await,
        partition: twin.partition.clone(),
        kind: T::COLLECTION.into(),
    };
    for without in ["at", "region"] {
        sharded_twin
            .write(vec![(
                format!("legacy-no-{without}"),
                legacy(true, without),
            )])
            .await;
        twin.write(vec![(
            format!("legacy-no-{without}"),
            legacy(false, without),
        )])
        .await;
    }
    for round in 0..5 {
        let bound = |rng: &mut StdRng| match rng.random_range(0..3) {
            0 => Bound::Unbounded,
            1 => Bound::Included(rng.random_range(0..times)),
            _ => Bound::Excluded(rng.random_range(0..times)),
        };
        let range = (bound(&mut rng), bound(&mut rng));
        let page = rng.random_range(1..25);
        let shape = match rng.random_range(0..4) {
            0 => Shape::All,
            1 => Shape::Venue(VENUES[rng.random_range(0..VENUES.len())].into()),
            2 => Shape::VenuesIn(
                VENUES
                    .iter()
                    .filter(|_| rng.random_bool(0.5))
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .into_iter()
                    .chain(["XNAS".to_owned()])
                    .collect(),
            ),
            _ => Shape::Region(REGIONS[rng.random_range(0..REGIONS.len())].into()),
        };
        for reversed in [false, true] {
            let descending = (T::DESCRIPTION.direction
                == sharded_runtime::indexes::Direction::Descending)
                != reversed;
            let what = format!(
                "{} round {round} {shape:?} {range:?} reversed {reversed} page {page}",
                T::COLLECTION
            );
            let expected = twin.query(&shape, range, descending);
            macro_rules! run {
                ($query:expr) => {{
                    let query = $query.range(range);
                    match reversed {
                        false => {
                            check(&kind, &twin, query, expected, page, &index_yaml, &what).await
                        }
                        true => {
                            check(
                                &kind,
                                &twin,
                                query.reversed(),
                                expected,
                                page,
                                &index_yaml,
                                &what,
                            )
                            .await
                        }
                    }
                }};
            }
            match &shape {
                Shape::All => run!(T::all()),
                Shape::Venue(venue) => run!(T::at_venue(venue.clone())),
                Shape::VenuesIn(venues) => run!(T::venues_in(venues.clone())),
                Shape::Region(region) => run!(T::in_region(region.clone())),
            }
        }
    }
}

#[tokio::test]
async fn three_shard_values_answer_as_the_unsharded_kind() {
    equal_to_the_twin::<Reading3>(3).await;
}

#[tokio::test]
async fn forty_shard_values_answer_as_the_unsharded_kind() {
    equal_to_the_twin::<Reading40>(40).await;
}

#[tokio::test]
async fn sixty_one_shard_values_answer_as_the_unsharded_kind() {
    equal_to_the_twin::<Reading61>(61).await;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 5,
    order_by = "at",
    parent = "Room",
    collection = "Post",
    collection_group
)]
pub(crate) struct Post {
    #[sharded(index)]
    author: String,
    at: i64,
    body: String,
}

/// A post by `author` at `at`, with no body.
fn post(author: &str, at: i64) -> Post {
    Post {
        author: author.into(),
        at,
        body: String::new(),
    }
}

/// The raw entity `id` of `kind` (under `ancestors`), as Datastore holds it.
async fn raw_entity(
    project: &str,
    ancestors: &[(&str, &str)],
    kind: &str,
    id: &str,
) -> Option<ds::Entity> {
    let mut path: Vec<ds::key::PathElement> = ancestors
        .iter()
        .map(|(kind, name)| ds::key::PathElement {
            kind: (*kind).into(),
            id_type: Some(ds::key::path_element::IdType::Name((*name).into())),
        })
        .collect();
    path.push(ds::key::PathElement {
        kind: kind.into(),
        id_type: Some(ds::key::path_element::IdType::Name(id.into())),
    });
    let answer = raw_client()
        .await
        .get()
        .lookup(ds::LookupRequest {
            project_id: project.into(),
            keys: vec![ds::Key {
                partition_id: Some(ds::PartitionId {
                    project_id: project.into(),
                    ..Default::default()
                }),
                path,
            }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    answer
        .found
        .into_iter()
        .next()
        .and_then(|found| found.entity)
}

#[tokio::test]
async fn every_write_draws_a_shard_and_excludes_what_no_query_reads() {
    let (datastore, project) = fresh_datastore("ds-writes").await;
    let lobby = sharded_runtime::Parent::<Post>::new(&["lobby"]).unwrap();
    let posts = datastore.kind_in(&lobby);
    // A body too long for an index: it is stored only because it is excluded.
    let long_post = |author: &str, at: i64| Post {
        author: author.into(),
        at,
        body: "x".repeat(2_000),
    };
    // Single writes: insert refuses an existing id, update a missing one.
    posts.insert("p1", &long_post("ann", 1)).await.unwrap();
    match posts.insert("p1", &long_post("ann", 1)).await {
        Err(sharded_runtime::Error::Datastore { code, .. }) => {
            assert_eq!(code, sharded_runtime::writes::StatusCode::AlreadyExists)
        }
        other => panic!("{other:?}"),
    }
    match posts.update("missing", &long_post("ann", 1)).await {
        Err(sharded_runtime::Error::Datastore { code, .. }) => {
            assert_eq!(code, sharded_runtime::writes::StatusCode::NotFound)
        }
        other => panic!("{other:?}"),
    }
    posts.upsert("p2", &long_post("bob", 2)).await.unwrap();
    posts
        .upsert_all([("p3", &long_post("ann", 3)), ("p4", &long_post("bob", 3))])
        .await
        .unwrap();
    // A batch is checked before anything is sent.
    assert!(
        posts
            .upsert_all([("p5", &long_post("a", 5)), ("p5", &long_post("a", 5))])
            .await
            .is_err()
    );
    assert_eq!(posts.get("p5").await.unwrap(), None);
    // Batch reads in the order asked, and batch deletes.
    let got = posts.get_all(["p4", "nope", "p3"]).await.unwrap();
    let got: Vec<Option<&str>> = got
        .iter()
        .map(|s| s.as_ref().map(|s| s.id.as_str()))
        .collect();
    assert_eq!(got, [Some("p4"), None, Some("p3")]);
    assert!(posts.get_all(["p3", "p3"]).await.is_err());
    posts
        .upsert_all([("d1", &long_post("x", 1)), ("d2", &long_post("x", 1))])
        .await
        .unwrap();
    posts.delete_all(["d1", "d2", "never"]).await.unwrap();
    assert_eq!(posts.get_all(["d1", "d2"]).await.unwrap(), [None, None]);
    // The entity: under its ancestor, a shard of the type's, the 2,000-byte body excluded from
    // indexes (an indexed string is at most 1,500 bytes), the queried properties indexed.
    let entity = raw_entity(&project, &[("Room", "lobby")], "Post", "p1")
        .await
        .unwrap();
    let shard = match &entity.properties["shard"].value_type {
        Some(ds::value::ValueType::StringValue(shard)) => shard.clone(),
        other => panic!("{other:?}"),
    };
    assert!(Post::READ_SHARD_VALUES.contains(&shard.as_str()), "{shard}");
    assert!(entity.properties["body"].exclude_from_indexes);
    for queried in ["shard", "author", "at"] {
        assert!(
            !entity.properties[queried].exclude_from_indexes,
            "{queried}"
        );
    }
    let stored = posts.get("p1").await.unwrap().unwrap();
    assert_eq!(
        (stored.id.as_str(), stored.parent.as_deref()),
        ("p1", Some("Room/lobby"))
    );
    assert_eq!(stored.shard, shard);
    // A transaction: its writes land together, or not at all.
    let mut transaction = datastore.begin().await.unwrap();
    assert_eq!(
        transaction
            .get(&posts, "p1")
            .await
            .unwrap()
            .unwrap()
            .document,
        long_post("ann", 1)
    );
    transaction
        .upsert(&posts, "t1", &long_post("cy", 4))
        .unwrap();
    transaction.delete(&posts, "p2").unwrap();
    transaction.commit().await.unwrap();
    assert!(posts.get("t1").await.unwrap().is_some());
    assert!(posts.get("p2").await.unwrap().is_none());
    let mut rolled_back = datastore.begin().await.unwrap();
    rolled_back
        .upsert(&posts, "t2", &long_post("cy", 5))
        .unwrap();
    rolled_back.rollback().await.unwrap();
    let mut dropped = datastore.begin().await.unwrap();
    dropped.upsert(&posts, "t3", &long_post("cy", 6)).unwrap();
    drop(dropped);
    assert!(posts.get("t2").await.unwrap().is_none());
    assert!(posts.get("t3").await.unwrap().is_none());
    // Another parent's posts, read by the group query and not by the lobby's.
    let hall = sharded_runtime::Parent::<Post>::new(&["hall"]).unwrap();
    datastore
        .kind_in(&hall)
        .insert("h1", &long_post("ann", 9))
        .await
        .unwrap();
    let in_lobby = ids(&posts
        .fetch(&Post::query().author("ann".to_owned()))
        .await
        .unwrap());
    // Newest first: the default direction.
    assert_eq!(in_lobby, ["p3", "p1"]);
    let everywhere = ids(&posts
        .fetch(&Post::query().author("ann".to_owned()).in_group())
        .await
        .unwrap());
    assert_eq!(everywhere, ["h1", "p3", "p1"]);
    assert_eq!(posts.count(&Post::query().all()).await.unwrap(), 4);
    // Deleted, and another namespace sees none of it.
    posts.delete("p1").await.unwrap();
    assert!(posts.get("p1").await.unwrap().is_none());
    let other = datastore.clone().namespace("other").kind_in(&lobby);
    assert_eq!(other.count(&Post::query().all()).await.unwrap(), 0);
}

#[tokio::test]
async fn what_datastore_mode_cannot_do_is_refused_before_anything_is_sent() {
    let (datastore, _) = fresh_datastore("ds-refusals").await;
    let lobby = sharded_runtime::Parent::<Post>::new(&["lobby"]).unwrap();
    let posts = datastore.kind_in(&lobby);
    let cursor = sharded_runtime::Cursor::at_in(&1, &lobby, "p1").unwrap();
    let query = Post::query().all().after(cursor);
    match posts.fetch(&query).await {
        Err(sharded_runtime::Error::InvalidQuery(why)) => {
            assert!(why.contains("Datastore"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // A cursor of another query is refused, not misread.
    posts.insert("p1", &post("ann", 1)).await.unwrap();
    posts.insert("p2", &post("ann", 2)).await.unwrap();
    let first = posts.page(&Post::query().all(), 1, None).await.unwrap();
    let next = first.next.unwrap();
    match posts
        .page(&Post::query().author("ann".to_owned()), 1, Some(&next))
        .await
    {
        Err(sharded_runtime::Error::InvalidCursor(_)) => {}
        other => panic!("{other:?}"),
    }
    // A top-level kind of a type with parents is refused.
    match datastore.kind::<Post>().insert("x", &post("a", 1)).await {
        Err(sharded_runtime::Error::InvalidParent(_)) => {}
        other => panic!("{other:?}"),
    }
    // Ids that rise one after another are reported (and logged), by single writes and by the
    // bulk writer alike; random ones are not.
    let singles = datastore.kind_in(&lobby);
    for i in 0..40 {
        let id = format!("{:016x}", rand::random::<u64>());
        singles.upsert(&id, &post("r", i)).await.unwrap();
    }
    assert_eq!(singles.sequential_ids(), None);
    let singles = datastore.kind_in(&lobby);
    for i in 0..32 {
        singles
            .upsert(&format!("one-{i:03}"), &post("o", i))
            .await
            .unwrap();
    }
    assert_eq!(
        singles.sequential_ids().as_deref(),
        Some("`one-000` … `one-031`")
    );
    // Ids Datastore allocates are scattered, not sequential.
    let allocated = singles.allocate_ids(40).await.unwrap();
    let mut distinct = allocated.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 40);
    let fresh = datastore.kind_in(&lobby);
    for id in &allocated {
        fresh.upsert(id, &post("n", 1)).await.unwrap();
    }
    assert_eq!(fresh.sequential_ids(), None, "{allocated:?}");
    let new_id = fresh.insert_new(&post("new", 2)).await.unwrap();
    assert!(new_id.starts_with("__id"), "{new_id}");
    assert_eq!(
        fresh.get(&new_id).await.unwrap().unwrap().document.author,
        "new"
    );
    let report = datastore
        .kind_in(&lobby)
        .bulk_put(
            (0..40).map(|i| (format!("seq-{i:04}"), post("s", i))),
            &BulkPut::default(),
            |_| {},
        )
        .await
        .unwrap();
    assert_eq!(report.written, 40);
    assert_eq!(
        report.sequential_ids.as_deref(),
        Some("`seq-0000` … `seq-0031`")
    );
    match posts
        .bulk_put(
            std::iter::empty(),
            &BulkPut {
                batch_size: 501,
                ..BulkPut::default()
            },
            |_| {},
        )
        .await
    {
        Err(sharded_runtime::Error::InvalidOptions { option, .. }) => {
            assert_eq!(option, "batch_size")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_emulator_in_datastore_mode_refuses_firestore_calls() {
    let emulator = emulator();
    assert_eq!(
        emulator.mode(),
        sharded_emulator::emulator::DatabaseMode::Datastore
    );
    let db = emulator.db(&project("ds-native")).await.unwrap();
    let error = db
        .fluent()
        .select()
        .by_id_in("c")
        .one("d")
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("Datastore Mode") || error.to_string().contains("Database mode"),
        "{error}"
    );
}

/// The page's migration to a new kind: an old unsharded kind with sequential ids is copied
/// into the sharded kind in lanes (so no run of rising ids is written), stopped part way and
/// resumed from its checkpoint token; entities the app already wrote to the new kind keep
/// their newer values; every old entity arrives exactly once; reads during the migration
/// find each entity in one kind or the other.
#[tokio::test]
async fn a_migration_between_kinds_copies_each_entity_once_in_lanes_and_resumes() {
    use sharded_runtime::datastore::{Migration, MigrationCheckpoint};
    use sharded_runtime::jobs::IdRange;
    use std::ops::ControlFlow;

    let (datastore, project) = fresh_datastore("ds-migration").await;
    let raw = Twin {
        raw: raw_client().await,
        partition: ds::PartitionId {
            project_id: project.clone(),
            ..Default::default()
        },
        kind: "LegacyReading".into(),
    };
    let total = 700;
    let old = |i: usize| {
        HashMap::from([
            ("venue".to_owned(), string(VENUES[i % 4])),
            ("region".to_owned(), null()),
            ("at".to_owned(), integer(i as i64 % 50)),
            ("qty".to_owned(), integer(i as i64)),
            ("note".to_owned(), string("old")),
        ])
    };
    raw.write((0..total).map(|i| (format!("r{i:04}"), old(i))).collect())
        .await;
    let readings = datastore.kind::<Reading3>();
    // The app already writes the new kind: these must survive the copy.
    for i in [3, 350, 699] {
        let newer = Reading3::new("XNAS".into(), None, 1, -1, "newer".into());
        readings.upsert(&format!("r{i:04}"), &newer).await.unwrap();
    }
    // Concurrent reads: the new kind first, else the old one.
    let during = readings
        .get_migrating("r0010", "LegacyReading")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(during.note, "old");
    assert_eq!(
        readings
            .get_migrating("r0003", "LegacyReading")
            .await
            .unwrap()
            .unwrap()
            .note,
        "newer"
    );
    assert_eq!(
        readings
            .get_migrating("nowhere", "LegacyReading")
            .await
            .unwrap(),
        None
    );
    // Lanes at the sequential ids' own boundaries, so each commit takes from all seven.
    let bounds: Vec<String> = (1..7).map(|i| format!("r{:04}", i * 100)).collect();
    let lanes: Vec<IdRange> = (0..7)
        .map(|i| {
            IdRange::new(
                (i > 0).then(|| bounds[i - 1].as_str()),
                (i < 6).then(|| bounds[i].as_str()),
            )
            .unwrap()
        })
        .collect();
    let options = Migration {
        lanes,
        batch_size: 70,
        ..Migration::from_kind("LegacyReading")
    };
    let first = readings
        .migrate_from(&options, None, |progress| match progress.commits {
            3 => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        })
        .await
        .unwrap();
    assert_eq!(first.commits, 3);
    assert!(!first.checkpoint.is_done());
    let token = first.checkpoint.to_token();
    let resumed = readings
        .migrate_from(
            &options,
            Some(&MigrationCheckpoint::from_token(&token).unwrap()),
            |_| ControlFlow::Continue(()),
        )
        .await
        .unwrap();
    assert!(resumed.checkpoint.is_done());
    assert_eq!(first.copied + resumed.copied, total - 3);
    assert_eq!(first.already_there + resumed.already_there, 3);
    assert_eq!(readings.sequential_ids(), None, "lanes interleave the ids");
    let all = readings.fetch(&Reading3::all()).await.unwrap();
    assert_eq!(all.len(), total);
    for stored in &all {
        let newer = ["r0003", "r0350", "r0699"].contains(&stored.id.as_str());
        assert_eq!(stored.document.note == "newer", newer, "{}", stored.id);
        assert!(Reading3::READ_SHARD_VALUES.contains(&stored.shard.as_str()));
    }
    // Run again from the start: everything is there already, nothing is written twice.
    let again = readings
        .migrate_from(&options, None, |_| ControlFlow::Continue(()))
        .await
        .unwrap();
    assert_eq!((again.copied, again.already_there), (0, total));
    // One lane over sequential ids writes a rising run: the hotspot the lanes avoid.
    let one_lane = datastore.clone().namespace("one-lane");
    let raw_one = Twin {
        partition: ds::PartitionId {
            project_id: project.clone(),
            namespace_id: "one-lane".into(),
            ..Default::default()
        },
        ..raw
    };
    raw_one
        .write((0..100).map(|i| (format!("r{i:04}"), old(i))).collect())
        .await;
    let sequential = one_lane.kind::<Reading3>();
    sequential
        .migrate_from(
            &Migration {
                lanes: vec![IdRange::all()],
                ..Migration::from_kind("LegacyReading")
            },
            None,
            |_| ControlFlow::Continue(()),
        )
        .await
        .unwrap();
    assert_eq!(
        sequential.sequential_ids().as_deref(),
        Some("`r0000` … `r0031`")
    );
    // A checkpoint of another source is refused.
    match readings
        .migrate_from(
            &Migration::from_kind("Other"),
            Some(&first.checkpoint),
            |_| ControlFlow::Continue(()),
        )
        .await
    {
        Err(sharded_runtime::Error::InvalidCheckpoint(_)) => {}
        other => panic!("{other:?}"),
    }
}

/// Measured, and the reason `count` and `sum` are separate requests: an aggregation request
/// that sums a property counts only the entities that hold it, with a value of any type (a
/// string, a null), while the sum skips what is not a number.
#[tokio::test]
async fn a_count_beside_a_sum_counts_only_entities_holding_the_summed_property() {
    let project = project("ds-measure");
    let twin = Twin {
        raw: raw_client().await,
        partition: ds::PartitionId {
            project_id: project.clone(),
            ..Default::default()
        },
        kind: "M".into(),
    };
    let entity = |qty: Option<ds::Value>| {
        let mut properties = HashMap::from([("at".to_owned(), integer(1))]);
        properties.extend(qty.map(|qty| ("qty".to_owned(), qty)));
        properties
    };
    twin.write(vec![
        ("a".into(), entity(None)),
        ("b".into(), entity(Some(integer(5)))),
        ("c".into(), entity(Some(string("x")))),
        ("d".into(), entity(Some(null()))),
    ])
    .await;
    let all = ds::Query {
        kind: vec![ds::KindExpression { name: "M".into() }],
        ..Default::default()
    };
    let alone = twin.aggregate(all.clone(), vec![("c", count_all())]).await;
    assert_eq!(alone["c"], integer(4));
    let beside = twin
        .aggregate(all, vec![("c", count_all()), ("s", sum_of("qty"))])
        .await;
    assert_eq!(
        (beside["c"].clone(), beside["s"].clone()),
        (integer(3), integer(5))
    );
}

/// Through a proxy that drops connections, before requests reach the server and after it has
/// applied them (the answer lost): the bulk writer's upserts and the migration's
/// check-then-insert commits are retried, every entity is written once, and nothing is
/// reported failed.
#[tokio::test]
async fn bulk_writes_and_migrations_survive_dropped_connections_and_lost_answers() {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    use sharded_runtime::bulk::Backoff;
    use sharded_runtime::datastore::Migration;
    use std::ops::ControlFlow;

    let (_, project) = fresh_datastore("ds-faults").await;
    let proxy = FaultProxy::start(
        emulator().host(),
        Faults {
            seed: 56,
            drop_chance: 0.02,
            lost_answer_chance: 0.1,
            ..Faults::NONE
        },
    )
    .await
    .unwrap();
    let through = Datastore::emulator(&proxy.host(), &project).await.unwrap();
    let direct = Datastore::emulator(emulator().host(), &project)
        .await
        .unwrap();
    let fast = Backoff {
        initial: std::time::Duration::from_millis(10),
        max_attempts: 30,
        ..Backoff::default()
    };
    let readings: Vec<(String, Reading3)> = (0..400)
        .map(|i| {
            let id = format!("{:016x}", rand::random::<u64>());
            (
                id,
                Reading3::new(
                    VENUES[i % 4].into(),
                    None,
                    i as i64 % 9,
                    i as i64,
                    format!("{i}"),
                ),
            )
        })
        .collect();
    let report = through
        .kind::<Reading3>()
        .bulk_put(
            readings.clone(),
            &BulkPut {
                batch_size: 25,
                backoff: fast,
                ..BulkPut::default()
            },
            |_| {},
        )
        .await
        .unwrap();
    assert_eq!(report.written, readings.len());
    // Migrating them into another namespace's kind, through the same proxy.
    let raw = Twin {
        raw: raw_client().await,
        partition: ds::PartitionId {
            project_id: project.clone(),
            namespace_id: "moved".into(),
            ..Default::default()
        },
        kind: "Old".into(),
    };
    let entities = readings
        .iter()
        .map(|(id, reading)| {
            let json = serde_json::to_value(reading).unwrap();
            let properties = json
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, value)| {
                    let value = match value {
                        serde_json::Value::Null => null(),
                        serde_json::Value::String(s) => string(s),
                        serde_json::Value::Number(n) => integer(n.as_i64().unwrap()),
                        other => panic!("{other:?}"),
                    };
                    (name.clone(), value)
                })
                .collect();
            (id.clone(), properties)
        })
        .collect();
    raw.write(entities).await;
    let moved = through.clone().namespace("moved").kind::<Reading3>();
    let progress = moved
        .migrate_from(
            &Migration {
                batch_size: 40,
                backoff: fast,
                ..Migration::from_kind("Old")
            },
            None,
            |_| ControlFlow::Continue(()),
        )
        .await
        .unwrap();
    assert!(progress.checkpoint.is_done());
    // A commit whose answer was lost counts its entities as there on the retry.
    assert_eq!(progress.copied + progress.already_there, readings.len());
    assert!(proxy.dropped() > 0, "no connection was dropped");
    // Read back without the proxy: each entity once, as written.
    for (namespace, count) in [("", readings.len()), ("moved", readings.len())] {
        let kind = direct.clone().namespace(namespace).kind::<Reading3>();
        let all = kind.fetch(&Reading3::all()).await.unwrap();
        assert_eq!(all.len(), count, "{namespace:?}");
        let mut expected: Vec<&Reading3> = readings.iter().map(|(_, r)| r).collect();
        let mut stored: Vec<&Reading3> = all.iter().map(|s| &s.document).collect();
        expected.sort_by_key(|r| r.note.clone());
        stored.sort_by_key(|r| r.note.clone());
        assert_eq!(stored, expected, "{namespace:?}");
    }
}
