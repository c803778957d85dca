//! Expiry in Datastore mode, on the emulator in that mode: `unexpired(now)` returns the
//! entities whose expiry is after `now`, in the query's order; a purge deletes exactly the
//! expired ones, one keys-only query per shard value and page, and leaves an entity given a
//! later expiry while it runs; it resumes from its Datastore cursors; `index.yaml` holds the
//! index its query needs.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::datastore::Kind;
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::indexes::QueryScope;
use sharded_runtime::jobs::{PurgeOptions, ShardPurge};

use crate::datastore_mode::fresh_datastore;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(
    shards = 5,
    order_by = "at",
    collection = "Session",
    expire_at = "expires_at"
)]
struct Session {
    #[sharded(index)]
    user: String,
    at: i64,
    expires_at: FirestoreTimestamp,
    note: String,
}

const NOW: i64 = 1_800_000_000;

fn at(seconds: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).unwrap())
}

fn sessions(rng: &mut StdRng, size: usize) -> Vec<(String, Session)> {
    (0..size)
        .map(|i| {
            let session = Session {
                user: format!("u{}", rng.random_range(0..3)),
                at: rng.random_range(0..6),
                expires_at: at(NOW + rng.random_range(-4..=4)),
                note: format!("n{i}"),
            };
            (format!("s{:05}-{i}", rng.random_range(0..100_000)), session)
        })
        .collect()
}

async fn write(kind: &Kind<Session>, documents: &[(String, Session)]) {
    for chunk in documents.chunks(400) {
        kind.upsert_all(chunk.iter().map(|(id, session)| (id.as_str(), session)))
            .await
            .unwrap();
    }
}

async fn left(kind: &Kind<Session>) -> Vec<String> {
    let mut ids: Vec<String> = kind
        .fetch(&Session::query().all())
        .await
        .unwrap()
        .into_iter()
        .map(|stored| stored.id)
        .collect();
    ids.sort();
    ids
}

fn unexpired(documents: &[(String, Session)], now: i64) -> Vec<String> {
    let mut ids: Vec<String> = documents
        .iter()
        .filter(|(_, session)| session.expires_at.0.as_second() > now)
        .map(|(id, _)| id.clone())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn unexpired_queries_and_a_purge_in_datastore_mode() {
    let (datastore, _) = fresh_datastore("ds-expiry").await;
    let kind = datastore.kind::<Session>();
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("ds-expiry"));
    let documents = sessions(&mut rng, 300);
    write(&kind, &documents).await;
    for now in [NOW - 5, NOW - 1, NOW, NOW + 2, NOW + 5] {
        let read = kind
            .fetch(&Session::query().all().unexpired(at(now)))
            .await
            .unwrap();
        // Ordered by `at` (descending), then the expiry in the same direction.
        for pair in read.windows(2) {
            let key = |s: &Session| (s.at, s.expires_at.0.as_second());
            assert!(
                key(&pair[0].document) >= key(&pair[1].document),
                "{now}: order"
            );
        }
        let mut ids: Vec<String> = read.into_iter().map(|stored| stored.id).collect();
        ids.sort();
        assert_eq!(ids, unexpired(&documents, now), "unexpired at {now}");
        let user = kind
            .count(&Session::query().user("u1").unexpired(at(now)))
            .await
            .unwrap();
        let expected = documents
            .iter()
            .filter(|(_, s)| s.user == "u1" && s.expires_at.0.as_second() > now)
            .count();
        assert_eq!(user, expected as u64, "u1 unexpired at {now}");
    }
    // Each entity's shard before the purge, to tell its first page's keys.
    let before = kind.fetch(&Session::query().all()).await.unwrap();
    let page_size = 6;
    let options = PurgeOptions {
        page_size,
        concurrency: 2,
        ..PurgeOptions::default()
    };
    let mut first = None;
    let done = kind
        .purge_expired(at(NOW), options.clone(), |progress| {
            first.get_or_insert_with(|| progress.clone());
        })
        .await
        .unwrap();
    assert_eq!(left(&kind).await, unexpired(&documents, NOW));
    let expired = (documents.len() - unexpired(&documents, NOW).len()) as u64;
    assert_eq!(
        (done.deleted, done.changed, done.read),
        (expired, 0, expired)
    );
    assert!(done.is_done());
    // At least one page per shard value, and one per full page.
    assert!(done.queries >= 5 && done.queries <= expired / page_size as u64 + 5);
    // The first checkpoint's position is a Datastore cursor: resumed after rewriting every
    // entity, it does not read the first page's keys again.
    let first = first.unwrap();
    let started: Vec<(String, ShardPurge)> = first.shards.clone().into_iter().collect();
    let [(value, ShardPurge::Cursor { .. })] = &started[..] else {
        panic!("one shard value started, at a Datastore cursor: {first:?}");
    };
    let expired_key = |stored: &sharded_runtime::Stored<Session>| {
        (stored.document.expires_at.0.as_second(), stored.id.clone())
    };
    let mut first_page: Vec<(i64, String)> = before
        .iter()
        .filter(|stored| stored.shard == *value && stored.document.expires_at.0.as_second() <= NOW)
        .map(expired_key)
        .collect();
    first_page.sort();
    let boundary = first_page[page_size as usize - 1].clone();
    write(&kind, &documents).await;
    let mut expected: Vec<String> = kind
        .fetch(&Session::query().all())
        .await
        .unwrap()
        .iter()
        .filter(|stored| {
            stored.document.expires_at.0.as_second() > NOW
                || (stored.shard == *value && expired_key(stored) <= boundary)
        })
        .map(|stored| stored.id.clone())
        .collect();
    expected.sort();
    let resumed = kind
        .resume_purge(first.clone(), options.clone(), |_| {})
        .await
        .unwrap();
    assert!(resumed.is_done());
    assert_eq!(
        left(&kind).await,
        expected,
        "the keys before the cursor stay"
    );
    // A Native-mode handle refuses the Datastore checkpoint, naming it.
    let native = sharded_tests::test_db("ds-expiry-native").await;
    let refused = Session::collection(&native.db)
        .resume_purge(first, options, |_| {})
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("Datastore mode cursor"),
        "{refused}"
    );
}

#[tokio::test]
async fn an_entity_given_a_later_expiry_during_a_datastore_purge_survives() {
    let (datastore, _) = fresh_datastore("ds-expiry-changed").await;
    let kind = datastore.kind::<Session>();
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("ds-expiry-changed"));
    let documents: Vec<(String, Session)> = sessions(&mut rng, 200)
        .into_iter()
        .map(|(id, session)| {
            (
                id,
                Session {
                    expires_at: at(NOW - 1),
                    ..session
                },
            )
        })
        .collect();
    write(&kind, &documents).await;
    let writer = async {
        let mut kept = Vec::new();
        for (id, session) in documents.iter().rev() {
            let pushed = Session {
                expires_at: at(NOW + 3600),
                ..session.clone()
            };
            if kind.update(id, &pushed).await.is_ok() {
                kept.push(id.clone());
            }
        }
        kept
    };
    let options = PurgeOptions {
        page_size: 4,
        concurrency: 2,
        ..PurgeOptions::default()
    };
    let purge = kind.purge_expired(at(NOW), options, |_| {});
    let (mut kept, purged) = futures::join!(writer, purge);
    let purged = purged.unwrap();
    kept.sort();
    assert_eq!(left(&kind).await, kept);
    assert_eq!(purged.deleted + kept.len() as u64, documents.len() as u64);
}

#[test]
fn index_yaml_holds_the_purge_query_index() {
    let need = Session::DESCRIPTION
        .purge_need(QueryScope::Collection)
        .unwrap();
    let indexes = sharded_runtime::indexes::datastore::kind_indexes(&Session::DESCRIPTION).unwrap();
    assert!(
        indexes.iter().any(|index| index.serves(&need, false)),
        "{indexes:?}"
    );
}

/// The `index.yaml` the build writes for `Session`, as text.
fn written_index_yaml() -> String {
    let dir = std::env::temp_dir().join(format!("sharded-ds-expiry-{:08x}", rand::random::<u32>()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let output = dir.join("index.yaml");
    let outcome = sharded_build::Indexes::from_env()
        .sources(dir.join("src"))
        .crate_name("app")
        .include(Session::COLLECTION, &Session::DESCRIPTION)
        .datastore()
        .output(&output)
        .run()
        .unwrap();
    // Written for the first time: the build says how to set the kind's TTL policy.
    assert!(
        outcome.warnings.iter().any(|warning| warning.contains(
            "gcloud firestore fields ttls update expiresAt --collection-group=Session --enable-ttl"
        )),
        "{:?}",
        outcome.warnings
    );
    let text = std::fs::read_to_string(&output).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    text
}

#[test]
fn the_cloud_sdk_parses_the_index_yaml_of_an_expiring_kind() {
    let text = written_index_yaml();
    let ours = sharded_build::read_index_yaml(&text).unwrap();
    let need = Session::DESCRIPTION
        .purge_need(QueryScope::Collection)
        .unwrap();
    assert!(ours.iter().any(|index| index.serves(&need, false)));
    // The Cloud SDK's own parser (`gcloud datastore indexes create` reads the file with it).
    let sdk = [
        "/usr/lib/google-cloud-sdk",
        "/usr/share/google-cloud-sdk",
        "/opt/google-cloud-sdk",
    ]
    .into_iter()
    .map(std::path::PathBuf::from)
    .find(|root| root.join("lib/googlecloudsdk").is_dir())
    .expect("the Cloud SDK, installed with the emulator");
    let file =
        std::env::temp_dir().join(format!("sharded-index-{:08x}.yaml", rand::random::<u32>()));
    std::fs::write(&file, &text).unwrap();
    let script = "import sys\n\
        sys.path[:0] = [sys.argv[1] + '/lib', sys.argv[1] + '/lib/third_party']\n\
        from googlecloudsdk.appengine.datastore import datastore_index\n\
        parsed = datastore_index.ParseIndexDefinitions(open(sys.argv[2]).read())\n\
        for index in parsed.indexes:\n\
        \x20   print(index.kind, ' '.join(p.name + ':' + (p.direction or 'asc') for p in index.properties))\n";
    let output = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&sdk)
        .arg(&file)
        .output()
        .expect("python3 runs");
    std::fs::remove_file(&file).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let parsed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(parsed.lines().count(), ours.len(), "{parsed}");
    assert!(
        parsed
            .lines()
            .any(|line| line == "Session shard:desc expiresAt:asc"),
        "{parsed}"
    );
}

#[tokio::test]
async fn a_tracked_datastore_purge_resumes_a_stopped_attempt_and_splits_over_tasks() {
    use sharded_runtime::jobs::TaskPart;
    let (datastore, _) = fresh_datastore("ds-expiry-tracked").await;
    let kind = datastore.kind::<Session>();
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("ds-expiry-tracked"));
    let documents = sessions(&mut rng, 240);
    write(&kind, &documents).await;
    let part = |index| TaskPart::new(index, 2).unwrap();
    // Part 0's first attempt is stopped after 3 s, past its first stored checkpoint (every
    // 2 s), as a task killed mid-way.
    let slow = PurgeOptions {
        page_size: 1,
        concurrency: 1,
        ..PurgeOptions::default()
    };
    let attempt = kind.purge_expired_part("nightly", at(NOW), part(0), slow, |_| {});
    let _ = tokio::time::timeout(std::time::Duration::from_secs(3), attempt).await;
    let options = PurgeOptions {
        page_size: 5,
        concurrency: 2,
        ..PurgeOptions::default()
    };
    // The retry, told a later time, goes on with the stored one.
    let retried = kind
        .purge_expired_part("nightly", at(NOW + 1_000), part(0), options.clone(), |_| {})
        .await
        .unwrap();
    assert_eq!(retried.now.seconds, NOW);
    assert!(retried.is_done());
    kind.purge_expired_part("nightly", at(NOW), part(1), options.clone(), |_| {})
        .await
        .unwrap();
    assert_eq!(left(&kind).await, unexpired(&documents, NOW));
    // A finished part sends nothing when run again: the same progress comes back.
    let again = kind
        .purge_expired_part("nightly", at(NOW), part(0), options, |_| {})
        .await
        .unwrap();
    assert_eq!(again, retried);
}

/// Through a proxy that drops connections and loses answers after the emulator applied a
/// commit: every page's query and deleting transaction is retried, and the purge deletes
/// exactly what expired, with its counts whole (a key a lost commit deleted counts as
/// deleted, not as changed).
#[tokio::test]
async fn a_datastore_purge_survives_dropped_connections_and_lost_answers() {
    let (datastore, project) = fresh_datastore("ds-expiry-faults").await;
    let kind = datastore.kind::<Session>();
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("ds-expiry-faults"));
    let documents = sessions(&mut rng, 400);
    write(&kind, &documents).await;
    let proxy = sharded_tests::lossy_proxy(crate::datastore_mode::emulator().host()).await;
    let through = sharded_runtime::datastore::Datastore::emulator(&proxy.host(), &project)
        .await
        .unwrap()
        .kind::<Session>();
    let options = PurgeOptions {
        page_size: 9,
        concurrency: 3,
        backoff: sharded_tests::retries_through_faults(),
        ..PurgeOptions::default()
    };
    let done = through
        .purge_expired(at(NOW), options, |_| {})
        .await
        .unwrap();
    assert!(proxy.dropped() > 0, "the proxy dropped nothing");
    assert_eq!(left(&kind).await, unexpired(&documents, NOW));
    let expired = (documents.len() - unexpired(&documents, NOW).len()) as u64;
    assert_eq!((done.deleted, done.changed), (expired, 0));
}
