//! The committed `index.yaml` is what the build writes, and serves every query the example
//! sends.

use sharded_datastore_example::Reading;

const FILE: &str = include_str!("../index.yaml");

/// The drift check, run as `build.rs` runs it with `SHARDED_INDEXES_CHECK=1`.
#[test]
fn the_committed_file_is_what_the_build_writes() {
    let outcome = sharded_build::Indexes::from_env()
        .datastore()
        .check(true)
        .run();
    if let Err(error) = outcome {
        panic!("{error}");
    }
}

#[test]
fn every_query_of_the_example_is_served_by_the_file() {
    let indexes = sharded_build::read_index_yaml(FILE).unwrap();
    let queries = [
        Reading::query().sensor("boiler".to_owned()).index_needs(),
        Reading::query()
            .sensor_in(["a".to_owned(), "b".to_owned()])
            .index_needs(),
        Reading::query().site("site-1".to_owned()).index_needs(),
        Reading::query().all().index_needs(),
        Reading::query().all().reversed().index_needs(),
        Reading::query()
            .sensor("boiler".to_owned())
            .range(5..)
            .index_needs(),
    ];
    for needs in queries {
        for need in needs.unwrap() {
            assert!(
                indexes.iter().any(|index| index.serves(&need, false)),
                "{need:?}"
            );
        }
    }
    // Every index starts with the shard: no write of the kind lands in one key range.
    assert!(indexes.iter().all(|index| index.properties[0].0 == "shard"));
}
