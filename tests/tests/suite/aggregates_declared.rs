//! Sums and averages declared for some queries only (`#[sharded(aggregate(all, region))]`):
//! the plan holds an index with the field for those queries alone, and their sums equal the
//! unsharded ones on the emulator at 40 shard values; other queries' sums do not compile (see
//! `ui/aggregate_undeclared_query.rs`).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use sharded_runtime::{Sharded, reads::Number};
use sharded_tests::equivalence::{Unsharded, write_both};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 40, order_by = "at", collection = "sales")]
struct Sale {
    #[sharded(index)]
    region: String,
    #[sharded(index)]
    channel: String,
    #[sharded(contains)]
    tags: Vec<String>,
    #[sharded(aggregate(all, region))]
    amount: i64,
    #[sharded(aggregate(tags_contains))]
    discount: f64,
    #[sharded(aggregate)]
    qty: i64,
    at: i64,
}

fn ending_with<'a>(
    plan: &'a sharded_runtime::indexes::IndexPlan,
    field: &str,
) -> Vec<Vec<&'a str>> {
    plan.indexes
        .iter()
        .filter(|index| index.fields.last().unwrap().field_path == field)
        .map(|index| index.fields.iter().map(|f| f.field_path.as_str()).collect())
        .collect()
}

#[test]
fn the_plan_holds_the_declared_queries_sums_only() {
    let plan = Sale::indexes();
    assert_eq!(
        ending_with(&plan, "amount"),
        [
            vec!["shard", "at", "amount"],
            vec!["shard", "region", "at", "amount"]
        ]
    );
    assert_eq!(
        ending_with(&plan, "discount"),
        [vec!["shard", "tags", "at", "discount"]]
    );
    // `qty` by every query: all, region, channel and tags.
    assert_eq!(ending_with(&plan, "qty").len(), 4);
    // Four queries' own indexes, four for qty, three declared.
    assert_eq!(plan.indexes.len(), 4 + 4 + 3);
}

#[tokio::test]
async fn declared_sums_equal_the_unsharded_ones() {
    let test = test_db("aggregates-declared").await;
    let db = &test.db;
    let seed = sharded_tests::seed("declared_sums_equal_the_unsharded_ones");
    let mut rng = StdRng::seed_from_u64(seed);
    let regions = ["eu", "us", "apac"];
    let tags = ["new", "promo", "bulk"];
    let documents: Vec<(String, Sale)> = (0..300)
        .map(|n| {
            let sale = Sale {
                region: regions[rng.random_range(0..3)].to_owned(),
                channel: "web".to_owned(),
                tags: vec![tags[rng.random_range(0..3)].to_owned()],
                amount: rng.random_range(-1_000..1_000),
                discount: f64::from(rng.random_range(0..8)) * 0.25,
                qty: rng.random_range(0..5),
                at: rng.random_range(0..50),
            };
            (format!("s{n:03}"), sale)
        })
        .collect();
    let plain = "plain_sales";
    write_both(db, plain, &documents).await;
    let amounts = Sale::aggregates();
    let integer = |value: Value| match value.value_type {
        Some(ValueType::IntegerValue(n)) => Number::Integer(n),
        other => panic!("{other:?}"),
    };
    let (sum, _) = Unsharded::default()
        .sum_and_avg::<Sale>(db, plain, "amount")
        .await;
    let total = Sale::query().all().sum(db, amounts.amount).await.unwrap();
    assert_eq!(total, integer(sum));
    for region in regions {
        let (sum, avg) = Unsharded::default()
            .equal("region", region)
            .sum_and_avg::<Sale>(db, plain, "amount")
            .await;
        let query = Sale::query().region(region);
        let (ours, average) = query.sum_and_avg(db, amounts.amount).await.unwrap();
        assert_eq!(ours, integer(sum), "{region}");
        let Some(ValueType::DoubleValue(avg)) = avg.value_type else {
            panic!("{avg:?}");
        };
        assert!((average.unwrap() - avg).abs() < 1e-9, "{region}");
        // `in` is the equality query's shape: its sums are declared with it.
        query.clone().sum(db, amounts.qty).await.unwrap();
    }
    let both = Sale::query().region_in(["eu", "us"]);
    let (sum, _) = Unsharded::default()
        .any_of("region", vec!["eu", "us"])
        .sum_and_avg::<Sale>(db, plain, "amount")
        .await;
    assert_eq!(
        both.sum(db, amounts.amount).await.unwrap(),
        integer(sum.clone())
    );
    // An OR of queries that each sum `amount` sums it (every disjunct's index holds it; one
    // whose query does not, `channel`, does not compile: `ui/sum_of_an_or_not_summed_by_each.rs`).
    let either = Sale::query().region("eu").or(Sale::query().region("us"));
    assert_eq!(either.sum(db, amounts.amount).await.unwrap(), integer(sum));
    // Each disjunct's sum is served by an index of the plan (its query's, `amount` last);
    // `channel`'s is not, which is why its OR has no sum of `amount`.
    let summing = |mut need: sharded_runtime::indexes::IndexNeed| {
        need.orders.push((
            "amount".to_owned(),
            sharded_runtime::indexes::Direction::Ascending,
        ));
        Sale::indexes().serving(&need).is_some()
    };
    assert!(either.index_needs().unwrap().into_iter().all(summing));
    let with_channel = Sale::query()
        .region("eu")
        .or(Sale::query().channel("web"))
        .index_needs()
        .unwrap();
    assert_eq!(
        with_channel.into_iter().map(summing).collect::<Vec<_>>(),
        [true, false]
    );
    for tag in tags {
        let (sum, _) = Unsharded::default()
            .array_contains("tags", tag)
            .sum_and_avg::<Sale>(db, plain, "discount")
            .await;
        let Some(ValueType::DoubleValue(sum)) = sum.value_type else {
            panic!("{sum:?}");
        };
        let ours = Sale::query()
            .tags_contains(tag)
            .sum(db, amounts.discount)
            .await
            .unwrap();
        assert!((ours.as_f64() - sum).abs() < 1e-9, "{tag}");
    }
}
