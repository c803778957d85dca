use sharded_runtime::Sharded;

#[derive(Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
union Instrument {
    seconds: i64,
    micros: u64,
}

fn main() {}
