use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Mine {
    at: i64,
}

impl sharded_runtime::Sharded for Mine {
    const DESCRIPTION: sharded_runtime::__private::CollectionDescription<'static> =
        sharded_runtime::__private::CollectionDescription::EMPTY;
    const TABLES: sharded_runtime::__private::Tables = sharded_runtime::__private::Tables {
        query_names: &[],
        required_fields: &[],
        required_segments: &[],
        stored_fields: &[],
    };
    type QueryMethods = ();
    type AggregateFields = ();
    type RangeFields = ();
    type OrderValue = i64;
}

fn main() {}
