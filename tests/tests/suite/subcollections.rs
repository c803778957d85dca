//! Subcollections and collection groups on the emulator: documents under many parents with
//! ties in the order field across parents and ids repeated across parents, at 3, 40 and 61
//! shard values, both directions. Per-parent queries equal the same query on an unsharded
//! subcollection of that parent, and group queries equal the unsharded collection-group
//! query (pages to the end, counts), ties going by full path. Measured first and kept: the
//! emulator orders a collection group's ties by full document path, segment by segment.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::__private::compare_references;
use sharded_runtime::bounds::Reach;
use sharded_runtime::firestore::{FirestoreDb, FirestoreQueryDirection, FirestoreQueryOrder};
use sharded_runtime::{
    Cursor, Error, InGroup, Parent, Sharded, ShardedQuery, WholeCollection,
    bounds::CollectionGroup,
    reads::{Number, NumericField, query_id},
};
use sharded_tests::equivalence::{by_then_name, paged, place_of, places};
use sharded_tests::test_db;

macro_rules! message {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(
                                                                    shards = $shards,
                                                                    order_by = "at",
                                                                    direction = $direction,
                                                                    parent = "rooms",
                                                                    collection = $collection,
                                                                    collection_group
                                                                )]
        struct $name {
            #[sharded(index)]
            author: String,
            at: i64,
            #[sharded(aggregate)]
            n: i64,
        }

        impl Message for $name {
            fn new(author: &str, at: i64, n: i64) -> Self {
                $name {
                    author: author.to_owned(),
                    at,
                    n,
                }
            }
            fn by(author: &str) -> ShardedQuery<Self, { query_id("author") }> {
                $name::query().author(author)
            }
            fn all() -> WholeCollection<Self> {
                $name::query().all()
            }
            fn n() -> NumericField<Self> {
                $name::aggregates().n
            }
        }
    };
}

trait Message:
    Sharded
    + sharded_runtime::bounds::ParentDepth<1>
    + sharded_runtime::bounds::CollectionGroup
    + Clone
    + PartialEq
    + std::fmt::Debug
{
    fn new(author: &str, at: i64, n: i64) -> Self;
    fn by(author: &str) -> ShardedQuery<Self, { query_id("author") }>;
    fn all() -> WholeCollection<Self>;
    fn n() -> NumericField<Self>;
}

message!(Message3, 3, "desc", "messages3");
message!(Message40, 40, "asc", "messages40");
message!(Message61, 61, "desc", "messages61");

const ROOMS: usize = 6;
const AUTHORS: [&str; 2] = ["ann", "bob"];

/// The same query on the unsharded copy: under `room`, or across every room.
async fn reference<T: Sharded>(
    db: &FirestoreDb,
    room: Option<&str>,
    author: Option<&str>,
) -> Vec<(Option<String>, String)> {
    let plain = format!("plain_{}", T::COLLECTION);
    let direction = match T::DESCRIPTION.direction {
        sharded_runtime::indexes::Direction::Ascending => FirestoreQueryDirection::Ascending,
        sharded_runtime::indexes::Direction::Descending => FirestoreQueryDirection::Descending,
    };
    let mut select = db.fluent().select().from(plain.as_str());
    select = match room {
        Some(room) => select.parent(db.parent_path("rooms", room).unwrap()),
        None => select.all_descendants(),
    };
    let author = author.map(str::to_owned);
    let documents = select
        .filter(move |q| {
            author
                .as_ref()
                .and_then(|author| q.for_all([q.field("author").eq(author.clone())]))
        })
        .order(move |_| by_then_name("at", direction.clone()))
        .query()
        .await
        .unwrap();
    documents.iter().map(place_of).collect()
}

async fn check<T: Message>(db: &FirestoreDb, rng: &mut StdRng) {
    let label = T::COLLECTION;
    let plain = format!("plain_{label}");
    let rooms: Vec<String> = (0..ROOMS).map(|r| format!("r{r}")).collect();
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    // Each document's `n`, to sum what a query returned.
    let mut numbers = std::collections::HashMap::new();
    for room in &rooms {
        let parent = Parent::<T>::new(&[room]).unwrap();
        let messages = T::collection_in(db, &parent);
        for m in 0..rng.random_range(5..14) {
            // Ids repeat across rooms; `at` ties within and across rooms.
            let id = format!("m{m}");
            let n = rng.random_range(-1_000..1_000);
            numbers.insert((Some(format!("rooms/{room}")), id.clone()), n);
            let message = T::new(AUTHORS[rng.random_range(0..2)], rng.random_range(0..6), n);
            messages.upsert_in(&mut batch, &id, &message).unwrap();
            db.fluent()
                .update()
                .in_col(&plain)
                .document_id(&id)
                .parent(db.parent_path("rooms", room).unwrap())
                .object(&message)
                .add_to_batch(&mut batch)
                .unwrap();
        }
    }
    batch.write().await.unwrap();

    assert!(!reference::<T>(db, None, None).await.is_empty());

    for limit in [1, 3, 7] {
        // Every room's own queries.
        for room in &rooms {
            let parent = Parent::<T>::new(&[room]).unwrap();
            for author in [None, Some(AUTHORS[0])] {
                let expected = reference::<T>(db, Some(room), author).await;
                let what = format!("{label} {room} {author:?} limit {limit}");
                match author {
                    None => {
                        let all = T::all().in_parent(&parent);
                        assert_eq!(paged(db, &all, limit).await, expected, "{what}: pages");
                        assert_eq!(
                            all.count(db).await.unwrap(),
                            expected.len() as u64,
                            "{what}: count"
                        );
                        assert_eq!(
                            all.sum(db, T::n()).await.unwrap(),
                            Number::Integer(sum_of(&numbers, &expected)),
                            "{what}: sum"
                        );
                    }
                    Some(author) => {
                        let query = T::by(author).in_parent(&parent);
                        assert_eq!(paged(db, &query, limit).await, expected, "{what}: pages");
                        assert_eq!(
                            query.count(db).await.unwrap(),
                            expected.len() as u64,
                            "{what}: count"
                        );
                    }
                }
            }
        }
        // Across every room.
        for author in AUTHORS {
            let expected = reference::<T>(db, None, Some(author)).await;
            let what = format!("{label} group {author} limit {limit}");
            let query = T::by(author).in_group();
            assert_eq!(paged(db, &query, limit).await, expected, "{what}: pages");
            assert_eq!(
                places(&query.clone().limit(limit).fetch_stored(db).await.unwrap()),
                expected[..expected.len().min(limit as usize)],
                "{what}: limit"
            );
            assert_eq!(
                query.count(db).await.unwrap(),
                expected.len() as u64,
                "{what}: count"
            );
            assert_eq!(
                query.sum(db, T::n()).await.unwrap(),
                Number::Integer(sum_of(&numbers, &expected)),
                "{what}: sum"
            );
        }
    }
}

/// The sum of the `n` of the documents at `places`.
fn sum_of(
    numbers: &std::collections::HashMap<(Option<String>, String), i64>,
    places: &[(Option<String>, String)],
) -> i64 {
    places.iter().map(|place| numbers[place]).sum()
}

#[tokio::test]
async fn per_parent_and_group_queries_equal_the_unsharded_ones() {
    let test = test_db("subcollections").await;
    let seed = sharded_tests::seed("per_parent_and_group_queries_equal_the_unsharded_ones");
    let mut rng = StdRng::seed_from_u64(seed);
    check::<Message3>(&test.db, &mut rng).await;
    check::<Message40>(&test.db, &mut rng).await;
    check::<Message61>(&test.db, &mut rng).await;
}

/// A live group query and a live per-parent query: their first snapshots are the queries'
/// results, and a message posted in a room shows in both.
#[tokio::test]
async fn live_queries_over_a_parent_and_over_the_group() {
    use futures::StreamExt;
    let test = test_db("subcollections-live").await;
    let db = &test.db;
    let lobby = Parent::<Message40>::new(&["lobby"]).unwrap();
    let hall = Parent::<Message40>::new(&["hall"]).unwrap();
    for (parent, base) in [(&lobby, 0), (&hall, 100)] {
        for m in 0..5 {
            Message40::collection_in(db, parent)
                .upsert(&format!("m{m}"), &Message40::new("ann", base + m, m))
                .await
                .unwrap();
        }
    }
    let group = Message40::by("ann").in_group().limit(4);
    let room = Message40::by("ann").in_parent(&hall).limit(4);
    let mut group_stream = group.listen(db).unwrap();
    let mut room_stream = room.listen(db).unwrap();
    let first = group_stream.next().await.unwrap().unwrap();
    assert_eq!(
        places(&first.documents),
        places(&group.fetch_stored(db).await.unwrap())
    );
    let first = room_stream.next().await.unwrap().unwrap();
    assert_eq!(
        places(&first.documents),
        places(&room.fetch_stored(db).await.unwrap())
    );
    // Ascending: the earliest first, so a message at -1 in the hall leads both.
    Message40::collection_in(db, &hall)
        .upsert("early", &Message40::new("ann", -1, 9))
        .await
        .unwrap();
    for stream in [&mut group_stream, &mut room_stream] {
        let next = stream.next().await.unwrap().unwrap();
        assert_eq!(
            (
                next.documents[0].parent.as_deref(),
                next.documents[0].id.as_str()
            ),
            (Some("rooms/hall"), "early")
        );
    }
}

#[tokio::test]
async fn a_subcollection_needs_its_parent_and_a_cursor_its_own_parent() {
    let test = test_db("subcollections-misuse").await;
    let db = &test.db;
    // Without a parent: refused before anything is sent (`Message3::collection(db)` does not
    // compile: ui/collection_of_a_subcollection_type.rs).
    assert!(matches!(
        Message3::by("ann").fetch(db).await,
        Err(Error::InvalidParent(_))
    ));
    // Two ids for one parent collection: `Parent::new` does not compile
    // (ui/parent_of_the_wrong_depth.rs); ids counted at run time are refused.
    assert!(matches!(
        Parent::<Message3>::from_ids(&["a", "b"]),
        Err(Error::InvalidParent(_))
    ));
    assert!(matches!(
        Parent::<Message3>::new(&["a/b"]),
        Err(Error::InvalidDocumentId { .. })
    ));
    // A cursor from one room's page on another room's query.
    let lobby = Parent::<Message3>::new(&["lobby"]).unwrap();
    let other = Parent::<Message3>::new(&["other"]).unwrap();
    let messages = Message3::collection_in(db, &lobby);
    for m in 0..3 {
        messages
            .upsert(&format!("m{m}"), &Message3::new("ann", m, m))
            .await
            .unwrap();
    }
    let page = Message3::by("ann")
        .in_parent(&lobby)
        .page(db, 1)
        .await
        .unwrap();
    let cursor = page.next.unwrap();
    assert!(matches!(
        Message3::by("ann")
            .in_parent(&other)
            .after(cursor.clone())
            .fetch(db)
            .await,
        Err(Error::InvalidCursor(_))
    ));
    // Made from the page's last document and its parent, it is the page's cursor.
    let last = &page.items[0];
    assert_eq!(
        Cursor::at_in(&last.document.at, &lobby, &last.id).unwrap(),
        cursor
    );
    assert_ne!(Cursor::at(&last.document.at, &last.id).unwrap(), cursor);
    // Through its token too.
    let token = cursor.to_token();
    let parsed: Cursor<Message3, { query_id("author") }> = token.parse().unwrap();
    assert_eq!(
        Message3::by("ann")
            .in_parent(&lobby)
            .after(parsed)
            .fetch(db)
            .await
            .unwrap()
            .len(),
        2
    );
    // A per-parent query's cursor kept when the query becomes a group query: the types allow
    // it (the cursor was given first), the run time does not.
    assert!(matches!(
        Message3::by("ann")
            .in_parent(&lobby)
            .after(cursor.clone())
            .in_group()
            .fetch(db)
            .await,
        Err(Error::InvalidCursor(_))
    ));
    // A group page's cursor goes on with the group query, and its token is no per-parent
    // query's cursor, nor the reverse.
    let group_page = Message3::by("ann").in_group().page(db, 1).await.unwrap();
    let group_cursor = group_page.next.unwrap();
    let rest = Message3::by("ann")
        .in_group()
        .after(group_cursor.clone())
        .fetch(db)
        .await
        .unwrap();
    assert_eq!(rest.len(), 2);
    let as_collection: Result<Cursor<Message3, { query_id("author") }>, _> =
        group_cursor.to_token().parse();
    assert!(matches!(as_collection, Err(Error::InvalidCursor(_))));
    let as_group: Result<Cursor<Message3, { query_id("author") }, InGroup>, _> = token.parse();
    assert!(matches!(as_group, Err(Error::InvalidCursor(_))));
}

/// Measured on the emulator: a collection group's ties in the order field go by full path.
#[tokio::test]
async fn the_emulator_orders_group_ties_by_full_path() {
    let test = test_db("group-order").await;
    let db = &test.db;
    // Parent ids chosen so that whole-string and segment-wise order differ: "a-b" sorts
    // before "a" as a string ("a-b/..." vs "a/...": '-' < '/'), after it segment by segment.
    for room in ["a", "a-b", "b", "a0"] {
        for id in ["x", "y"] {
            db.fluent()
                .update()
                .in_col("ties")
                .document_id(id)
                .parent(db.parent_path("rooms", room).unwrap())
                .object(&serde_json::json!({ "at": 1 }))
                .execute::<serde_json::Value>()
                .await
                .unwrap();
        }
    }
    let names: Vec<String> = db
        .fluent()
        .select()
        .from("ties")
        .all_descendants()
        .order(|_| {
            vec![
                FirestoreQueryOrder::new("at".into(), FirestoreQueryDirection::Ascending),
                FirestoreQueryOrder::new("__name__".into(), FirestoreQueryDirection::Ascending),
            ]
        })
        .query()
        .await
        .unwrap()
        .into_iter()
        .map(|document| document.name)
        .collect();
    let mut by_segments = names.clone();
    by_segments.sort_by(|a, b| compare_references(a, b));
    assert_eq!(names, by_segments);
    let mut by_string = names.clone();
    by_string.sort();
    assert_ne!(
        names, by_string,
        "the data did not tell the two orders apart"
    );
}

/// A backfill of every room's messages at once (the collection group), resumable from a
/// checkpoint that is a path: documents written before sharding, under several rooms with
/// ids repeated across them, all end with a shard, and a job resumed from its first
/// checkpoint scans exactly the documents after it.
#[tokio::test]
async fn a_backfill_over_the_collection_group_shards_every_parent() {
    let test = test_db("subcollections-backfill").await;
    let db = &test.db;
    let mut total = 0u64;
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for room in ["a", "a-b", "b", "c"] {
        for m in 0..9 {
            db.fluent()
                .update()
                .in_col(Message61::COLLECTION)
                .document_id(format!("m{m}"))
                .parent(db.parent_path("rooms", room).unwrap())
                .object(&serde_json::json!({ "author": "ann", "at": m, "n": m }))
                .add_to_batch(&mut batch)
                .unwrap();
            total += 1;
        }
    }
    batch.write().await.unwrap();
    let group = Message61::collection_group(db);
    assert_eq!(group.verify().await.unwrap().missing, total);
    assert_eq!(Message61::all().in_group().count(db).await.unwrap(), 0);

    let mut first = None;
    let done = group
        .backfill()
        .page_size(7)
        .run(|progress| {
            if first.is_none() {
                first = progress.checkpoint.clone().map(|c| (c, progress.scanned));
            }
        })
        .await
        .unwrap();
    assert_eq!((done.scanned, done.updated), (total, total));
    let census = group.verify().await.unwrap();
    assert_eq!((census.current, census.outstanding()), (total, 0));
    assert_eq!(Message61::all().in_group().count(db).await.unwrap(), total);

    let (checkpoint, scanned) = first.expect("a checkpoint after the first page");
    assert!(checkpoint.last_id().starts_with("rooms/"), "{checkpoint:?}");
    let resumed = group
        .backfill()
        .page_size(7)
        .resume_from(checkpoint)
        .run(|_| {})
        .await
        .unwrap();
    assert_eq!((resumed.scanned, resumed.updated), (total - scanned, 0));
    // A checkpoint that is no document's path is refused before anything is sent.
    let bad = group
        .backfill()
        .resume_from(sharded_runtime::jobs::Checkpoint::after(
            "rooms/a/messages61",
        ))
        .run(|_| {})
        .await;
    assert!(matches!(bad, Err(Error::InvalidCursor(_))), "{bad:?}");
}

/// A top-level type declaring `collection_group`: its group is its own collection plus any
/// collection with its id under other documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", collection = "feed", collection_group)]
struct Post {
    at: i64,
}

/// A group backfill of `T` split into 4 parts by the ids under the first collection of its
/// path (`rooms/{id}` for a subcollection type, `{collection}/{id}` for a top-level one):
/// generated ids (as Firestore draws them) and a legacy numeric id there, and collections of
/// the group under other collections (`aaa/..` sorts before, `zzz/..` after). Each part
/// scans exactly the documents it holds, every document ends sharded, and a part refuses
/// another part's checkpoint.
async fn parts_of_a_group_backfill_cover_every_document_once<T: CollectionGroup>(name: &str) {
    use sharded_runtime::jobs::IdRange;
    let test = test_db(name).await;
    let db = &test.db;
    let seed = sharded_tests::seed(name);
    let mut rng = StdRng::seed_from_u64(seed);
    let first = T::DESCRIPTION
        .parent_collections
        .first()
        .copied()
        .unwrap_or(T::COLLECTION);
    let mut ids: Vec<String> = (0..24)
        .map(|_| sharded_tests::generated_id(&mut rng))
        .chain(["__id7__".to_owned()])
        .collect();
    ids.sort();
    let parts = 4;
    let part_of = |id: &str| {
        (0..parts)
            .find(|&part| IdRange::part(part, parts).unwrap().contains(id))
            .unwrap() as usize
    };
    let mut expected = vec![0u64; parts as usize];
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    let mut write = |parent: Option<String>, id: String, at: i64| {
        let update = db.fluent().update().in_col(T::COLLECTION).document_id(id);
        let update = match parent {
            Some(parent) => update.parent(parent),
            None => update,
        };
        update
            .object(&serde_json::json!({ "author": "ann", "at": at, "n": at }))
            .add_to_batch(&mut batch)
            .unwrap();
    };
    // Under the first collection of the type's path: the part of the id there.
    for id in &ids {
        match T::DESCRIPTION.parent_collections.is_empty() {
            true => {
                write(None, id.clone(), 0);
                expected[part_of(id)] += 1;
            }
            false => {
                let count = rng.random_range(1..5);
                for m in 0..count {
                    write(
                        Some(db.parent_path(first, id).unwrap().to_string()),
                        format!("m{m}"),
                        m,
                    );
                }
                expected[part_of(id)] += count as u64;
            }
        }
    }
    // Under collections that sort before and after it: the first and the last part.
    for (collection, part) in [("aaa", 0), ("zzz", parts as usize - 1)] {
        for m in 0..rng.random_range(1..4) {
            write(
                Some(db.parent_path(collection, "x").unwrap().to_string()),
                format!("m{m}"),
                m,
            );
            expected[part] += 1;
        }
    }
    batch.write().await.unwrap();
    let total: u64 = expected.iter().sum();

    let group = T::collection_group(db);
    let mut first_checkpoints = Vec::new();
    for part in 0..parts {
        let ids = IdRange::part(part, parts).unwrap();
        let census = group.backfill().ids(ids.clone()).verify().await.unwrap();
        assert_eq!(
            census.missing, expected[part as usize],
            "{name} part {part}"
        );
        let mut first = None;
        let done = group
            .backfill()
            .ids(ids)
            .page_size(3)
            .run(|progress| {
                if first.is_none() {
                    first = progress.checkpoint.clone();
                }
            })
            .await
            .unwrap();
        assert_eq!(done.scanned, expected[part as usize], "{name} part {part}");
        assert_eq!(done.updated, done.scanned, "{name} part {part}");
        first_checkpoints.push(first);
    }
    let census = group.verify().await.unwrap();
    assert_eq!((census.current, census.outstanding()), (total, 0));
    let first = first_checkpoints[0]
        .clone()
        .expect("the first part scanned");
    let bad = group
        .backfill()
        .ids(IdRange::part(parts - 1, parts).unwrap())
        .resume_from(first)
        .run(|_| {})
        .await;
    assert!(matches!(bad, Err(Error::InvalidCursor(_))), "{bad:?}");
}

#[tokio::test]
async fn parts_of_a_group_backfill_cover_every_parent_once() {
    parts_of_a_group_backfill_cover_every_document_once::<Message40>("subcollections-parts").await;
}

/// A top-level type's group has no parent collection: its parts split its own ids.
#[tokio::test]
async fn parts_of_a_top_level_types_group_backfill_cover_every_document_once() {
    parts_of_a_group_backfill_cover_every_document_once::<Post>("top-level-group-parts").await;
}

/// Every page of `query` of `limit`, to the end, each cursor passed on as its token.
async fn paged_by_token<T: Sharded, const Q: u64, R: Reach>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, Q, R>,
    limit: u32,
) -> Vec<(Option<String>, String)> {
    let mut all = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let page_query = query.clone().after(
            next.take()
                .map(|token| token.parse::<Cursor<T, Q, R>>().unwrap()),
        );
        let page = page_query.page(db, limit).await.unwrap();
        all.extend(places(&page.items));
        match page.next {
            Some(cursor) => next = Some(cursor.to_token()),
            None => return all,
        }
    }
}

/// A top-level type's group is its own collection and the collections of its id under other
/// documents: its pages walk to the end whether a page ends on a top-level document (a
/// cursor with no parent) or under a parent, cursors passed on as tokens, in the order of
/// the unsharded group query.
#[tokio::test]
async fn pages_of_a_top_level_types_group_walk_to_the_end() {
    let test = test_db("top-level-group-pages").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed(
        "pages_of_a_top_level_types_group_walk_to_the_end",
    ));
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for i in 0..9 {
        let post = Post {
            at: rng.random_range(0..4),
        };
        Post::collection(db)
            .upsert_in(&mut batch, &format!("p{i}"), &post)
            .unwrap();
        // The same collection id under other documents, sharded as sharded writes it.
        let mut stored = serde_json::to_value(&post).unwrap();
        stored[Post::SHARD_FIELD] = Post::SHARD_VALUES[i % 3].into();
        let parent = db.parent_path("walls", format!("w{}", i % 2)).unwrap();
        db.fluent()
            .update()
            .in_col(Post::COLLECTION)
            .document_id(format!("q{i}"))
            .parent(parent)
            .object(&stored)
            .add_to_batch(&mut batch)
            .unwrap();
    }
    batch.write().await.unwrap();
    let expected: Vec<(Option<String>, String)> = db
        .fluent()
        .select()
        .from(Post::COLLECTION)
        .all_descendants()
        .order(|o| {
            let direction = match Post::DESCRIPTION.direction {
                sharded_runtime::indexes::Direction::Ascending => {
                    FirestoreQueryDirection::Ascending
                }
                sharded_runtime::indexes::Direction::Descending => {
                    FirestoreQueryDirection::Descending
                }
            };
            o.fields([
                FirestoreQueryOrder::new("at".into(), direction.clone()),
                FirestoreQueryOrder::new("__name__".into(), direction),
            ])
        })
        .query()
        .await
        .unwrap()
        .iter()
        .map(place_of)
        .collect();
    assert_eq!(expected.len(), 18);
    assert!(expected.iter().any(|(parent, _)| parent.is_none()));
    let group = Post::query().all().in_group();
    for limit in [1, 2, 5] {
        assert_eq!(paged(db, &group, limit).await, expected, "limit {limit}");
        assert_eq!(
            paged_by_token(db, &group, limit).await,
            expected,
            "limit {limit}, tokens"
        );
    }
}

/// A named database called `documents`: its document names hold `/documents/` twice, and
/// each is still read right: a top-level document has no parent, a subcollection's has its
/// own. Measured too: the emulator itself refuses every query in such a database (it reads
/// the name as the project `dev~`), though it writes and reads documents by name; so the
/// names are read here from gets, and the queries' own use of them is unit-tested
/// (`document_path.rs`).
#[tokio::test]
async fn a_database_named_documents_reads_its_document_names_right() {
    let test = test_db("database-named-documents").await;
    let db = test
        .emulator
        .named_db("database-named-documents", "documents")
        .await
        .unwrap();
    assert!(
        db.get_documents_path()
            .ends_with("/databases/documents/documents")
    );
    let posts = Post::collection(&db);
    let parent = Parent::<Message3>::new(&["documents"]).unwrap();
    let messages = Message3::collection_in(&db, &parent);
    posts.upsert("documents", &Post { at: 1 }).await.unwrap();
    messages
        .upsert("documents", &Message3::new("ann", 1, 1))
        .await
        .unwrap();
    let top = posts.get_stored("documents").await.unwrap().unwrap();
    assert_eq!((top.parent, top.id), (None, "documents".to_owned()));
    let under = messages.get_stored("documents").await.unwrap().unwrap();
    assert_eq!(
        (under.parent.as_deref(), under.id.as_str()),
        (Some("rooms/documents"), "documents")
    );
    let refused = Post::query().all().fetch(&db).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|error| error.to_string().contains("is an invalid app id")),
        "the emulator runs queries in a database named `documents` now: page through one here: {refused:?}"
    );
}

/// A collection-group type after a rebalance from ["a", "b"] to ["b"].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shard_values = ["b"],
    retired(shard_values = ["a", "b"]),
    order_by = "at",
    parent = "rooms",
    collection = "notes",
    collection_group
)]
struct Note {
    at: i64,
}

/// The retired-value check of a collection-group type: one clean group covers every parent;
/// while one parent still holds a retired value, that parent's reads and the group's are
/// refused and every other parent's go on (each checked on its own); once moved, all read.
#[tokio::test]
async fn retired_values_are_checked_once_for_a_whole_clean_group() {
    let test = test_db("retired-group").await;
    let db = &test.db;
    let write = |room: &'static str, id: &'static str, shard: &'static str| {
        let db = db.clone();
        async move {
            let stored = serde_json::json!({ "at": 1, Note::SHARD_FIELD: shard });
            db.fluent()
                .update()
                .in_col(Note::COLLECTION)
                .document_id(id)
                .parent(db.parent_path("rooms", room).unwrap())
                .object(&stored)
                .execute::<serde_json::Value>()
                .await
                .unwrap();
        }
    };
    for room in ["r0", "r1", "r2"] {
        write(room, "n0", "b").await;
    }
    write("r3", "n0", "a").await;
    let read = |room: &'static str| {
        let db = db.clone();
        async move {
            let parent = Parent::<Note>::new(&[room]).unwrap();
            Note::query().all().in_parent(&parent).fetch(&db).await
        }
    };
    for room in ["r0", "r1", "r2"] {
        assert_eq!(read(room).await.unwrap().len(), 1, "{room}");
    }
    let refused = read("r3").await;
    assert!(
        matches!(&refused, Err(Error::NotRebalanced { document, .. }) if document.ends_with("rooms/r3/notes/n0")),
        "{refused:?}"
    );
    let group = Note::query().all().in_group().fetch(db).await;
    assert!(
        matches!(group, Err(Error::NotRebalanced { .. })),
        "{group:?}"
    );
    // Moved: every parent and the group read (nothing unclean was remembered).
    write("r3", "n0", "b").await;
    assert_eq!(
        Note::query()
            .all()
            .in_group()
            .fetch(db)
            .await
            .unwrap()
            .len(),
        4
    );
    for room in ["r0", "r1", "r2", "r3", "r4"] {
        assert!(read(room).await.is_ok(), "{room}");
    }
    // The clean group covers a parent never read before, with no check of its own: a stale
    // writer's retired value there stays unseen by reads until the group is checked again
    // (`RECHECK_AFTER`), and the census counts it at once.
    write("r5", "n0", "a").await;
    assert!(read("r5").await.unwrap().is_empty());
    let census = Note::collection_group(db).verify().await.unwrap();
    assert_eq!((census.retired, census.current), (1, 4));
}
