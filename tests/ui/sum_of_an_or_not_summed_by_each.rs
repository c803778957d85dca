use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreDb;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Sale {
    #[sharded(index)]
    region: String,
    #[sharded(index)]
    channel: String,
    #[sharded(aggregate(all, region))]
    amount: i64,
    #[sharded(aggregate)]
    qty: i64,
    at: i64,
}

async fn totals(db: &FirestoreDb) {
    let amount = Sale::aggregates().amount;
    // Both queries sum `amount`: compiles.
    let _ = Sale::query().region("eu").or(Sale::query().region("us")).sum(db, amount).await;
    // `channel` does not: its index holds no `amount`.
    let _ = Sale::query().region("eu").or(Sale::query().channel("web")).sum(db, amount).await;
    let _ = Sale::query().channel("web").or(Sale::query().region("eu")).avg(db, amount).await;
    // An OR built in a loop keeps no query in its type: it sums what every query sums.
    let mut dynamic = Sale::query().region("eu").or_dynamic(Sale::query().region("us"));
    dynamic = dynamic.or_dynamic(Sale::query().channel("web"));
    let _ = dynamic.sum(db, Sale::aggregates().qty).await;
    let _ = dynamic.sum(db, amount).await;
}

fn main() {
    let _ = totals;
}
