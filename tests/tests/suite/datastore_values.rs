//! What Datastore mode holds and how it orders it, read through Google's own Python Datastore
//! client on the emulator in Datastore mode, and the library held to it: the merge's value
//! order, a double order field merged across 40 shard values exactly as the unsharded kind
//! orders it, the one id rule, and `limit_to_last`.

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::gcloud_sdk::google::datastore::v1 as ds;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};

use crate::datastore_mode::{
    Reading, Reading3, Twin, emulator, fresh_datastore, raw_client, string,
};

/// The values `tests/python/datastore_order.py` writes, by name, as Firestore values (a blob
/// as bytes, a key as a reference).
fn measured_values() -> HashMap<&'static str, Value> {
    use sharded_runtime::firestore::gcloud_sdk::google::r#type::LatLng;
    use sharded_runtime::firestore::gcloud_sdk::prost_types::Timestamp;
    let v = |value_type| Value {
        value_type: Some(value_type),
    };
    let key = |path: &str| {
        v(ValueType::ReferenceValue(format!(
            "projects/p/databases/(default)/documents/{path}"
        )))
    };
    let at = |seconds, nanos| v(ValueType::TimestampValue(Timestamp { seconds, nanos }));
    HashMap::from([
        ("null", v(ValueType::NullValue(0))),
        ("int_min", v(ValueType::IntegerValue(i64::MIN))),
        ("ts_1970_plus_1us", at(0, 1_000)),
        ("int_3", v(ValueType::IntegerValue(3))),
        ("ts_2020", at(1_577_836_800, 0)),
        (
            "int_1e18",
            v(ValueType::IntegerValue(1_000_000_000_000_000_000)),
        ),
        ("false", v(ValueType::BooleanValue(false))),
        ("true", v(ValueType::BooleanValue(true))),
        ("blob_00", v(ValueType::BytesValue(vec![0]))),
        ("str_a", v(ValueType::StringValue("a".into()))),
        ("blob_ab", v(ValueType::BytesValue(b"ab".to_vec()))),
        ("str_e_acute", v(ValueType::StringValue("é".into()))),
        ("blob_ff", v(ValueType::BytesValue(vec![0xff]))),
        ("double_-inf", v(ValueType::DoubleValue(f64::NEG_INFINITY))),
        ("double_-0", v(ValueType::DoubleValue(-0.0))),
        ("double_0", v(ValueType::DoubleValue(0.0))),
        ("double_1.5", v(ValueType::DoubleValue(1.5))),
        ("double_inf", v(ValueType::DoubleValue(f64::INFINITY))),
        ("double_nan", v(ValueType::DoubleValue(f64::NAN))),
        (
            "geo_0_5",
            v(ValueType::GeoPointValue(LatLng {
                latitude: 0.0,
                longitude: 5.0,
            })),
        ),
        (
            "geo_1_1",
            v(ValueType::GeoPointValue(LatLng {
                latitude: 1.0,
                longitude: 1.0,
            })),
        ),
        ("key_A_5", key("A/__id5__")),
        ("key_A_a", key("A/a")),
        ("key_A_a_C_c", key("A/a/C/c")),
        ("key_B_1", key("B/__id1__")),
    ])
}

#[derive(Deserialize)]
struct Measured {
    ascending: Vec<String>,
    descending: Vec<String>,
    equal: HashMap<String, Vec<String>>,
}

/// The measurement: every type's place in Datastore mode's order as Google's Python client
/// reads it back from the emulator, and the order the library's merge compares in agrees.
#[tokio::test]
async fn datastore_orders_values_as_measured() {
    let project = crate::datastore_mode::project("ds-order");
    let output = tokio::task::spawn_blocking(move || {
        sharded_tests::python::run(
            "datastore_order.py",
            &[
                ("DATASTORE_EMULATOR_HOST", emulator().host()),
                ("PROJECT", &project),
            ],
        )
    })
    .await
    .unwrap();
    let measured: Measured = serde_json::from_slice(&output).unwrap();
    let values = measured_values();
    let mut names: Vec<&str> = values.keys().copied().collect();
    names.sort_by(|a, b| {
        sharded_runtime::datastore::compare_values(&values[a], &values[b]).then_with(|| a.cmp(b))
    });
    assert_eq!(
        names, measured.ascending,
        "the merge's order against Datastore's"
    );
    let mut reversed = measured.descending.clone();
    reversed.reverse();
    assert_eq!(reversed, measured.ascending);
    // −0.0 is not 0.0, an integer is not the double of its value, NaN equals NaN.
    assert_eq!(measured.equal["double_0"], ["double_0"]);
    assert!(measured.equal["int_0"].is_empty());
    assert_eq!(measured.equal["double_nan"], ["double_nan"]);
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 40,
    order_by = "level",
    direction = "asc",
    collection = "Gauge"
)]
struct Gauge {
    #[sharded(index)]
    site: String,
    level: f64,
}

/// An `f64` order field across 40 shard values, with −0.0 beside 0.0, NaN, both infinities
/// and ties: each fetch, in both shapes, returns the entities in the order the same query on
/// an unsharded kind returns them (Datastore's order: −0.0 before 0.0, NaN last).
#[tokio::test]
async fn a_double_order_field_merges_in_datastore_order() {
    let seed = sharded_tests::seed("ds-doubles");
    let mut rng = StdRng::seed_from_u64(seed);
    let (datastore, project) = fresh_datastore("ds-doubles").await;
    let twin = Twin {
        raw: raw_client().await,
        partition: ds::PartitionId {
            project_id: project.clone(),
            ..Default::default()
        },
        kind: "GaugeTwin".into(),
    };
    let levels = [
        -0.0,
        0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.5,
        -2.5,
        1e-300,
        -1e-300,
    ];
    let gauges = datastore.kind::<Gauge>();
    let mut written = Vec::new();
    for i in 0..150 {
        let level = levels[rng.random_range(0..levels.len())];
        let site = ["a", "b"][rng.random_range(0..2)].to_owned();
        let id = format!("g{:08x}", rng.random::<u32>());
        written.push((id, Gauge { site, level }));
        let _ = i;
    }
    gauges
        .upsert_all(written.iter().map(|(id, g)| (id.as_str(), g)))
        .await
        .unwrap();
    twin.write(
        written
            .iter()
            .map(|(id, gauge)| {
                (
                    id.clone(),
                    HashMap::from([
                        ("site".to_owned(), string(&gauge.site)),
                        (
                            "level".to_owned(),
                            ds::Value {
                                value_type: Some(ds::value::ValueType::DoubleValue(gauge.level)),
                                ..Default::default()
                            },
                        ),
                    ]),
                )
            })
            .collect(),
    )
    .await;
    let twin_ids = |site: Option<&str>| {
        let filter = site.map(|site| ds::Filter {
            filter_type: Some(ds::filter::FilterType::PropertyFilter(ds::PropertyFilter {
                property: Some(ds::PropertyReference {
                    name: "site".into(),
                }),
                op: ds::property_filter::Operator::Equal as i32,
                value: Some(string(site)),
            })),
        });
        let order = |name: &str| ds::PropertyOrder {
            property: Some(ds::PropertyReference { name: name.into() }),
            direction: ds::property_order::Direction::Ascending as i32,
        };
        ds::Query {
            kind: vec![ds::KindExpression {
                name: "GaugeTwin".into(),
            }],
            filter,
            order: vec![order("level"), order("__key__")],
            ..Default::default()
        }
    };
    for site in [None, Some("a"), Some("b")] {
        let expected = run_ids(&twin, twin_ids(site)).await;
        let stored = match site {
            None => gauges.fetch(&Gauge::query().all()).await.unwrap(),
            Some(site) => gauges
                .fetch(&Gauge::query().site(site.to_owned()))
                .await
                .unwrap(),
        };
        let ids: Vec<String> = stored.into_iter().map(|s| s.id).collect();
        assert_eq!(ids, expected, "site {site:?}, seed {seed}");
        // Pages through Datastore's cursors: the same order.
        if let Some(site) = site {
            let query = Gauge::query().site(site.to_owned());
            let mut paged = Vec::new();
            let mut next = None;
            loop {
                let page = gauges.page(&query, 7, next.as_ref()).await.unwrap();
                paged.extend(page.items.into_iter().map(|s| s.id));
                match page.next {
                    Some(cursor) => next = Some(cursor),
                    None => break,
                }
            }
            assert_eq!(paged, expected, "pages of site {site}, seed {seed}");
        }
    }
}

/// The ids of the twin's query, in its order.
async fn run_ids(twin: &Twin, query: ds::Query) -> Vec<String> {
    let answer = twin
        .raw
        .get()
        .run_query(ds::RunQueryRequest {
            project_id: twin.partition.project_id.clone(),
            partition_id: Some(twin.partition.clone()),
            query_type: Some(ds::run_query_request::QueryType::Query(query)),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let batch = answer.batch.unwrap();
    assert_eq!(
        batch.more_results,
        ds::query_result_batch::MoreResultsType::NoMoreResults as i32,
        "a small kind answers in one batch"
    );
    batch
        .entity_results
        .into_iter()
        .map(
            |result| match &result.entity.unwrap().key.unwrap().path[0].id_type {
                Some(ds::key::path_element::IdType::Name(name)) => name.clone(),
                other => panic!("{other:?}"),
            },
        )
        .collect()
}

/// One id rule in both modes: `__id<N>__` with N a non-zero 64-bit integer in its canonical
/// form is a numeric id (−3 included, as both modes take it); every other `__…__` id is
/// refused before anything is sent, as the server would refuse it as reserved.
#[tokio::test]
async fn reserved_ids_are_refused_before_sending_and_numeric_ids_kept() {
    let (datastore, _) = fresh_datastore("ds-ids").await;
    let readings = datastore.kind::<Reading3>();
    let reading = Reading3::new("XNAS".into(), None, 1, 1, String::new());
    for id in [
        "__id0__", "__id-0__", "__id07__", "__id+5__", "__id__", "__x__",
    ] {
        match readings.insert(id, &reading).await {
            Err(sharded_runtime::Error::InvalidDocumentId { .. }) => {}
            other => panic!("{id}: {other:?}"),
        }
        assert!(matches!(
            sharded_runtime::check_document_id(id),
            Err(sharded_runtime::Error::InvalidDocumentId { .. })
        ));
    }
    for id in ["__id-3__", "__id9223372036854775807__"] {
        readings.insert(id, &reading).await.unwrap();
        assert_eq!(readings.get(id).await.unwrap().unwrap().id, id);
    }
}

/// `limit_to_last` in Datastore mode: the query's last entities in its order, read from the
/// end and reversed, as the Firebase SDKs answer it.
#[tokio::test]
async fn limit_to_last_is_the_last_entities_in_order() {
    let (datastore, _) = fresh_datastore("ds-last").await;
    let readings = datastore.kind::<Reading3>();
    let documents: Vec<(String, Reading3)> = (0..40)
        .map(|i| {
            (
                format!("l{i:02}"),
                Reading3::new("XNAS".into(), None, i % 7, i, String::new()),
            )
        })
        .collect();
    readings
        .upsert_all(documents.iter().map(|(id, r)| (id.as_str(), r)))
        .await
        .unwrap();
    let all: Vec<String> = readings
        .fetch(&Reading3::all())
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    for n in [1, 5, 39, 40, 50] {
        let last: Vec<String> = readings
            .fetch(&Reading3::all().limit_to_last(n))
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        let from = all.len().saturating_sub(n as usize);
        assert_eq!(last, all[from..], "limit_to_last({n})");
    }
}
