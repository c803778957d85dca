use serde::Serialize;
use sharded_runtime::StoredNames;

#[derive(Serialize, StoredNames)]
enum Place {
    Here,
    There,
}

fn main() {}
