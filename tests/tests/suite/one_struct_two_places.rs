//! One struct written to two places, as the subcollections guide shows it: the fields written
//! once in a `macro_rules!` that declares a top-level type, its mirror under a customer and the
//! conversion; both copies written in one atomic batch. On the emulator, with random orders over
//! several customers: each customer's mirror reads exactly what the top-level query for that
//! customer reads (same ids, same order, same fields), whole and filtered, and the two places
//! hold the same documents, each with its own type's shard.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{AtomicBatch, Parent, Sharded, Stored};
use sharded_tests::equivalence::{ids, places};
use sharded_tests::test_db;

macro_rules! order_in_two_places {
    ($(#[$top:meta])* $top_type:ident, $(#[$mirror:meta])* $mirror_type:ident,
     { $($(#[$attr:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        $(#[$top])*
        pub struct $top_type { $($(#[$attr])* pub $field: $ty),* }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        $(#[$mirror])*
        pub struct $mirror_type { $($(#[$attr])* pub $field: $ty),* }

        impl From<&$top_type> for $mirror_type {
            fn from(top: &$top_type) -> Self {
                $mirror_type { $($field: top.$field.clone()),* }
            }
        }
    };
}

order_in_two_places!(
    #[sharded(shards = 40, order_by = "placed_at", collection = "two_place_orders")]
    Order,
    #[sharded(shards = 3, order_by = "placed_at", parent = "customers", collection = "two_place_orders")]
    CustomerOrder,
    {
        #[sharded(index)]
        customer: String,
        #[sharded(index)]
        status: String,
        total: i64,
        placed_at: FirestoreTimestamp,
    }
);

const CUSTOMERS: [&str; 4] = ["ada", "bo", "cy", "di"];
const STATUSES: [&str; 3] = ["open", "paid", "sent"];

#[tokio::test]
async fn each_customers_mirror_reads_what_the_top_level_query_for_that_customer_reads() {
    let test = test_db("two-places").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("two places"));
    // Few distinct times: ties in the order field, broken by document id in both places.
    let orders: Vec<(String, Order)> = (0..120)
        .map(|i| {
            let order = Order {
                customer: CUSTOMERS[rng.random_range(0..CUSTOMERS.len())].into(),
                status: STATUSES[rng.random_range(0..STATUSES.len())].into(),
                total: rng.random_range(0..10_000),
                placed_at: FirestoreTimestamp(
                    sharded_runtime::firestore::jiff::Timestamp::from_second(
                        1_700_000_000 + rng.random_range(0..20),
                    )
                    .unwrap(),
                ),
            };
            (format!("o{:04}-{i}", rng.random_range(0..10_000)), order)
        })
        .collect();
    for chunk in orders.chunks(100) {
        let mut batch = AtomicBatch::new(db);
        for (id, order) in chunk {
            let customer = Parent::<CustomerOrder>::new(&[order.customer.as_str()]).unwrap();
            batch.insert(id, order).unwrap();
            batch
                .in_parent(&customer)
                .insert(id, &CustomerOrder::from(order))
                .unwrap();
        }
        batch.commit().await.unwrap();
    }

    for customer in CUSTOMERS {
        let parent = Parent::<CustomerOrder>::new(&[customer]).unwrap();
        let top = Order::query()
            .customer(customer)
            .fetch_stored(db)
            .await
            .unwrap();
        let mirror = CustomerOrder::query()
            .all()
            .in_parent(&parent)
            .fetch_stored(db)
            .await
            .unwrap();
        assert!(!top.is_empty(), "{customer}: some orders");
        assert_eq!(
            ids(&mirror),
            ids(&top),
            "{customer}: same orders, same order"
        );
        for (mirror, top) in mirror.iter().zip(&top) {
            assert_eq!(mirror.document, CustomerOrder::from(&top.document));
            assert!(CustomerOrder::READ_SHARD_VALUES.contains(&mirror.shard.as_str()));
            assert!(Order::READ_SHARD_VALUES.contains(&top.shard.as_str()));
        }
        assert!(
            places(&mirror)
                .iter()
                .all(|(at, _)| at.as_deref() == Some(&format!("customers/{customer}")[..])),
            "{customer}: the mirror lives under its customer"
        );
        for status in STATUSES {
            let top: Vec<Stored<Order>> = Order::query()
                .status(status)
                .fetch_stored(db)
                .await
                .unwrap()
                .into_iter()
                .filter(|stored| stored.document.customer == customer)
                .collect();
            let mirror = CustomerOrder::query()
                .status(status)
                .in_parent(&parent)
                .fetch_stored(db)
                .await
                .unwrap();
            assert_eq!(ids(&mirror), ids(&top), "{customer} {status}");
        }
    }
    let all_mirrors: usize = {
        let mut n = 0;
        for customer in CUSTOMERS {
            let parent = Parent::<CustomerOrder>::new(&[customer]).unwrap();
            n += CustomerOrder::query()
                .all()
                .in_parent(&parent)
                .count(db)
                .await
                .unwrap();
        }
        n as usize
    };
    assert_eq!(all_mirrors, orders.len(), "every order in both places");
    assert_eq!(
        Order::query().all().count(db).await.unwrap() as usize,
        orders.len()
    );
}
