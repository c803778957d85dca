//! Field transforms in sharded updates, on the emulator: what Firestore refuses (measured), the
//! same transforms applied to a sharded and an unsharded copy of each document leave the same
//! fields (the shard kept), concurrent increments all count, and queries after them equal the
//! unsharded ones.

use std::collections::HashMap;

use futures::FutureExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    CommitRequest, Document, DocumentMask, Precondition, Value, Write, precondition,
    value::ValueType, write::Operation,
};
use sharded_runtime::firestore::gcloud_sdk::tonic::Code;
use sharded_runtime::firestore::{
    FirestoreDb, FirestoreFieldTransform, FirestoreFieldTransformType, FirestoreTimestamp,
    FirestoreTransformServerValue, FirestoreValue,
};
use sharded_runtime::{
    AtomicBatch, Error, Sharded, Transform, limits::MAX_TRANSFORMS, writes::transaction_error,
};
use sharded_tests::equivalence::{Unsharded, check_query, write_both};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(shards = 61, order_by = "posted_at", collection = "posts")]
struct Post {
    #[sharded(index)]
    author: String,
    #[sharded(contains)]
    tags: Vec<String>,
    likes: i64,
    score: f64,
    views: u32,
    seen_at: Option<FirestoreTimestamp>,
    posted_at: FirestoreTimestamp,
}

const PLAIN: &str = "plain_posts";
const TAGS: [&str; 5] = ["rust", "go", "db", "ops", "web"];

fn at(second: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(second).unwrap())
}

fn post(rng: &mut StdRng, n: i64) -> Post {
    Post {
        author: format!("a{}", rng.random_range(0..3)),
        tags: pick(rng),
        likes: rng.random_range(-5..5),
        score: rng.random_range(-2.0..2.0),
        views: rng.random_range(0..10),
        seen_at: None,
        posted_at: at(1_700_000_000 + n / 2),
    }
}

fn pick(rng: &mut StdRng) -> Vec<String> {
    (0..rng.random_range(0..4))
        .map(|_| TAGS[rng.random_range(0..TAGS.len())].to_owned())
        .collect()
}

/// One random transform of `Post`, and the same as the firestore crate builds it.
fn random_transform(rng: &mut StdRng, field: &str) -> (Transform<Post>, FirestoreFieldTransform) {
    let t = Post::transforms();
    let plain = |kind| FirestoreFieldTransform::new(field.to_owned(), kind);
    use FirestoreFieldTransformType as Kind;
    match field {
        "likes" => {
            let n: i64 = rng.random_range(-3..4);
            match rng.random_range(0..3) {
                0 => (t.likes.increment(n), plain(Kind::Increment(n.into()))),
                1 => (t.likes.maximum(n), plain(Kind::Maximum(n.into()))),
                _ => (t.likes.minimum(n), plain(Kind::Minimum(n.into()))),
            }
        }
        "score" => {
            let x: f64 = [0.5, -1.25, 0.0, 3.0][rng.random_range(0..4)];
            match rng.random_range(0..3) {
                0 => (t.score.increment(x), plain(Kind::Increment(x.into()))),
                1 => (t.score.maximum(x), plain(Kind::Maximum(x.into()))),
                _ => (t.score.minimum(x), plain(Kind::Minimum(x.into()))),
            }
        }
        "views" => {
            let n: u32 = rng.random_range(0..3);
            (
                t.views.increment(n),
                plain(Kind::Increment(i64::from(n).into())),
            )
        }
        "tags" => {
            let values = pick(rng);
            let plain_values = values.iter().map(|v| FirestoreValue::from(string(v)));
            match rng.random_bool(0.5) {
                true => (
                    t.tags.array_union(values.clone()),
                    plain(Kind::AppendMissingElements(plain_values.collect())),
                ),
                false => (
                    t.tags.array_remove(values.clone()),
                    plain(Kind::RemoveAllFromArray(plain_values.collect())),
                ),
            }
        }
        "seenAt" => (
            t.seen_at.server_time(),
            plain(Kind::SetToServerValue(
                FirestoreTransformServerValue::RequestTime,
            )),
        ),
        other => unreachable!("{other}"),
    }
}

fn grpc(transform: FirestoreFieldTransform) -> FieldTransform {
    transform.try_into().unwrap()
}

/// Commits one write to `collection/id` with `fields` masked and `transforms`, as a client
/// without sharded would; the status code when refused.
async fn plain_commit(
    db: &FirestoreDb,
    collection: &str,
    id: &str,
    fields: HashMap<String, Value>,
    transforms: Vec<FieldTransform>,
) -> Result<(), Code> {
    let mask: Vec<String> = fields.keys().cloned().collect();
    let write = Write {
        operation: Some(Operation::Update(Document {
            name: format!("{}/{collection}/{id}", db.get_documents_path()),
            fields,
            ..Document::default()
        })),
        update_mask: Some(DocumentMask { field_paths: mask }),
        update_transforms: transforms,
        current_document: Some(Precondition {
            condition_type: Some(precondition::ConditionType::Exists(true)),
        }),
    };
    let request = CommitRequest {
        database: db.get_database_path().clone(),
        writes: vec![write],
        ..CommitRequest::default()
    };
    db.client()
        .get()
        .commit(request)
        .await
        .map(drop)
        .map_err(|status| status.code())
}

async fn raw(db: &FirestoreDb, collection: &str, id: &str) -> Document {
    db.fluent()
        .select()
        .by_id_in(collection)
        .one(id)
        .await
        .unwrap()
        .unwrap()
}

fn string(s: &str) -> Value {
    Value {
        value_type: Some(ValueType::StringValue(s.to_owned())),
    }
}

fn int(n: i64) -> Value {
    Value {
        value_type: Some(ValueType::IntegerValue(n)),
    }
}

/// Measured on the emulator: one write that transforms a field twice, or writes a field and
/// transforms it, is taken, and applied in order. Google's client libraries refuse both (a
/// field appears once in an update) and production's answer is not documented, so sharded
/// refuses both before sending: a result never rests on that order.
#[tokio::test]
async fn a_field_transformed_twice_or_written_and_transformed_is_refused_before_sending() {
    let test = test_db("transforms-refused").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(5);
    let documents = vec![("p".to_owned(), post(&mut rng, 0))];
    write_both(db, PLAIN, &documents).await;
    let increment = |n: i64| {
        grpc(FirestoreFieldTransform::new(
            "likes".into(),
            FirestoreFieldTransformType::Increment(n.into()),
        ))
    };
    let likes = |document: Document| match document.fields["likes"].value_type {
        Some(ValueType::IntegerValue(n)) => n,
        ref other => panic!("{other:?}"),
    };
    let start = likes(raw(db, PLAIN, "p").await);
    let twice = plain_commit(
        db,
        PLAIN,
        "p",
        HashMap::new(),
        vec![increment(1), increment(2)],
    );
    assert_eq!(twice.await, Ok(()));
    assert_eq!(
        likes(raw(db, PLAIN, "p").await),
        start + 3,
        "both, in order"
    );
    let written = HashMap::from([("likes".to_owned(), int(7))]);
    let both = plain_commit(db, PLAIN, "p", written, vec![increment(1)]);
    assert_eq!(both.await, Ok(()));
    assert_eq!(
        likes(raw(db, PLAIN, "p").await),
        8,
        "written, then transformed"
    );
    let once = plain_commit(db, PLAIN, "p", HashMap::new(), vec![increment(1)]);
    assert_eq!(once.await, Ok(()));

    let posts = Post::collection(db);
    let before = raw(db, Post::COLLECTION, "p").await;
    let t = Post::transforms();
    let f = Post::fields();
    fn refused<W: std::fmt::Debug>(result: Result<W, Error>, what: &str) {
        assert!(
            matches!(result, Err(Error::InvalidUpdate(_))),
            "{what}: {result:?}"
        );
    }
    refused(posts.transform("p", &[]).await, "nothing");
    let twice = [t.likes.increment(1), t.likes.maximum(2)];
    refused(posts.transform("p", &twice).await, "twice");
    let post = post(&mut rng, 1);
    let both = posts
        .update_fields_and_transform("p", &post, &[f.likes], &[t.likes.increment(1)])
        .await;
    refused(both, "written and transformed");
    let many = (0..=MAX_TRANSFORMS).map(|n| format!("t{n}"));
    refused(
        posts.transform("p", &[t.tags.array_union(many)]).await,
        "too many",
    );
    let mut batch = AtomicBatch::new(db);
    refused(
        batch.transform::<Post>("p", &twice).map(drop),
        "atomic, twice",
    );
    assert!(batch.is_empty());
    assert_eq!(raw(db, Post::COLLECTION, "p").await.fields, before.fields);
    // A transform cannot create a document: it would have no shard.
    let missing = posts.transform("missing", &[t.likes.increment(1)]).await;
    assert!(missing.is_err(), "{missing:?}");
    assert!(posts.get("missing").await.unwrap().is_none());
}

/// The same random transforms, through every sharded write that takes them, on a sharded copy
/// of each document and an unsharded one: afterwards every field is the same (a server time is
/// a time in both), the shard is each document's first, and queries on the transformed fields
/// equal the unsharded queries.
#[tokio::test]
async fn transforms_leave_what_they_leave_on_an_unsharded_document_and_keep_the_shard() {
    let test = test_db("transforms").await;
    let db = &test.db;
    let seed = sharded_tests::seed("transforms_leave_what_they_leave_on_an_unsharded_document");
    let mut rng = StdRng::seed_from_u64(seed);
    let documents: Vec<(String, Post)> = (0..40)
        .map(|n| (format!("p{n:02}"), post(&mut rng, n)))
        .collect();
    write_both(db, PLAIN, &documents).await;
    let mut shards = HashMap::new();
    for (id, _) in &documents {
        let stored = Post::collection(db).get_stored(id).await.unwrap().unwrap();
        shards.insert(id.clone(), stored.shard);
    }
    let fields = ["likes", "score", "views", "tags", "seenAt"];
    for round in 0..120 {
        let id = documents[rng.random_range(0..documents.len())].0.clone();
        let mut chosen: Vec<&str> = fields.to_vec();
        chosen.retain(|_| rng.random_bool(0.4));
        if chosen.is_empty() {
            chosen.push(fields[rng.random_range(0..fields.len())]);
        }
        let (ours, theirs): (Vec<_>, Vec<_>) = chosen
            .iter()
            .map(|field| random_transform(&mut rng, field))
            .unzip();
        let theirs: Vec<FieldTransform> = theirs.into_iter().map(grpc).collect();
        let author = format!("a{}", rng.random_range(0..3));
        let with_author = rng.random_bool(0.3);
        let posts = Post::collection(db);
        match (round % 4, with_author) {
            (_, true) => {
                let mut changed = post(&mut rng, 0);
                changed.author = author.clone();
                posts
                    .update_fields_and_transform(&id, &changed, &[Post::fields().author], &ours)
                    .await
                    .unwrap();
            }
            (0, false) => {
                posts.transform(&id, &ours).await.unwrap();
            }
            (1, false) => {
                let mut batch = AtomicBatch::new(db);
                batch.transform(&id, &ours).unwrap();
                batch.commit().await.unwrap();
            }
            (2, false) => {
                let (id, ours) = (id.clone(), ours.clone());
                db.run_transaction(move |db, transaction| {
                    let (id, ours) = (id.clone(), ours.clone());
                    async move {
                        Post::collection(&db)
                            .in_transaction(transaction)
                            .transform(&id, &ours)
                            .map_err(transaction_error)?;
                        Ok::<_, sharded_runtime::writes::TransactionError>(())
                    }
                    .boxed()
                })
                .await
                .unwrap();
            }
            _ => {
                let mut batch = AtomicBatch::new(db);
                batch.transform(&id, &ours).unwrap();
                batch.commit().await.unwrap();
            }
        }
        let written = match with_author {
            true => HashMap::from([("author".to_owned(), string(&author))]),
            false => HashMap::new(),
        };
        plain_commit(db, PLAIN, &id, written, theirs).await.unwrap();
    }
    for (id, _) in &documents {
        let sharded = raw(db, Post::COLLECTION, id).await;
        let plain = raw(db, PLAIN, id).await;
        let mut fields = sharded.fields.clone();
        let shard = fields.remove(Post::SHARD_FIELD).expect("a shard");
        assert_eq!(
            shard.value_type,
            Some(ValueType::StringValue(shards[id].clone())),
            "{id}: the shard is kept"
        );
        let time = |fields: &mut HashMap<String, Value>| match fields.remove("seenAt") {
            Some(Value {
                value_type: Some(ValueType::TimestampValue(_)),
            }) => "time",
            None
            | Some(Value {
                value_type: Some(ValueType::NullValue(_)),
            }) => "none",
            Some(_) => "other",
        };
        let mut plain_fields = plain.fields.clone();
        assert_eq!(time(&mut fields), time(&mut plain_fields), "{id}: seenAt");
        assert_eq!(fields, plain_fields, "{id}");
        // And it still reads as a `Post`.
        Post::collection(db).get(id).await.unwrap().unwrap();
    }
    for tag in TAGS {
        let expected = Unsharded::default()
            .array_contains("tags", tag)
            .ids::<Post>(db, PLAIN)
            .await;
        check_query(db, Post::query().tags_contains(tag), expected, 4, tag).await;
    }
    for author in ["a0", "a1", "a2"] {
        let expected = Unsharded::default()
            .equal("author", author)
            .ids::<Post>(db, PLAIN)
            .await;
        check_query(db, Post::query().author(author), expected, 5, author).await;
    }
}

/// Increments from many writers at once all count: each is applied by the server to the
/// value it finds.
#[tokio::test]
async fn concurrent_increments_all_count() {
    let test = test_db("transforms-concurrent").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(9);
    let mut first = post(&mut rng, 0);
    first.likes = 0;
    let posts = Post::collection(db);
    posts.upsert("hot", &first).await.unwrap();
    let shard = posts.get_stored("hot").await.unwrap().unwrap().shard;
    let increments = (0..40).map(|_| async {
        Post::collection(db)
            .transform("hot", &[Post::transforms().likes.increment(1)])
            .await
            .unwrap()
    });
    futures::future::join_all(increments).await;
    let stored = posts.get_stored("hot").await.unwrap().unwrap();
    assert_eq!(stored.document.likes, 40);
    assert_eq!(stored.shard, shard);
}
