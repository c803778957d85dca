//! Firestore in Datastore mode on the emulator in Datastore mode: a sharded kind's query
//! against the same query on an unsharded kind at 3, 40 and 61 shard values; a migration's
//! entities per second and per commit against plain commits of 500; `bulk_put` against plain
//! commits of 500. The "Datastore mode" section of BENCHMARKS.md.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use rand::Rng;
use serde::{Deserialize, Serialize};
use sharded_emulator::emulator::Emulator;
use sharded_runtime::Sharded;
use sharded_runtime::bulk::Throttling;
use sharded_runtime::datastore::{BulkPut, Datastore, Kind, Migration};
use sharded_runtime::firestore::gcloud_sdk::google::datastore::v1 as ds;
use sharded_runtime::firestore::gcloud_sdk::google::datastore::v1::datastore_client::DatastoreClient;
use sharded_runtime::firestore::gcloud_sdk::google_cloud_auth::credentials::anonymous;
use sharded_runtime::firestore::gcloud_sdk::{GoogleApi, GoogleAuthMiddleware};

type Failure = Box<dyn std::error::Error>;
type Raw = GoogleApi<DatastoreClient<GoogleAuthMiddleware>>;

const ENTITIES: usize = 2_000;
const PAGE: u32 = 20;
const RUNS: usize = 25;
const WRITES: usize = 3_000;

macro_rules! tick {
    ($name:ident, $shards:literal) => {
        #[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = "Tick")]
        pub struct $name {
            #[sharded(index)]
            pub venue: String,
            pub at: i64,
            pub note: String,
        }

        impl Tick for $name {
            fn new(venue: String, at: i64) -> Self {
                $name {
                    venue,
                    at,
                    note: String::new(),
                }
            }

            async fn first_page(kind: &Kind<Self>) -> sharded_runtime::Result<usize> {
                let query = $name::query().venue("XNAS".to_owned()).limit(PAGE);
                Ok(kind.fetch(&query).await?.len())
            }
        }
    };
}

/// A tick kind at some number of shard values.
trait Tick: Sharded + sharded_runtime::bounds::TopLevel {
    fn new(venue: String, at: i64) -> Self;
    /// The newest page of one venue.
    async fn first_page(kind: &Kind<Self>) -> sharded_runtime::Result<usize>;
}

tick!(Tick3, 3);
tick!(Tick40, 40);
tick!(Tick61, 61);

const VENUES: [&str; 4] = ["XNAS", "XNYS", "XLON", "XTKS"];

fn string(value: &str) -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::StringValue(value.to_owned())),
        ..Default::default()
    }
}

fn integer(value: i64) -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::IntegerValue(value)),
        ..Default::default()
    }
}

fn key(partition: &ds::PartitionId, kind: &str, id: &str) -> ds::Key {
    ds::Key {
        partition_id: Some(partition.clone()),
        path: vec![ds::key::PathElement {
            kind: kind.into(),
            id_type: Some(ds::key::path_element::IdType::Name(id.into())),
        }],
    }
}

/// Random ids and (venue, at) pairs: the same entities for every kind.
fn entities(n: usize) -> Vec<(String, String, i64)> {
    let mut rng = rand::rng();
    (0..n)
        .map(|i| {
            (
                format!("{:016x}", rng.random::<u64>()),
                VENUES[i % 4].to_owned(),
                rng.random_range(0..1_000_000),
            )
        })
        .collect()
}

/// Upserts `entities` into `kind` through the Datastore API itself, in plain commits of 500;
/// how long the commits took.
async fn plain_commits(
    raw: &Raw,
    partition: &ds::PartitionId,
    kind: &str,
    entities: &[(String, String, i64)],
) -> Result<Duration, Failure> {
    let clock = Instant::now();
    for chunk in entities.chunks(500) {
        let mutations = chunk
            .iter()
            .map(|(id, venue, at)| ds::Mutation {
                operation: Some(ds::mutation::Operation::Upsert(ds::Entity {
                    key: Some(key(partition, kind, id)),
                    properties: HashMap::from([
                        ("venue".to_owned(), string(venue)),
                        ("at".to_owned(), integer(*at)),
                        ("note".to_owned(), string("")),
                    ]),
                })),
                ..Default::default()
            })
            .collect();
        raw.get()
            .commit(ds::CommitRequest {
                project_id: partition.project_id.clone(),
                mode: ds::commit_request::Mode::NonTransactional as i32,
                mutations,
                ..Default::default()
            })
            .await?;
    }
    Ok(clock.elapsed())
}

/// The unsharded query: `venue = v ORDER BY at DESC, __key__ DESC LIMIT 20`.
async fn plain_query(raw: &Raw, partition: &ds::PartitionId, kind: &str) -> Result<usize, Failure> {
    let order = |name: &str| ds::PropertyOrder {
        property: Some(ds::PropertyReference { name: name.into() }),
        direction: ds::property_order::Direction::Descending as i32,
    };
    let query = ds::Query {
        kind: vec![ds::KindExpression { name: kind.into() }],
        filter: Some(ds::Filter {
            filter_type: Some(ds::filter::FilterType::PropertyFilter(ds::PropertyFilter {
                property: Some(ds::PropertyReference {
                    name: "venue".into(),
                }),
                op: ds::property_filter::Operator::Equal as i32,
                value: Some(string("XNAS")),
            })),
        }),
        order: vec![order("at"), order("__key__")],
        limit: Some(PAGE as i32),
        ..Default::default()
    };
    let answer = raw
        .get()
        .run_query(ds::RunQueryRequest {
            project_id: partition.project_id.clone(),
            partition_id: Some(partition.clone()),
            query_type: Some(ds::run_query_request::QueryType::Query(query)),
            ..Default::default()
        })
        .await?
        .into_inner();
    Ok(answer.batch.map_or(0, |batch| batch.entity_results.len()))
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Median latency of the first page of one venue, sharded at `T`'s shard values, against the
/// unsharded kind's same query, interleaved run by run.
async fn query_latencies<T: Tick>(
    datastore: &Datastore,
    raw: &Raw,
    partition: &ds::PartitionId,
    data: &[(String, String, i64)],
) -> Result<(Duration, Duration), Failure> {
    let namespace = format!("q{}", T::READ_SHARD_VALUES.len());
    let kind = datastore.clone().namespace(&namespace).kind::<T>();
    let place = ds::PartitionId {
        namespace_id: namespace,
        ..partition.clone()
    };
    let typed: Vec<(String, T)> = data
        .iter()
        .map(|(id, venue, at)| (id.clone(), T::new(venue.clone(), *at)))
        .collect();
    kind.bulk_put(
        typed,
        &BulkPut {
            throttling: Throttling::Off,
            ..BulkPut::default()
        },
        |_| {},
    )
    .await?;
    plain_commits(raw, &place, "TickPlain", data).await?;
    let (mut sharded, mut plain) = (Vec::new(), Vec::new());
    for run in 0..RUNS + 3 {
        let clock = Instant::now();
        let read = T::first_page(&kind).await?;
        let sharded_time = clock.elapsed();
        let clock = Instant::now();
        let plain_read = plain_query(raw, &place, "TickPlain").await?;
        let plain_time = clock.elapsed();
        if read != PAGE as usize || plain_read != PAGE as usize {
            return Err(format!("pages of {read} and {plain_read}").into());
        }
        // The first runs warm the emulator's caches.
        if run >= 3 {
            sharded.push(sharded_time);
            plain.push(plain_time);
        }
    }
    Ok((median(&mut sharded), median(&mut plain)))
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// Runs every measurement of the section and returns it as markdown.
pub async fn section() -> Result<String, Failure> {
    let emulator = Emulator::start_datastore_mode().await?;
    let project = format!("bench-ds-{:08x}", rand::random::<u32>());
    let datastore = Datastore::emulator(emulator.host(), &project).await?;
    let raw: Raw = GoogleApi::from_function_with_credentials(
        DatastoreClient::new,
        format!("http://{}", emulator.host()),
        None,
        anonymous::Builder::new().build(),
    )
    .await?;
    let partition = ds::PartitionId {
        project_id: project.clone(),
        ..Default::default()
    };
    let mut report = String::new();
    writeln!(
        report,
        "## Datastore mode on the emulator\n\n\
         The emulator in Datastore mode (`--database-mode=datastore-mode`), a fresh project.\n\n\
         ### Queries\n\n\
         {ENTITIES} entities of 4 venues with random ids; the newest {PAGE} of one venue\n\
         (`venue = v ORDER BY at DESC`), as a sharded kind's `fetch` (chunk queries of `shard IN\n\
         [...]`, merged) against the same Datastore query on an unsharded kind holding the same\n\
         entities, interleaved run by run; medians of {RUNS} runs after 3 to warm up.\n\n\
         The emulator answers an `IN` with about one scan per value (see\n\
         `firestore-facts.md`), so its cost here grows with the shard values a chunk asks for;\n\
         this says what the client adds on the emulator, not what production costs.\n\n\
         | shard values | chunk queries | unsharded | sharded | ratio |\n|---|---|---|---|---|"
    )?;
    let data = entities(ENTITIES);
    for (shards, (sharded, plain)) in [
        (
            3_usize,
            query_latencies::<Tick3>(&datastore, &raw, &partition, &data).await?,
        ),
        (
            40,
            query_latencies::<Tick40>(&datastore, &raw, &partition, &data).await?,
        ),
        (
            61,
            query_latencies::<Tick61>(&datastore, &raw, &partition, &data).await?,
        ),
    ] {
        writeln!(
            report,
            "| {shards} | {} | {:.2} ms | {:.2} ms | {:.2}× |",
            shards.div_ceil(30),
            ms(plain),
            ms(sharded),
            sharded.as_secs_f64() / plain.as_secs_f64()
        )?;
    }
    // Writes: plain commits of 500, bulk_put, and a migration of the plain kind.
    let data = entities(WRITES);
    let writes = ds::PartitionId {
        namespace_id: "writes".into(),
        ..partition.clone()
    };
    let plain = plain_commits(&raw, &writes, "Old", &data).await?;
    let typed: Vec<(String, Tick40)> = data
        .iter()
        .map(|(id, venue, at)| (id.clone(), Tick40::new(venue.clone(), *at)))
        .collect();
    let unthrottled = BulkPut {
        throttling: Throttling::Off,
        ..BulkPut::default()
    };
    let clock = Instant::now();
    let report_put = datastore
        .clone()
        .namespace("bulk")
        .kind::<Tick40>()
        .bulk_put(typed, &unthrottled, |_| {})
        .await?;
    let bulk = clock.elapsed();
    let moved = datastore.clone().namespace("writes").kind::<Tick40>();
    let clock = Instant::now();
    let migrated = moved
        .migrate_from(
            &Migration {
                throttling: Throttling::Off,
                ..Migration::from_kind("Old")
            },
            None,
            |_| ControlFlow::Continue(()),
        )
        .await?;
    let migration = clock.elapsed();
    if migrated.copied != WRITES || report_put.written != WRITES {
        return Err(format!(
            "migrated {} and wrote {} of {WRITES}",
            migrated.copied, report_put.written
        )
        .into());
    }
    let rate = |elapsed: Duration| WRITES as f64 / elapsed.as_secs_f64();
    writeln!(
        report,
        "\n### Writes and migration\n\n\
         {WRITES} entities with random ids, throttling off (the ramp would set the pace: 500/s\n\
         at first), one run each. The baseline: the same entities upserted through the Datastore\n\
         API in plain non-transactional commits of 500. `bulk_put` draws each shard, checks each\n\
         entity and excludes unqueried properties, in commits of 500. The migration copies the\n\
         baseline's kind into a sharded one with the defaults (16 lanes split by a sample of the\n\
         kind's keys, commits of 500, each a transaction reading the old entities and the new\n\
         kind again).\n\n\
         | what | time | entities/s | per commit | vs plain commits |\n|---|---|---|---|---|\n\
         | plain commits of 500 | {:.0} ms | {:.0} | 500 | 1.00× |\n\
         | `bulk_put` | {:.0} ms | {:.0} | {} | {:.2}× |\n\
         | `migrate_from` | {:.0} ms | {:.0} | {} (largest {}) | {:.2}× |",
        ms(plain),
        rate(plain),
        ms(bulk),
        rate(bulk),
        WRITES / report_put.commits.max(1),
        bulk.as_secs_f64() / plain.as_secs_f64(),
        ms(migration),
        rate(migration),
        WRITES / migrated.commits.max(1),
        migrated.largest_commit,
        migration.as_secs_f64() / plain.as_secs_f64(),
    )?;
    Ok(report)
}
