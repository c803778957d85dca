//! Pulse, the example web app of the TypeScript client (`clients/typescript/example/pulse.*`),
//! in headless Chromium against the emulator, under the rules and with the typed models
//! `sharded-build` writes for its Rust types (`example/firestore.sharded.ts`, checked here to
//! be what the build writes): it posts (checked before sending, accepted by the rules),
//! edits a post's topic (a legacy post without a required field refused by the rules, the
//! refusal naming the field), shows the newest posts live, walks every post a page at a time
//! both ways, counts them, likes the newest post once per user with its count live, and shows
//! a user's notifications live; Rust writes beside it and reads what it wrote.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Parent, Sharded};
use sharded_tests::test_db;

use crate::security_rules::{build_rules_of, temp_dir};
use crate::typescript_client::{NodeProbe, bundled_example_pages, chromium};

/// A post, sharded by its creation time (the server's), with a like counter.
#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(
    shards = 40,
    order_by = "created_at",
    server_timestamp,
    reversible,
    collection = "pulse_posts"
)]
struct Post {
    #[sharded(index)]
    topic: String,
    title: String,
    author: String,
    #[sharded(counter(shards = 4))]
    likes: i64,
    created_at: FirestoreTimestamp,
}

/// A post as the server wrote it before `title` was required.
#[derive(Serialize, Deserialize)]
struct Legacy {
    shard: String,
    topic: String,
    author: String,
    likes: i64,
    #[serde(rename = "createdAt")]
    created_at: FirestoreTimestamp,
}

/// A user's notification, under their document.
#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "users",
    collection = "notifications"
)]
struct Notification {
    text: String,
    at: FirestoreTimestamp,
}

/// Who may do what in Pulse: anyone reads; a post is created and edited as the generated
/// function holds it; a like adds exactly one; notifications are written by the
/// server only.
const PULSE_RULES: &str = "rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /pulse_posts/{id} {
      allow read: if true;
      allow create, update: if sharded_Post();
    }
    match /pulse_posts/{id}/_sharded_counter_likes/{shard} {
      allow read: if true;
      allow create, update: if sharded_Post_counter_likes('pulse_posts/' + id, shard)
        && request.resource.data.value - (resource == null ? 0 : resource.data.get('value', 0)) == 1;
    }
    match /pulse_posts/{id}/_sharded_increments/{increment} {
      allow get: if true;
      allow create: if sharded_Post_increment_marker();
    }
    match /users/{user}/notifications/{id} {
      allow read: if true;
    }
  }
}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pulse_example_app_works_in_chromium_under_the_generated_rules() {
    let browser = chromium();
    let dir = crate::typescript_client::client();

    let test = test_db("pulse").await;
    let db = &test.db;
    let project = sharded_tests::project_id(db);
    let build = temp_dir("pulse");
    std::fs::write(build.join("firestore.rules"), PULSE_RULES).unwrap();
    let (rules, warnings) = build_rules_of(
        &build,
        "pulse",
        &[
            ("Post", &Post::DESCRIPTION),
            ("Notification", &Notification::DESCRIPTION),
        ],
    );
    // Notifications are the server's to write: the build says no rule calls their function,
    // and that is all it says.
    assert!(
        warnings
            .iter()
            .all(|w| w.contains("never calls `sharded_Notification()`")),
        "{warnings:?}"
    );
    test.emulator.load_rules(&project, &rules).await.unwrap();
    let indexes: Value = serde_json::from_str(
        &std::fs::read_to_string(build.join("firestore.indexes.json")).unwrap(),
    )
    .unwrap();
    // The page's models are the module the build writes beside the index file.
    let models = std::fs::read_to_string(build.join("firestore.sharded.ts")).unwrap();
    std::fs::remove_dir_all(&build).unwrap();
    let committed = dir.join("example/firestore.sharded.ts");
    if std::env::var_os("SHARDED_SNAPSHOTS").is_some_and(|v| v == "overwrite") {
        std::fs::write(&committed, &models).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&committed).unwrap_or_default(),
        models,
        "example/firestore.sharded.ts is not what the build writes for the Pulse types (SHARDED_SNAPSHOTS=overwrite writes it)"
    );
    let dir = bundled_example_pages();

    // Seven posts from Rust, one at a time (the server stamps each), and two notifications.
    let posts = Post::collection(db);
    for n in 0..7 {
        let post = Post {
            topic: ["rust", "web"][n % 2].into(),
            title: format!("post {n}"),
            author: "server".into(),
            likes: 0,
            created_at: FirestoreTimestamp::now(),
        };
        posts.insert_with_id(&format!("p{n}"), &post).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // A post from before `title` was required, as the server wrote it then.
    let legacy = Legacy {
        shard: Post::DESCRIPTION.shard_values[0].to_owned(),
        topic: "rust".into(),
        author: "server".into(),
        likes: 0,
        created_at: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(1_600_000_000).unwrap(),
        ),
    };
    db.fluent()
        .insert()
        .into("pulse_posts")
        .document_id("legacy")
        .object(&legacy)
        .execute::<()>()
        .await
        .unwrap();
    let u1 = Parent::<Notification>::new(&["u1"]).unwrap();
    let notifications = Notification::collection_in(db, &u1);
    let notify = |n: i64| Notification {
        text: format!("note {n}"),
        at: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(1_800_000_000 + n).unwrap(),
        ),
    };
    for n in 0..2 {
        notifications
            .insert_with_id(&format!("n{n}"), &notify(n))
            .await
            .unwrap();
    }

    let mut probe = NodeProbe::start(&dir.join("probe/pulse.mjs"), Some(&browser));
    let mut ask = |command: Value| probe.ask(command);
    let opened = ask(json!({
        "host": test.emulator.host(), "project": project, "user": "u1", "indexes": indexes,
    }));
    assert_eq!(opened, json!({"opened": true}));
    let ok = |answer: Value, what: &str| assert_eq!(answer["ok"], true, "{what}: {answer}");
    let path = |id: &str| format!("pulse_posts/{id}");
    let newest = |ids: &[&str]| ids.iter().map(|id| path(id)).collect::<Vec<_>>();

    ok(
        ask(json!({"waitList": ["#newest", newest(&["p6", "p5", "p4", "p3", "p2"])]})),
        "the newest five, live",
    );
    ok(
        ask(json!({"waitList": ["#page", newest(&["p6", "p5", "p4"])]})),
        "the first page",
    );
    ok(ask(json!({"waitText": ["#count", "8"]})), "the count");

    // Pages both ways.
    ok(ask(json!({"click": "#older"})), "older");
    ok(
        ask(json!({"waitList": ["#page", newest(&["p3", "p2", "p1"])]})),
        "the second page",
    );
    ok(ask(json!({"click": "#older"})), "older again");
    ok(
        ask(json!({"waitList": ["#page", newest(&["p0", "legacy"])]})),
        "the last page",
    );
    ok(ask(json!({"click": "#newer"})), "newer");
    ok(
        ask(json!({"waitList": ["#page", newest(&["p3", "p2", "p1"])]})),
        "back to the second page",
    );

    // A post from the page: the server's time, every field the Rust type requires.
    ok(ask(json!({"fill": ["#topic", "rust"]})), "topic");
    ok(ask(json!({"fill": ["#title", "from the page"]})), "title");
    ok(ask(json!({"click": "#post"})), "post");
    ok(
        ask(json!({"waitText": ["#post-status", "posted"]})),
        "posted",
    );
    ok(ask(json!({"waitText": ["#count", "9"]})), "counted");
    let from_page = Post::query()
        .topic("rust")
        .limit(1)
        .fetch(db)
        .await
        .unwrap();
    assert_eq!(
        from_page[0].title, "from the page",
        "Rust reads it back, strictly"
    );
    assert_eq!(from_page[0].author, "u1");
    let stored = Post::query()
        .topic("rust")
        .limit(1)
        .page(db, 1)
        .await
        .unwrap();
    let new_id = stored.items[0].id.clone();
    let mut expected = vec![new_id.as_str()];
    expected.extend(["p6", "p5", "p4", "p3"]);
    ok(
        ask(json!({"waitList": ["#newest", newest(&expected)]})),
        "the page's post on top, live",
    );

    // Edits: a post's topic changed under the rules; the legacy post refused, the refusal
    // naming what it lacks.
    ok(ask(json!({"fill": ["#edit-id", "p1"]})), "edit id");
    ok(ask(json!({"fill": ["#edit-topic", "web"]})), "edit topic");
    ok(ask(json!({"click": "#edit"})), "edit");
    ok(
        ask(json!({"waitText": ["#edit-status", "edited"]})),
        "edited",
    );
    assert_eq!(posts.get("p1").await.unwrap().unwrap().topic, "web");
    ok(ask(json!({"fill": ["#edit-id", "legacy"]})), "legacy id");
    ok(ask(json!({"click": "#edit"})), "edit the legacy post");
    ok(
        ask(json!({"waitContains": ["#edit-status", [
            "refused: the security rules refused the write of `pulse_posts/legacy` (PERMISSION_DENIED)",
            "the document has no `title`, which the Rust type requires",
        ]]})),
        "the refusal names the missing field",
    );

    // A like on the newest post, twice from the same user: counted once, live.
    ok(
        ask(json!({"waitText": ["#liked-post", new_id]})),
        "the newest is liked",
    );
    ok(ask(json!({"waitText": ["#likes", "0"]})), "no like yet");
    ok(ask(json!({"click": "#like"})), "like");
    ok(ask(json!({"waitText": ["#likes", "1"]})), "one like, live");
    ok(ask(json!({"click": "#like"})), "like again");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        posts
            .counter(&new_id, Post::counters().likes)
            .await
            .unwrap(),
        1,
        "a user's like counts once"
    );
    // A like from Rust shows up live.
    posts
        .increment(&new_id, Post::counters().likes, 1)
        .await
        .unwrap();
    ok(
        ask(json!({"waitText": ["#likes", "2"]})),
        "Rust's like, live",
    );

    // Notifications, live.
    let notes = |ids: &[&str]| {
        ids.iter()
            .map(|id| format!("users/u1/notifications/{id}"))
            .collect::<Vec<_>>()
    };
    ok(
        ask(json!({"waitList": ["#notifications", notes(&["n1", "n0"])]})),
        "the notifications",
    );
    notifications
        .insert_with_id("n2", &notify(2))
        .await
        .unwrap();
    ok(
        ask(json!({"waitList": ["#notifications", notes(&["n2", "n1", "n0"])]})),
        "a new notification, live",
    );

    probe.finish();
}
