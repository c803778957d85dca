//! Datastore mode's migration between kinds on real legacy data, on the emulator in Datastore
//! mode: the app's deletions and updates between a lane read and its commit are never undone,
//! entities the sharded kind cannot hold as they are (other entity groups, names that are no
//! ids, values too long to index) are reported and left, never flattened or renamed, and
//! commits are full whatever the ids: numbers Datastore allocated, random names, sequential
//! names.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sharded_runtime::datastore::{
    BulkPut, Datastore, LeftBehind, LeftBehindReason, Migration, MigrationProgress,
};
use sharded_runtime::firestore::gcloud_sdk::google::datastore::v1 as ds;
use sharded_runtime::jobs::IdRange;

use crate::datastore_mode::{
    Raw, Reading, Reading3, Twin, VENUES, fresh_datastore, integer, null, raw_client, string,
};

use ds::key::path_element::IdType;

/// A legacy entity's properties, as an old app wrote them.
fn old(i: usize, note: &str) -> HashMap<String, ds::Value> {
    HashMap::from([
        ("venue".to_owned(), string(VENUES[i % 4])),
        ("region".to_owned(), null()),
        ("at".to_owned(), integer(i as i64 % 50)),
        ("qty".to_owned(), integer(i as i64)),
        ("note".to_owned(), string(note)),
    ])
}

fn partition(project: &str, namespace: &str) -> ds::PartitionId {
    ds::PartitionId {
        project_id: project.into(),
        namespace_id: namespace.into(),
        ..Default::default()
    }
}

fn element(kind: &str, id: IdType) -> ds::key::PathElement {
    ds::key::PathElement {
        kind: kind.into(),
        id_type: Some(id),
    }
}

fn name(name: &str) -> IdType {
    IdType::Name(name.into())
}

/// Writes entities at any keys (ancestors, numeric ids) through the Datastore API itself.
async fn put_raw(
    raw: &Raw,
    partition: &ds::PartitionId,
    entities: Vec<(Vec<ds::key::PathElement>, HashMap<String, ds::Value>)>,
) {
    let mutations = entities
        .into_iter()
        .map(|(path, properties)| ds::Mutation {
            operation: Some(ds::mutation::Operation::Upsert(ds::Entity {
                key: Some(ds::Key {
                    partition_id: Some(partition.clone()),
                    path,
                }),
                properties,
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
        .await
        .unwrap();
}

/// `n` names as Firestore generates ids: 20 letters and digits, uniformly random.
fn random_names(n: usize) -> Vec<IdType> {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| name(&sharded_tests::generated_id(&mut rng)))
        .collect()
}

/// Writes a legacy entity of `kind` at each of `ids`, at the top of `partition`.
async fn put_kind(raw: &Raw, partition: &ds::PartitionId, kind: &str, ids: &[IdType]) {
    for chunk in ids.chunks(500) {
        let entities = chunk
            .iter()
            .enumerate()
            .map(|(i, id)| (vec![element(kind, id.clone())], old(i, "old")))
            .collect();
        put_raw(raw, partition, entities).await;
    }
}

/// Runs `migration` to its end, collecting every progress and what was left behind.
async fn migrate<T: sharded_runtime::Sharded>(
    kind: &sharded_runtime::datastore::Kind<T>,
    migration: &Migration,
) -> (MigrationProgress, Vec<MigrationProgress>, Vec<LeftBehind>) {
    let mut steps = Vec::new();
    let done = kind
        .migrate_from(migration, None, |progress| {
            steps.push(progress.clone());
            ControlFlow::Continue(())
        })
        .await
        .unwrap();
    let left = steps
        .iter()
        .flat_map(|step| step.left_behind.clone())
        .collect();
    (done, steps, left)
}

/// The app writes while a migration runs: after the first commit each lane holds keys read
/// ahead and not yet committed (a lane reads up to `batch_size` keys, a commit takes its
/// share), and the app deletes one of them from both kinds, updates another in the old kind,
/// and writes a third to both. The commit reads the old kind again in its transaction: the
/// deleted entity is not brought back, the updated one is copied as updated, the one the app
/// wrote is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_copies_each_entity_as_it_is_at_its_commit() {
    let (datastore, project) = fresh_datastore("ds-migration-race").await;
    let old_kind = Twin {
        raw: raw_client().await,
        partition: partition(&project, ""),
        kind: "RaceOld".into(),
    };
    old_kind
        .write(
            (0..40)
                .map(|i| (format!("r{i:02}"), old(i, "old")))
                .collect(),
        )
        .await;
    let readings = datastore.kind::<Reading3>();
    let options = Migration {
        lanes: vec![
            IdRange::new(None, Some("r20")).unwrap(),
            IdRange::new(Some("r20"), None).unwrap(),
        ],
        batch_size: 10,
        ..Migration::from_kind("RaceOld")
    };
    let runtime = tokio::runtime::Handle::current();
    let app = |progress: &MigrationProgress| {
        if progress.commits == 1 {
            assert_eq!(progress.copied, 10, "r00..r04 and r20..r24");
            tokio::task::block_in_place(|| {
                runtime.block_on(async {
                    // Read ahead (r05..r09, r25..r29) and not committed: the race's window.
                    readings.delete("r07").await.unwrap();
                    old_kind
                        .raw
                        .get()
                        .commit(ds::CommitRequest {
                            project_id: project.clone(),
                            mode: ds::commit_request::Mode::NonTransactional as i32,
                            mutations: vec![ds::Mutation {
                                operation: Some(ds::mutation::Operation::Delete(
                                    old_kind.key("r07"),
                                )),
                                ..Default::default()
                            }],
                            ..Default::default()
                        })
                        .await
                        .unwrap();
                    old_kind
                        .write(vec![("r08".into(), old(8, "updated"))])
                        .await;
                    let newer = Reading3::new("XNAS".into(), None, 1, -1, "newer".into());
                    readings.upsert("r26", &newer).await.unwrap();
                    old_kind.write(vec![("r26".into(), old(26, "newer"))]).await;
                });
            });
        }
        ControlFlow::Continue(())
    };
    let done = readings.migrate_from(&options, None, app).await.unwrap();
    assert!(done.checkpoint.is_done());
    assert_eq!(
        (done.copied, done.already_there, done.vanished),
        (38, 1, 1),
        "r07 deleted before its commit, r26 written by the app"
    );
    assert!(
        readings.get("r07").await.unwrap().is_none(),
        "no resurrection"
    );
    let r08 = readings.get("r08").await.unwrap().unwrap();
    assert_eq!(
        r08.document.note, "updated",
        "copied as it is at its commit"
    );
    let r26 = readings.get("r26").await.unwrap().unwrap();
    assert_eq!(r26.document.note, "newer");
    assert_eq!(readings.fetch(&Reading3::all()).await.unwrap().len(), 39);
    // Run again: nothing copied twice, nothing brought back.
    let (again, _, _) = migrate(&readings, &options).await;
    assert_eq!(
        (again.copied, again.already_there, again.vanished),
        (0, 39, 0)
    );
}

/// A kind query finds the old kind under every ancestor, and Datastore allows names no
/// document id can be: those entities are reported by key and left where they are, never
/// flattened into this kind (two entities of one name under different roots would become
/// one) or renamed; an entity whose queried property is too long to index is reported, not
/// left to fail its commit; every other entity is copied.
#[tokio::test]
async fn a_migration_leaves_behind_by_key_what_it_cannot_copy_as_it_is() {
    let (datastore, project) = fresh_datastore("ds-migration-left").await;
    let raw = raw_client().await;
    let top = partition(&project, "");
    let entity = |path: Vec<ds::key::PathElement>, i: usize| (path, old(i, "old"));
    let mut long = old(5, "old");
    let mut venue = string(&"v".repeat(2_000));
    // The old app kept it unindexed; the sharded kind's queries read `venue`.
    venue.exclude_from_indexes = true;
    long.insert("venue".into(), venue);
    put_raw(
        &raw,
        &top,
        vec![
            entity(vec![element("MixedOld", name("a"))], 0),
            entity(vec![element("MixedOld", name("b"))], 1),
            entity(vec![element("MixedOld", IdType::Id(7))], 2),
            entity(vec![element("MixedOld", IdType::Id(-3))], 3),
            entity(
                vec![element("Root", name("r1")), element("MixedOld", name("x"))],
                4,
            ),
            entity(
                vec![element("Root", name("r2")), element("MixedOld", name("x"))],
                6,
            ),
            entity(vec![element("MixedOld", name("users/42"))], 7),
            entity(vec![element("MixedOld", name("a/42"))], 8),
            entity(vec![element("MixedOld", name(".."))], 9),
            (vec![element("MixedOld", name("long"))], long),
        ],
    )
    .await;
    let readings = datastore.kind::<Reading3>();
    let (done, _, left) = migrate(
        &readings,
        &Migration {
            lane_count: 3,
            ..Migration::from_kind("MixedOld")
        },
    )
    .await;
    assert_eq!(done.copied, 4, "a, b, __id7__, __id-3__");
    assert_eq!(done.left_behind_total, left.len());
    let mut reported: Vec<(String, LeftBehindReason)> = left
        .into_iter()
        .map(|left| (left.key, left.reason))
        .collect();
    reported.sort_by(|a, b| a.0.cmp(&b.0));
    let not_an_id = |key: &str| {
        reported
            .iter()
            .any(|(k, reason)| k == key && matches!(reason, LeftBehindReason::NotAnId(_)))
    };
    assert_eq!(reported.len(), 6, "{reported:?}");
    assert!(not_an_id("KEY(MixedOld, 'users/42')"), "{reported:?}");
    assert!(not_an_id("KEY(MixedOld, 'a/42')"), "{reported:?}");
    assert!(not_an_id("KEY(MixedOld, '..')"), "{reported:?}");
    for root in ["r1", "r2"] {
        let key = format!("KEY(Root, '{root}', MixedOld, 'x')");
        assert!(
            reported
                .iter()
                .any(|(k, reason)| *k == key && *reason == LeftBehindReason::OtherAncestor),
            "{reported:?}"
        );
    }
    assert!(
        reported
            .iter()
            .any(|(k, reason)| k == "KEY(MixedOld, 'long')"
                && *reason
                    == LeftBehindReason::TooLongToIndex {
                        property: "venue".into(),
                        bytes: 2_000
                    }),
        "{reported:?}"
    );
    let mut ids: Vec<String> = readings
        .fetch(&Reading3::all())
        .await
        .unwrap()
        .into_iter()
        .map(|stored| stored.id)
        .collect();
    ids.sort();
    assert_eq!(ids, ["__id-3__", "__id7__", "a", "b"]);
    // Under an ancestor: only the ancestor's direct children; a grandchild is reported, an
    // entity of another ancestor not even read.
    use crate::datastore_mode::Post;
    put_raw(
        &raw,
        &top,
        vec![
            (
                vec![
                    element("Room", name("lobby")),
                    element("OldPost", name("p1")),
                ],
                post_properties(),
            ),
            (
                vec![
                    element("Room", name("lobby")),
                    element("Thread", name("t")),
                    element("OldPost", name("p2")),
                ],
                post_properties(),
            ),
            (
                vec![
                    element("Room", name("hall")),
                    element("OldPost", name("p3")),
                ],
                post_properties(),
            ),
        ],
    )
    .await;
    let lobby = sharded_runtime::Parent::<Post>::new(&["lobby"]).unwrap();
    let posts = datastore.kind_in(&lobby);
    let (done, _, left) = migrate(&posts, &Migration::from_kind("OldPost")).await;
    assert_eq!(done.copied, 1);
    let left: Vec<(String, LeftBehindReason)> = left
        .into_iter()
        .map(|left| (left.key, left.reason))
        .collect();
    assert_eq!(
        left,
        [(
            "KEY(Room, 'lobby', Thread, 't', OldPost, 'p2')".to_owned(),
            LeftBehindReason::OtherAncestor
        )]
    );
    assert!(posts.get("p1").await.unwrap().is_some());
    assert!(posts.get("p2").await.unwrap().is_none());
}

fn post_properties() -> HashMap<String, ds::Value> {
    HashMap::from([
        ("author".to_owned(), string("ann")),
        ("at".to_owned(), integer(1)),
        ("body".to_owned(), string("")),
    ])
}

/// The default migration (lanes split by the old kind's own keys) over ids spread three ways:
/// every commit but the last holds `batch_size` entities, none more, and consecutive writes
/// never rise in a run (the hotspot). At the default `batch_size` of 500 the first commit goes
/// out at the ramp's first rate, not after its first step.
#[tokio::test]
async fn a_default_migration_fills_its_commits_whatever_the_ids() {
    let (datastore, project) = fresh_datastore("ds-migration-fill").await;
    let raw = raw_client().await;
    let total = 1_000;
    let batch_size = 100;
    // Numeric ids as Datastore allocates them (Google's clients' `allocate_ids`).
    let allocated: Vec<IdType> = {
        let mut ids = Vec::new();
        for _ in 0..2 {
            let keys = (0..total / 2)
                .map(|_| ds::Key {
                    partition_id: Some(partition(&project, "allocated")),
                    path: vec![ds::key::PathElement {
                        kind: "Old".into(),
                        id_type: None,
                    }],
                })
                .collect();
            let answer = raw
                .get()
                .allocate_ids(ds::AllocateIdsRequest {
                    project_id: project.clone(),
                    keys,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            ids.extend(
                answer
                    .keys
                    .into_iter()
                    .map(|key| key.path[0].id_type.clone().unwrap()),
            );
        }
        ids
    };
    let random = random_names(total);
    let sequential: Vec<IdType> = (0..total).map(|i| name(&format!("order-{i:06}"))).collect();
    for (namespace, ids, lane_count) in [
        ("allocated", allocated, 16),
        ("random", random, 16),
        ("sequential", sequential.clone(), 16),
        // More lanes than a rising run is long: the lanes' order still goes up and down.
        ("many-lanes", sequential, 64),
    ] {
        put_kind(&raw, &partition(&project, namespace), "Old", &ids).await;
        let readings = datastore.clone().namespace(namespace).kind::<Reading3>();
        let clock = std::time::Instant::now();
        let (done, steps, left) = migrate(
            &readings,
            &Migration {
                batch_size,
                lane_count,
                ..Migration::from_kind("Old")
            },
        )
        .await;
        println!(
            "{namespace}: {} entities in {} commits over {} lanes, {:?}",
            done.copied,
            done.commits,
            done.checkpoint.lanes(),
            clock.elapsed()
        );
        assert!(left.is_empty(), "{namespace}: {left:?}");
        assert_eq!(done.copied, total, "{namespace}");
        assert_eq!(done.commits, total.div_ceil(batch_size), "{namespace}");
        assert_eq!(done.largest_commit, batch_size, "{namespace}");
        assert!(done.checkpoint.lanes() > 1, "{namespace}");
        let mut before = 0;
        for step in &steps {
            assert!(step.copied - before <= batch_size, "{namespace}");
            before = step.copied;
        }
        assert_eq!(readings.sequential_ids(), None, "{namespace}: a rising run");
    }
    // The default batch of 500 over 16 lanes: commits of 500 from the ramp's first second.
    let ids = random_names(1_500);
    put_kind(&raw, &partition(&project, "defaults"), "OldRandom", &ids).await;
    let readings = datastore.clone().namespace("defaults").kind::<Reading3>();
    let (done, _, _) = migrate(&readings, &Migration::from_kind("OldRandom")).await;
    assert_eq!(
        (done.copied, done.commits, done.largest_commit),
        (1_500, 3, 500)
    );
    assert_eq!(done.checkpoint.lanes(), 16);
}

/// `bulk_put` with one entity Datastore would refuse (a queried string longer than it
/// indexes): that entity is reported by id, with the property, and every other one written.
#[tokio::test]
async fn bulk_put_refuses_an_entity_too_long_to_index_alone_and_writes_the_rest() {
    let (datastore, _) = fresh_datastore("ds-bulk-long").await;
    let readings = datastore.kind::<Reading3>();
    let documents: Vec<(String, Reading3)> = (0..30)
        .map(|i| {
            let venue = match i {
                17 => "v".repeat(1_501),
                _ => VENUES[i % 4].to_owned(),
            };
            (
                format!("b{i:02}"),
                Reading3::new(venue, None, i as i64, 1, String::new()),
            )
        })
        .collect();
    // Alone: a typed error before anything is sent.
    match readings.insert("b17", &documents[17].1).await {
        Err(sharded_runtime::Error::TooLongToIndex {
            entity,
            property,
            bytes,
        }) => assert_eq!(
            (entity.as_str(), property.as_str(), bytes),
            ("Reading3/b17", "venue", 1_501)
        ),
        other => panic!("{other:?}"),
    }
    let mut handled = Vec::new();
    match readings
        .bulk_put(
            documents,
            &BulkPut {
                batch_size: 10,
                ..BulkPut::default()
            },
            |n| handled.push(n),
        )
        .await
    {
        Err(sharded_runtime::Error::BulkWrite { failures }) => {
            assert_eq!(failures.len(), 1);
            assert_eq!(failures[0].document, "b17");
            assert!(!failures[0].maybe_applied);
            assert!(
                failures[0].message.contains("`venue`"),
                "{}",
                failures[0].message
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(handled, [10, 20, 30]);
    let stored = readings.fetch(&Reading3::all()).await.unwrap();
    assert_eq!(stored.len(), 29);
    assert!(stored.iter().all(|s| s.id != "b17"));
    // A value of exactly 1,500 bytes is indexed and written.
    readings
        .insert(
            "edge",
            &Reading3::new("é".repeat(750), None, 1, 1, String::new()),
        )
        .await
        .unwrap();
}

/// The part `vars` name, as a task engine's variables say it.
fn task_part(vars: &[(&str, &str)]) -> sharded_runtime::jobs::TaskPart {
    sharded_runtime::jobs::TaskPart::from_vars(|name| {
        vars.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    })
    .unwrap()
}

/// Starts `part` of the tracked migration `job` as a task of its own, and kills it (no
/// cleanup, as a SIGKILL or a lost machine) once it has made its second commit: the first
/// one's progress is stored then (progress is told before it is stored).
async fn killed_after_a_commit(
    kind: &sharded_runtime::datastore::Kind<Reading3>,
    options: &Migration,
    job: &str,
    part: sharded_runtime::jobs::TaskPart,
) {
    let (committed, mut first) = tokio::sync::mpsc::unbounded_channel();
    let (kind, options, job) = (kind.clone(), options.clone(), job.to_owned());
    let task = tokio::spawn(async move {
        kind.tracked_migration(options, &job, part)
            .run(|_| {
                let _ = committed.send(());
            })
            .await
    });
    for _ in 0..2 {
        first.recv().await.expect("the task commits before it ends");
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
}

/// A migration as a tracked job of three parts, its state in Datastore: a Cloud Run task
/// killed after its first commit and retried with the next attempt number, and a Kubernetes
/// Indexed Job's pod killed and replaced by another pod of the same Job, each take their part
/// over at once and finish it from its checkpoint; a duplicate of a live attempt, and a pod of
/// another Job, leave the part to its holder; a finished part is not run again; every entity
/// arrives once, and the status shows the whole job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_runs_as_a_tracked_job_under_task_engines_retries() {
    use sharded_runtime::datastore::MigrationPartRun;
    use sharded_runtime::jobs::{PartPhase, TaskPart};

    let (datastore, project) = fresh_datastore("ds-migration-job").await;
    let raw = raw_client().await;
    let ids = random_names(900);
    put_kind(&raw, &partition(&project, "tracked"), "JobOld", &ids).await;
    let readings = datastore.clone().namespace("tracked").kind::<Reading3>();
    let options = Migration {
        batch_size: 30,
        lane_count: 6,
        ..Migration::from_kind("JobOld")
    };
    let job = "move-readings";
    let cloud_run = |attempt: &str| {
        task_part(&[
            ("CLOUD_RUN_TASK_INDEX", "0"),
            ("CLOUD_RUN_TASK_COUNT", "3"),
            ("CLOUD_RUN_TASK_ATTEMPT", attempt),
            ("CLOUD_RUN_EXECUTION", "move-readings-x7k2p"),
        ])
    };
    let pod = |job: &str, pod: &str| {
        task_part(&[
            ("JOB_COMPLETION_INDEX", "1"),
            ("SHARDED_TASK_COUNT", "3"),
            ("SHARDED_JOB_NAME", job),
            ("SHARDED_POD_NAME", pod),
        ])
    };
    // Cloud Run: attempt 0 dies after a commit; a duplicate of it leaves the part alone; the
    // engine's retry, attempt 1, takes it over at once.
    killed_after_a_commit(&readings, &options, job, cloud_run("0")).await;
    let status = readings.migration_status(job).await.unwrap();
    assert_eq!(status.parts.len(), 3);
    assert_eq!(status.parts[0].phase, PartPhase::Running);
    assert!(status.parts[0].commits >= 1);
    let run = |part: TaskPart| readings.tracked_migration(options.clone(), job, part);
    match run(cloud_run("0"))
        .leave_if_held()
        .run(|_| {})
        .await
        .unwrap()
    {
        MigrationPartRun::HeldElsewhere(part) => assert_eq!(part.attempt, 0),
        other => panic!("{other:?}"),
    }
    match run(cloud_run("1"))
        .leave_if_held()
        .run(|_| {})
        .await
        .unwrap()
    {
        MigrationPartRun::Finished(part) => {
            assert_eq!((part.phase, part.attempt), (PartPhase::Done, 1));
        }
        other => panic!("{other:?}"),
    }
    // Kubernetes: a pod dies; a pod of another Job never takes its part; the Job's next pod
    // for the index does, at once.
    killed_after_a_commit(
        &readings,
        &options,
        job,
        pod("move-readings", "move-readings-1-aaaaa"),
    )
    .await;
    match run(pod("another-job", "another-job-1-ccccc"))
        .leave_if_held()
        .run(|_| {})
        .await
        .unwrap()
    {
        MigrationPartRun::HeldElsewhere(part) => assert_eq!(part.phase, PartPhase::Running),
        other => panic!("{other:?}"),
    }
    match run(pod("move-readings", "move-readings-1-bbbbb"))
        .leave_if_held()
        .run(|_| {})
        .await
        .unwrap()
    {
        MigrationPartRun::Finished(part) => assert_eq!(part.phase, PartPhase::Done),
        other => panic!("{other:?}"),
    }
    // The last part, by tasks no engine numbers: one dies; the next waits out the lease of
    // the silent holder (two seconds here), then goes on from its checkpoint.
    killed_after_a_commit(&readings, &options, job, TaskPart::new(2, 3).unwrap()).await;
    let clock = std::time::Instant::now();
    match run(TaskPart::new(2, 3).unwrap())
        .lease_timeout(std::time::Duration::from_secs(2))
        .run(|_| {})
        .await
        .unwrap()
    {
        MigrationPartRun::Finished(part) => assert!(part.commits >= 2, "{part:?}"),
        other => panic!("{other:?}"),
    }
    println!("the lease was waited out in {:?}", clock.elapsed());
    assert!(matches!(
        run(TaskPart::new(2, 3).unwrap()).run(|_| {}).await.unwrap(),
        MigrationPartRun::AlreadyDone(_)
    ));
    // A task of another split is refused.
    match run(TaskPart::new(0, 4).unwrap()).run(|_| {}).await {
        Err(sharded_runtime::Error::JobMismatch { .. }) => {}
        other => panic!("{other:?}"),
    }
    let status = readings.migration_status(job).await.unwrap();
    assert!(status.is_done(), "{status:?}");
    let counted: u64 = status
        .parts
        .iter()
        .map(|part| part.copied + part.already_there)
        .sum();
    assert!(status.copied() <= 900 && counted >= 900, "{status:?}");
    let mut copied: Vec<String> = readings
        .fetch(&Reading3::all())
        .await
        .unwrap()
        .into_iter()
        .map(|stored| stored.id)
        .collect();
    copied.sort();
    let mut expected: Vec<String> = ids
        .iter()
        .map(|id| match id {
            IdType::Name(name) => name.clone(),
            IdType::Id(n) => format!("__id{n}__"),
        })
        .collect();
    expected.sort();
    assert_eq!(copied, expected, "every entity once");
}

/// An attempt whose connection goes silent past its lease loses its part: another attempt
/// takes it over from the checkpoint, and the silent one, once its connection answers again,
/// learns it at its next state write (`JobLeaseLost`) and stops; every entity arrives once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_attempt_that_lost_its_lease_stops_at_its_next_write() {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    use sharded_runtime::datastore::MigrationPartRun;
    use sharded_runtime::jobs::TaskPart;
    use std::time::Duration;

    let (datastore, project) = fresh_datastore("ds-migration-lease").await;
    let raw = raw_client().await;
    let ids = random_names(600);
    put_kind(&raw, &partition(&project, ""), "LeaseOld", &ids).await;
    let options = Migration {
        batch_size: 20,
        lane_count: 4,
        ..Migration::from_kind("LeaseOld")
    };
    let proxy = FaultProxy::start(crate::datastore_mode::emulator().host(), Faults::NONE)
        .await
        .unwrap();
    let through = Datastore::emulator(&proxy.host(), &project).await.unwrap();
    let (committed, mut first) = tokio::sync::mpsc::unbounded_channel();
    let silent_options = options.clone();
    let silent = tokio::spawn(async move {
        through
            .kind::<Reading3>()
            .tracked_migration(silent_options, "lease", TaskPart::new(0, 1).unwrap())
            .run(|_| {
                let _ = committed.send(());
            })
            .await
    });
    first.recv().await.expect("the first attempt commits");
    // Its connection goes silent: requests reach the server, no answer comes back.
    proxy.set_stalled(true);
    let readings = datastore.kind::<Reading3>();
    let taken_over = readings
        .tracked_migration(options.clone(), "lease", TaskPart::new(0, 1).unwrap())
        .lease_timeout(Duration::from_secs(1))
        .run(|_| {})
        .await
        .unwrap();
    assert!(
        matches!(taken_over, MigrationPartRun::Finished(_)),
        "{taken_over:?}"
    );
    proxy.set_stalled(false);
    match silent.await.unwrap() {
        Err(sharded_runtime::Error::JobLeaseLost { job, part }) => {
            assert_eq!((job.as_str(), part), ("lease", 0));
        }
        other => panic!("{other:?}"),
    }
    let status = readings.migration_status("lease").await.unwrap();
    assert!(status.is_done(), "{status:?}");
    assert_eq!(readings.fetch(&Reading3::all()).await.unwrap().len(), 600);
}
