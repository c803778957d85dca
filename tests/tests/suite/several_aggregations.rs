//! `query.aggregate(&db, (count(), sum(a), avg(b)))` against Firestore's own aggregation query
//! with the same aggregations in one request over an unsharded copy, on the emulator: random
//! data at 3 shard values (one chunk query), 40 (two) and 61 (three), with legacy documents
//! (a backfill adopted) whose aggregated fields hold a string or a boolean, or are missing, which
//! Firestore's several-field aggregation leaves out (`server_aggregates.rs` measures it).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use sharded_runtime::reads::{Number, NumericField, avg, count, sum};
use sharded_runtime::{Sharded, ShardedQuery, WholeCollection, reads::query_id};
use sharded_tests::test_db;

macro_rules! parcels {
    ($name:ident, $shards:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection)]
        struct $name {
            #[sharded(index)]
            depot: String,
            #[sharded(aggregate)]
            qty: i64,
            #[sharded(aggregate)]
            price: f64,
            #[sharded(aggregate)]
            weight: i32,
            at: i64,
        }

        impl Parcel for $name {
            fn new(depot: &str, qty: i64, price: f64, weight: i32, at: i64) -> Self {
                $name {
                    depot: depot.into(),
                    qty,
                    price,
                    weight,
                    at,
                }
            }
            fn depot(depot: &str) -> ShardedQuery<Self, { query_id("depot") }> {
                $name::query().depot(depot)
            }
            fn all() -> WholeCollection<Self> {
                $name::query().all()
            }
            fn fields() -> [NumericField<Self>; 3] {
                let fields = $name::aggregates();
                [fields.qty, fields.price, fields.weight]
            }
        }
    };
}

trait Parcel: Sharded + Serialize + sharded_runtime::bounds::TopLevel {
    fn new(depot: &str, qty: i64, price: f64, weight: i32, at: i64) -> Self;
    fn depot(depot: &str) -> ShardedQuery<Self, { query_id("depot") }>;
    fn all() -> WholeCollection<Self>;
    /// `qty`, `price` and `weight`.
    fn fields() -> [NumericField<Self>; 3];
}

parcels!(Three, 3, "parcels3");
parcels!(Forty, 40, "parcels40");
parcels!(SixtyOne, 61, "parcels61");

const DEPOTS: [&str; 3] = ["north", "south", "east"];
const FIELDS: [&str; 3] = ["qty", "price", "weight"];

/// What the legacy documents of a data set hold in the aggregated fields.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Legacy {
    /// Every document written by sharded: a number in every field.
    None,
    /// Some fields hold a string or a boolean: present, but no number.
    NotNumbers,
    /// Some fields are missing as well.
    Missing,
}

/// Writes random parcels through sharded into `T::COLLECTION` and plainly into `plain`, then
/// overwrites a share of them in both as `legacy` says.
async fn write_data<T: Parcel>(db: &FirestoreDb, rng: &mut StdRng, legacy: Legacy) {
    let documents: Vec<(String, T)> = (0..rng.random_range(60..160))
        .map(|i| {
            let parcel = T::new(
                DEPOTS[rng.random_range(0..3)],
                rng.random_range(-1_000..1_000),
                f64::from(rng.random_range(-400..400)) * 0.25,
                rng.random_range(0..50),
                rng.random_range(0..8),
            );
            (format!("p{i:03}"), parcel)
        })
        .collect();
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for (id, parcel) in &documents {
        T::collection(db).upsert_in(&mut batch, id, parcel).unwrap();
        batch
            .update_object("plain", id, parcel, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();
    if legacy == Legacy::None {
        return;
    }
    let mut batch = writer.new_batch();
    for (id, _) in &documents {
        if rng.random_range(0..3) != 0 {
            continue;
        }
        let field = FIELDS[rng.random_range(0..3)];
        // A JSON null is left out by the firestore crate's serializer, so it deletes the
        // masked field as a missing value does.
        let stored = match (legacy, rng.random_range(0..3)) {
            (Legacy::Missing, 0) => serde_json::json!({}),
            (Legacy::Missing, 1) => serde_json::json!({ field: null }),
            (_, 2) => serde_json::json!({ field: true }),
            _ => serde_json::json!({ field: "n/a" }),
        };
        let mask = field;
        for collection in [T::COLLECTION, "plain"] {
            // A masked field the document does not hold is deleted.
            batch
                .update_object(
                    collection,
                    id,
                    &stored,
                    Some(vec![mask.to_owned()]),
                    None,
                    Vec::new(),
                )
                .unwrap();
        }
    }
    batch.write().await.unwrap();
}

/// An aggregation as Firestore's request names it.
#[derive(Debug, Clone, Copy)]
enum Asked {
    Count,
    Sum(&'static str),
    Avg(&'static str),
}

/// Firestore's answers to `asked` in one aggregation request over `plain`, filtered by depot
/// or not, ordered by `at`.
async fn unsharded(db: &FirestoreDb, depot: Option<&str>, asked: &[Asked]) -> Vec<Value> {
    let mut select = db.fluent().select().from("plain");
    if let Some(depot) = depot {
        let depot = depot.to_owned();
        select = select.filter(move |q| q.for_all([q.field("depot").eq(depot.clone())]));
    }
    let asked = asked.to_vec();
    let rows = select
        .order(|o| o.fields([o.field("at").ascending()]))
        .aggregate(move |a| {
            a.fields(asked.iter().enumerate().map(|(i, asked)| {
                let name = format!("a{i}");
                match asked {
                    Asked::Count => a.field(name).count(),
                    Asked::Sum(field) => a.field(name).sum(*field),
                    Asked::Avg(field) => a.field(name).avg(*field),
                }
            }))
        })
        .query()
        .await
        .expect("the unsharded aggregation");
    (0..rows[0].fields.len())
        .map(|i| rows[0].fields[&format!("a{i}")].clone())
        .collect()
}

fn same_count(ours: u64, theirs: &Value, what: &str) {
    assert_eq!(
        Some(&ValueType::IntegerValue(ours as i64)),
        theirs.value_type.as_ref(),
        "{what}: count"
    );
}

fn same_sum(ours: Number, theirs: &Value, what: &str) {
    match (ours, &theirs.value_type) {
        (Number::Integer(ours), Some(ValueType::IntegerValue(theirs))) => {
            assert_eq!(ours, *theirs, "{what}: sum")
        }
        (Number::Double(ours), Some(ValueType::DoubleValue(theirs))) => close(ours, *theirs, what),
        (ours, theirs) => panic!("{what}: sum {ours:?}, unsharded {theirs:?}"),
    }
}

fn same_avg(ours: Option<f64>, theirs: &Value, what: &str) {
    match (ours, &theirs.value_type) {
        (None, Some(ValueType::NullValue(_))) => {}
        (Some(ours), Some(ValueType::DoubleValue(theirs))) => close(ours, *theirs, what),
        (ours, theirs) => panic!("{what}: avg {ours:?}, unsharded {theirs:?}"),
    }
}

fn close(ours: f64, theirs: f64, what: &str) {
    let scale = ours.abs().max(theirs.abs()).max(1.0);
    assert!(
        (ours - theirs).abs() <= scale * 1e-12,
        "{what}: {ours} vs unsharded {theirs}"
    );
}

/// Every set of aggregations below, on `query`, against Firestore's on the plain copy.
async fn check<T: Parcel, const Q: u64>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, Q>,
    depot: Option<&str>,
    what: &str,
) {
    let [qty, price, weight] = T::fields();

    let (n, q, p) = query
        .aggregate(db, (count(), sum(qty), avg(price)))
        .await
        .unwrap();
    let theirs = unsharded(
        db,
        depot,
        &[Asked::Count, Asked::Sum("qty"), Asked::Avg("price")],
    )
    .await;
    let what1 = format!("{what} (count, sum qty, avg price)");
    same_count(n, &theirs[0], &what1);
    same_sum(q, &theirs[1], &what1);
    same_avg(p, &theirs[2], &what1);

    let (n,) = query.aggregate(db, (count(),)).await.unwrap();
    same_count(n, &unsharded(db, depot, &[Asked::Count]).await[0], what);

    let (s, a) = query.aggregate(db, (sum(qty), avg(qty))).await.unwrap();
    let theirs = unsharded(db, depot, &[Asked::Sum("qty"), Asked::Avg("qty")]).await;
    same_sum(s, &theirs[0], &format!("{what} qty alone"));
    same_avg(a, &theirs[1], &format!("{what} qty alone"));

    let (a, n) = query.aggregate(db, (avg(weight), count())).await.unwrap();
    let theirs = unsharded(db, depot, &[Asked::Avg("weight"), Asked::Count]).await;
    same_avg(a, &theirs[0], &format!("{what} weight and count"));
    same_count(n, &theirs[1], &format!("{what} weight and count"));

    let asked = [
        Asked::Count,
        Asked::Sum("qty"),
        Asked::Sum("price"),
        Asked::Avg("weight"),
        Asked::Avg("qty"),
    ];
    let (n, sq, sp, aw, aq) = query
        .aggregate(db, (count(), sum(qty), sum(price), avg(weight), avg(qty)))
        .await
        .unwrap();
    let theirs = unsharded(db, depot, &asked).await;
    let what5 = format!("{what} five");
    same_count(n, &theirs[0], &what5);
    same_sum(sq, &theirs[1], &what5);
    same_sum(sp, &theirs[2], &what5);
    same_avg(aw, &theirs[3], &what5);
    same_avg(aq, &theirs[4], &what5);
}

async fn equal_firestores_own<T: Parcel>(name: &str) {
    let test = test_db(name).await;
    let seed = sharded_tests::seed("several_aggregations");
    let mut rng = StdRng::seed_from_u64(seed);
    for (n, legacy) in [Legacy::None, Legacy::NotNumbers, Legacy::Missing]
        .into_iter()
        .enumerate()
    {
        let db = test
            .emulator
            .db(&format!("{name}-{seed}-{n}"))
            .await
            .unwrap();
        write_data::<T>(&db, &mut rng, legacy).await;
        let what = format!("seed {seed} {legacy:?}");
        check(&db, &T::all(), None, &format!("{what} all")).await;
        for depot in DEPOTS {
            check(
                &db,
                &T::depot(depot),
                Some(depot),
                &format!("{what} {depot}"),
            )
            .await;
        }
        // What it cost: where every document holds every field, no value was read, and each
        // chunk sent one query per field and one count (an average left open by a value
        // that is no number is asked again: more rounds, no reads).
        let [qty, price, _] = T::fields();
        let (_, stats) = T::all()
            .aggregate_with_stats(&db, (count(), sum(qty), avg(price)))
            .await
            .unwrap();
        let chunks = T::all().chunk_queries().unwrap();
        if legacy == Legacy::None {
            assert_eq!(stats.documents_read, 0, "{what}");
            assert_eq!(stats.queries, chunks * 3, "{what}");
            assert_eq!(stats.rounds, 1, "{what}");
        }
        if legacy == Legacy::Missing {
            // Documents lacking a field: the chunks holding one were read.
            assert!(stats.documents_read > 0, "{what}: {stats:?}");
        }
    }
}

#[tokio::test]
async fn three_shards_in_one_chunk() {
    equal_firestores_own::<Three>("several-3").await;
}

#[tokio::test]
async fn forty_shards_in_two_chunks() {
    equal_firestores_own::<Forty>("several-40").await;
}

#[tokio::test]
async fn sixty_one_shards_in_three_chunks() {
    equal_firestores_own::<SixtyOne>("several-61").await;
}
