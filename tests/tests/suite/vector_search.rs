//! `find_nearest` over a sharded collection against Firestore's own vector search on an
//! unsharded copy, on the emulator: random vectors, each distance measure, limits from one to
//! past the collection's size, the whole collection and an equality query, at 3 and 40 shard
//! values; the plan's vector indexes; and the refusals made before anything is sent.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
use sharded_runtime::firestore::{
    FirestoreDb, FirestoreFindNearestDistanceMeasure as Measure, FirestoreVector,
};
use sharded_runtime::indexes::{IndexField, IndexMode};
use sharded_runtime::{Error, Sharded, ShardedQuery, WholeCollection, reads::query_id};
use sharded_tests::test_db;

macro_rules! passages {
    ($name:ident, $shards:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection)]
        struct $name {
            #[sharded(index)]
            topic: String,
            #[sharded(vector(dimension = 3))]
            embedding: FirestoreVector,
            title: String,
            at: i64,
        }

        impl Passage for $name {
            fn new(topic: &str, embedding: Vec<f64>, at: i64) -> Self {
                $name {
                    topic: topic.into(),
                    embedding: FirestoreVector(embedding),
                    title: format!("passage {at}"),
                    at,
                }
            }
            fn topic(topic: &str) -> ShardedQuery<Self, { query_id("topic") }> {
                $name::query().topic(topic)
            }
            fn all() -> WholeCollection<Self> {
                $name::query().all()
            }
            fn embedding() -> sharded_runtime::reads::VectorField<Self> {
                $name::vectors().embedding
            }
        }
    };
}

trait Passage:
    Sharded<OrderValue = i64> + Serialize + std::fmt::Debug + sharded_runtime::bounds::TopLevel
{
    fn new(topic: &str, embedding: Vec<f64>, at: i64) -> Self;
    fn topic(topic: &str) -> ShardedQuery<Self, { query_id("topic") }>;
    fn all() -> WholeCollection<Self>;
    fn embedding() -> sharded_runtime::reads::VectorField<Self>;
}

passages!(Three, 3, "passages3");
passages!(Forty, 40, "passages40");

const TOPICS: [&str; 2] = ["rust", "firestore"];

/// Firestore's own search over the plain copy: (id, distance), nearest first.
async fn unsharded(
    db: &FirestoreDb,
    topic: Option<&str>,
    vector: &[f64],
    limit: u32,
    measure: Measure,
) -> Vec<(String, f64)> {
    let mut select = db.fluent().select().from("plain");
    if let Some(topic) = topic {
        let topic = topic.to_owned();
        select = select.filter(move |q| q.for_all([q.field("topic").eq(topic.clone())]));
    }
    let options = sharded_runtime::firestore::FirestoreFindNearestOptions {
        field_name: "embedding".into(),
        query_vector: FirestoreVector(vector.to_vec()),
        distance_measure: measure,
        neighbors_limit: limit,
        distance_result_field: Some("distance".into()),
        distance_threshold: None,
    };
    select
        .find_nearest_with_options(options)
        .query()
        .await
        .expect("the unsharded search")
        .iter()
        .map(|document| {
            let distance = match document.fields["distance"].value_type {
                Some(ValueType::DoubleValue(d)) => d,
                ref other => panic!("a distance of {other:?}"),
            };
            (sharded_tests::id_of(document).to_owned(), distance)
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

async fn equal_firestores_search<T: Passage>(name: &str) {
    let test = test_db(name).await;
    let db = &test.db;
    let seed = sharded_tests::seed("vector_search");
    let mut rng = StdRng::seed_from_u64(seed);
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    let count = rng.random_range(30..70);
    for i in 0..count {
        let embedding: Vec<f64> = (0..3).map(|_| rng.random_range(-1.0..1.0)).collect();
        let passage = T::new(TOPICS[rng.random_range(0..2)], embedding, i);
        let id = format!("p{i:02}");
        T::collection(db)
            .upsert_in(&mut batch, &id, &passage)
            .unwrap();
        batch
            .update_object("plain", &id, &passage, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();
    for round in 0..4 {
        let vector: Vec<f64> = (0..3).map(|_| rng.random_range(-1.0..1.0)).collect();
        for measure in [Measure::Euclidean, Measure::Cosine, Measure::DotProduct] {
            for limit in [1, 5, 17, count as u32 + 5] {
                for topic in [None, Some(TOPICS[round % 2])] {
                    let what =
                        format!("seed {seed} round {round} {measure:?} limit {limit} {topic:?}");
                    let theirs = unsharded(db, topic, &vector, limit, measure.clone()).await;
                    let ours = match topic {
                        None => {
                            T::all()
                                .find_nearest(db, T::embedding(), &vector, limit, measure.clone())
                                .await
                        }
                        Some(topic) => {
                            T::topic(topic)
                                .find_nearest(db, T::embedding(), &vector, limit, measure.clone())
                                .await
                        }
                    }
                    .unwrap();
                    // Every passage holds a vector: the search finds `limit` of them, or all.
                    assert!(!theirs.is_empty() && theirs.len() as u32 <= limit, "{what}");
                    assert_eq!(ours.len(), theirs.len(), "{what}");
                    for (neighbor, (id, distance)) in ours.iter().zip(&theirs) {
                        assert_eq!(&neighbor.item.id, id, "{what}");
                        assert!(
                            close(neighbor.distance, *distance),
                            "{what}: {} vs {distance}",
                            neighbor.distance
                        );
                    }
                }
            }
        }
    }
    // Refused before anything is sent: another dimension, a limit out of range, a query that
    // is not equalities alone (a field not declared `vector` does not compile:
    // `ui/find_nearest_on_a_plain_field.rs`).
    let v = [0.1, 0.2, 0.3];
    assert_eq!(T::embedding().dimension(), 3);
    let refused = [
        T::all()
            .find_nearest(db, T::embedding(), &v[..2], 5, Measure::Euclidean)
            .await,
        T::all()
            .find_nearest(db, T::embedding(), &v, 0, Measure::Euclidean)
            .await,
        T::all()
            .find_nearest(db, T::embedding(), &v, 1001, Measure::Euclidean)
            .await,
        T::all()
            .range(0..10)
            .find_nearest(db, T::embedding(), &v, 5, Measure::Euclidean)
            .await,
    ];
    for result in refused {
        assert!(matches!(result, Err(Error::InvalidQuery(_))), "{result:?}");
    }
    let limited = T::all()
        .limit(3)
        .find_nearest(db, T::embedding(), &v, 5, Measure::Euclidean)
        .await;
    assert!(
        matches!(limited, Err(Error::InvalidQuery(_))),
        "{limited:?}"
    );
}

#[tokio::test]
async fn three_shards() {
    equal_firestores_search::<Three>("vectors-3").await;
}

#[tokio::test]
async fn forty_shards() {
    equal_firestores_search::<Forty>("vectors-40").await;
}

/// The plan holds a vector index for the whole collection and for each equality query: the
/// shard field, the query's fields, then the vector with its dimension.
#[test]
fn the_plan_holds_each_querys_vector_index() {
    let vectors: Vec<Vec<String>> = Forty::indexes()
        .indexes
        .iter()
        .filter(|index| {
            matches!(
                index.fields.last().unwrap().mode,
                IndexMode::VectorConfig(_)
            )
        })
        .map(|index| index.fields.iter().map(|f| f.field_path.clone()).collect())
        .collect();
    assert_eq!(
        vectors,
        [
            vec!["shard", "embedding"],
            vec!["shard", "topic", "embedding"]
        ]
    );
    let last = Forty::indexes()
        .indexes
        .iter()
        .find_map(|index| {
            index
                .fields
                .last()
                .filter(|f| f.field_path == "embedding")
                .cloned()
        })
        .unwrap();
    assert_eq!(last, IndexField::vector("embedding", 3));
    let json = Forty::indexes().to_json();
    assert!(
        json.contains(
            "\"vectorConfig\": {\n            \"dimension\": 3,\n            \"flat\": {}"
        ),
        "{json}"
    );
}

/// Neighbors at one distance: Firestore's own search returns them by document name (measured
/// here), and so does the merge, so ties at the limit pick the same documents.
#[tokio::test]
async fn neighbors_at_one_distance_come_by_name() {
    let test = test_db("vectors-ties").await;
    let db = &test.db;
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for (i, id) in ["t5", "t1", "t7", "t0", "t3", "t6", "t2", "t4"]
        .iter()
        .enumerate()
    {
        let passage = Forty::new("rust", vec![1.0, 0.0, 0.0], i as i64);
        Forty::collection(db)
            .upsert_in(&mut batch, id, &passage)
            .unwrap();
        batch
            .update_object("plain", id, &passage, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();
    let theirs = unsharded(db, None, &[1.0, 0.0, 0.0], 3, Measure::Euclidean).await;
    let theirs: Vec<&str> = theirs.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(theirs, ["t0", "t1", "t2"]);
    let ours: Vec<String> = Forty::all()
        .find_nearest(
            db,
            Forty::vectors().embedding,
            &[1.0, 0.0, 0.0],
            3,
            Measure::Euclidean,
        )
        .await
        .unwrap()
        .into_iter()
        .map(|neighbor| neighbor.item.id)
        .collect();
    assert_eq!(ours, theirs);
}
