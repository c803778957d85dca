//! A backfill split into four parts of the id space, each run by a process of its own (this
//! test binary, running `partition_worker` alone), one of them killed after its first
//! checkpoint and started again from it: together they scan every document exactly once, and
//! every document ends with a current shard. Measured first: the emulator does not implement
//! `PartitionQuery`, which is why parts split the id space.

use std::process::Stdio;

use serde::{Deserialize, Serialize};
use sharded_runtime::bulk::{BulkWriterOptions, Throttling};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    PartitionQueryRequest, StructuredQuery, partition_query_request, structured_query,
};
use sharded_runtime::{
    Error, Sharded,
    jobs::{Checkpoint, IdRange, MAX_PARTS, SplitBy},
};
use sharded_tests::migration::unthrottled;
use sharded_tests::test_db;
use tokio::io::{AsyncBufReadExt, BufReader};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 8, order_by = "at", collection = "partitioned")]
struct Reading {
    at: i64,
    n: i64,
}

const PARTS: u32 = 4;
const PAGE: u32 = 40;

/// One part's backfill, from the environment the test below sets; prints each checkpoint
/// with the documents scanned up to it, then the total.
#[tokio::test]
#[ignore = "a worker process of a_backfill_in_four_processes_scans_every_document_once"]
async fn partition_worker() {
    let var = |name: &str| std::env::var(name).ok();
    let Some(host) = var("PARTITION_HOST") else {
        return;
    };
    let db = sharded_emulator::emulator::connect(&host, &var("PARTITION_PROJECT").unwrap())
        .await
        .unwrap();
    let index: u32 = var("PARTITION_INDEX").unwrap().parse().unwrap();
    let mut job = Reading::collection(&db)
        .backfill()
        .ids(IdRange::part(index, PARTS).unwrap())
        .page_size(PAGE)
        .writer(unthrottled().share_of(PARTS).unwrap());
    if let Some(last) = var("PARTITION_CHECKPOINT") {
        job = job.resume_from(Checkpoint::after(last));
    }
    let done = job
        .run(|progress| {
            if let Some(checkpoint) = &progress.checkpoint {
                println!("checkpoint {} {}", checkpoint.last_id(), progress.scanned);
            }
        })
        .await
        .unwrap();
    println!("done {}", done.scanned);
}

/// Runs a worker for part `index`; returns its process and its output lines.
fn worker(
    host: &str,
    project: &str,
    index: u32,
    checkpoint: Option<&str>,
) -> (
    tokio::process::Child,
    tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) {
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "partitioned_jobs::partition_worker",
            "--exact",
            "--ignored",
            "--nocapture",
            "--quiet",
        ])
        .env("PARTITION_HOST", host)
        .env("PARTITION_PROJECT", project)
        .env("PARTITION_INDEX", index.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if let Some(checkpoint) = checkpoint {
        command.env("PARTITION_CHECKPOINT", checkpoint);
    }
    let mut child = command.spawn().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

/// The documents a worker scanned: its `done` line's count.
async fn scanned_to_the_end(
    mut lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) -> u64 {
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(count) = line.strip_prefix("done ") {
            return count.parse().unwrap();
        }
    }
    panic!("a worker ended without finishing");
}

#[tokio::test]
async fn a_backfill_in_four_processes_scans_every_document_once() {
    use rand::SeedableRng;
    let test = test_db("partitioned-backfill").await;
    let project = sharded_tests::project_id(&test.db);
    let host = test.emulator.host().to_owned();
    // Documents written before the collection was sharded: generated-style ids, and some
    // of every other kind.
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut ids: Vec<String> = (0..1_600)
        .map(|_| sharded_tests::generated_id(&mut rng))
        .collect();
    ids.extend(["_x", "~tilde", "é", "0", "zz", "r001", "__id7__"].map(String::from));
    let writer = test.db.create_simple_batch_writer().await.unwrap();
    for chunk in ids.chunks(500) {
        let mut batch = writer.new_batch();
        for (n, id) in chunk.iter().enumerate() {
            let row = serde_json::json!({ "at": n, "n": n });
            batch
                .update_object(Reading::COLLECTION, id, &row, None, None, Vec::new())
                .unwrap();
        }
        batch.write().await.unwrap();
    }
    assert_eq!(
        Reading::collection(&test.db)
            .verify()
            .await
            .unwrap()
            .missing,
        ids.len() as u64
    );

    let mut running: Vec<_> = (0..PARTS)
        .map(|index| worker(&host, &project, index, None))
        .collect();
    // Part 1 is killed after its first checkpoint, and started again from it.
    let (mut killed, mut lines) = running.remove(1);
    let line = loop {
        let line = lines.next_line().await.unwrap().expect("a checkpoint line");
        if line.starts_with("checkpoint ") {
            break line;
        }
    };
    let mut fields = line.strip_prefix("checkpoint ").unwrap().split(' ');
    let (last, before) = (fields.next().unwrap().to_owned(), fields.next().unwrap());
    let before: u64 = before.parse().unwrap();
    killed.kill().await.unwrap();
    let (restarted, restarted_lines) = worker(&host, &project, 1, Some(&last));
    let mut scanned = before + scanned_to_the_end(restarted_lines).await;
    let mut parts = vec![scanned];
    for (child, lines) in running {
        let part = scanned_to_the_end(lines).await;
        parts.push(part);
        scanned += part;
        drop(child);
    }
    drop(restarted);
    assert!(parts.iter().all(|&part| part > 0), "{parts:?}");
    assert_eq!(scanned, ids.len() as u64, "every document once: {parts:?}");
    let census = Reading::collection(&test.db).verify().await.unwrap();
    assert_eq!(
        (census.current, census.outstanding()),
        (ids.len() as u64, 0)
    );
}

/// Four writers each with a quarter of the ramp start and stop where one writer would.
#[test]
fn shares_of_the_ramp_add_up_to_the_ramp() {
    let whole = BulkWriterOptions::for_type::<Reading>();
    let share = whole.clone().share_of(PARTS).unwrap();
    let (
        Throttling::Ramp {
            initial, maximum, ..
        },
        Throttling::Ramp {
            initial: part_initial,
            maximum: part_maximum,
            ..
        },
    ) = (whole.throttling, share.throttling)
    else {
        panic!("ramps");
    };
    assert_eq!(part_initial * f64::from(PARTS), initial);
    assert_eq!(part_maximum * f64::from(PARTS), maximum);
    for workers in [0, MAX_PARTS + 1, u32::MAX] {
        for options in [
            BulkWriterOptions::default(),
            BulkWriterOptions::unthrottled(),
        ] {
            assert!(
                matches!(
                    options.share_of(workers),
                    Err(Error::InvalidOptions {
                        option: "share_of",
                        ..
                    })
                ),
                "{workers}"
            );
        }
    }
    assert!(BulkWriterOptions::unthrottled().share_of(MAX_PARTS).is_ok());
}

/// Where the server has no `PartitionQuery` (the emulator), `parts` splits the id space, and
/// a job run part by part over those parts covers every document once; refused part counts
/// are typed errors.
#[tokio::test]
async fn parts_fall_back_to_the_id_space_where_partition_query_is_unimplemented() {
    let test = test_db("partition-fallback").await;
    let db = &test.db;
    let parts = Reading::collection(db).parts(4).await.unwrap();
    assert_eq!(parts.by, SplitBy::IdSpace);
    assert_eq!(
        parts.ranges,
        (0..4)
            .map(|i| IdRange::part(i, 4).unwrap())
            .collect::<Vec<_>>()
    );
    for refused in [0, MAX_PARTS + 1] {
        assert!(matches!(
            Reading::collection(db).parts(refused).await,
            Err(Error::InvalidOptions { .. })
        ));
    }
    let one = Reading::collection(db).parts(1).await.unwrap();
    assert_eq!(one.ranges, vec![IdRange::all()]);
    // Legacy documents (no shard) under generated ids, adopted part by part.
    let ids: Vec<String> = (0..60)
        .map(|i| format!("{}x{i}", ['0', 'G', 'p', 'z'][i % 4]))
        .collect();
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for (n, id) in ids.iter().enumerate() {
        let row = serde_json::json!({ "at": n, "n": n });
        batch
            .update_object(Reading::COLLECTION, id, &row, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();
    let mut updated = 0;
    for range in parts.ranges {
        let done = Reading::collection(db)
            .backfill()
            .writer(unthrottled())
            .ids(range)
            .run(|_| {})
            .await
            .unwrap();
        updated += done.updated;
    }
    assert_eq!(updated, ids.len() as u64);
    let census = Reading::collection(db).verify().await.unwrap();
    assert_eq!(
        (census.current, census.outstanding()),
        (ids.len() as u64, 0)
    );
}

/// Measured: the emulator has no `PartitionQuery`.
#[tokio::test]
async fn the_emulator_does_not_implement_partition_query() {
    let test = test_db("partition-query").await;
    let query = StructuredQuery {
        from: vec![structured_query::CollectionSelector {
            collection_id: Reading::COLLECTION.into(),
            all_descendants: true,
        }],
        ..Default::default()
    };
    let request = PartitionQueryRequest {
        parent: test.db.get_documents_path().to_string(),
        partition_count: 4,
        query_type: Some(partition_query_request::QueryType::StructuredQuery(query)),
        ..Default::default()
    };
    let answer = test.db.client().get().partition_query(request).await;
    assert_eq!(
        answer.unwrap_err().code(),
        sharded_runtime::firestore::gcloud_sdk::tonic::Code::Unimplemented,
        "the emulator answers PartitionQuery now: split by it"
    );
}

/// Over a collection group, `PartitionQuery`'s split points may lie under parents of another
/// collection with the group's id (`users/{u}/notes`, beside `rooms/{r}/notes`): the group's
/// scan takes those documents too, in path order, so such a point bounds a part by its path
/// where it used to be dropped (and the last part took every such document). Parts bounded by
/// paths and ids together cover every document of the group once; a job over one
/// collection refuses a path bound.
#[tokio::test]
async fn a_groups_parts_split_at_paths_under_any_parent_cover_every_document_once() {
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
    #[sharded(
        shards = 4,
        order_by = "at",
        parent = "rooms",
        collection = "notes",
        collection_group
    )]
    struct Note {
        at: i64,
    }
    let test = test_db("partitioned-group-paths").await;
    let db = &test.db;
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    let mut total = 0u64;
    for (parents, count) in [("rooms", 6), ("users", 6), ("a", 2)] {
        for p in 0..count {
            for n in 0..10 {
                let parent = db.parent_path(parents, format!("p{p}")).unwrap();
                batch
                    .update_object_at(
                        parent.as_ref(),
                        "notes",
                        format!("n{n}"),
                        &serde_json::json!({ "at": n }),
                        None,
                        None,
                        Vec::new(),
                    )
                    .unwrap();
                total += 1;
            }
        }
    }
    batch.write().await.unwrap();
    // What PartitionQuery could answer: a room's id, and two documents under users.
    let bounds = [
        None,
        Some("p3"),
        Some("users/p2/notes/n5"),
        Some("users/p4"),
        None,
    ];
    let mut scanned = 0;
    for pair in bounds.windows(2) {
        let range = IdRange::new(pair[0], pair[1]).unwrap();
        let done = Note::collection_group(db)
            .backfill()
            .ids(range)
            .writer(unthrottled())
            .run(|_| {})
            .await
            .unwrap();
        scanned += done.scanned;
    }
    assert_eq!(scanned, total, "every document of the group once");
    let census = Note::collection_group(db).verify().await.unwrap();
    assert_eq!((census.scanned, census.outstanding()), (total, 0));
    // A path does not bound a job over one collection.
    let room = sharded_runtime::Parent::<Note>::new(&["p1"]).unwrap();
    let refused = Note::collection_in(db, &room)
        .backfill()
        .ids(IdRange::new(Some("users/p2/notes/n5"), None).unwrap())
        .run(|_| {})
        .await;
    assert!(
        matches!(refused, Err(Error::InvalidOptions { option: "ids", .. })),
        "{refused:?}"
    );
}
