//! Resuming after a known item, and the cost of every fetch.

use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Cursor, Error, Sharded, Stored, reads::query_id};
use sharded_tests::models::Tick;
use sharded_tests::test_db;

fn tick(seq: i64) -> Tick {
    Tick {
        venue: "XNAS".into(),
        at: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(seq % 4).unwrap(),
        ),
        seq,
    }
}

#[tokio::test]
async fn cursors_from_a_known_item_resume_exactly_after_it() {
    let test = test_db("query-api").await;
    let db = &test.db;
    for seq in 0..12 {
        Tick::collection(db)
            .upsert(&format!("t{seq:02}"), &tick(seq))
            .await
            .unwrap();
    }
    let query = Tick::query().venue("XNAS");
    let page = query.page(db, 5).await.unwrap();
    let last: &Stored<Tick> = page.items.last().unwrap();
    let rest = |cursor: Cursor<Tick, { query_id("venue") }>| {
        let query = query.clone();
        async move { query.after(cursor).fetch_stored(db).await.unwrap() }
    };
    let ids = |items: Vec<Stored<Tick>>| items.into_iter().map(|s| s.id).collect::<Vec<_>>();
    let by_token = ids(rest(page.next.clone().unwrap()).await);
    assert_eq!(by_token.len(), 7);
    assert_eq!(ids(rest(Cursor::after(last).unwrap()).await), by_token);
    assert_eq!(
        ids(rest(Cursor::at(&last.document.at, &last.id).unwrap()).await),
        by_token
    );
    assert!(matches!(
        Cursor::<Tick, { query_id("venue") }>::at(&last.document.at, "a/b"),
        Err(Error::InvalidCursor(_))
    ));

    // A full last page knows it is the last: no `next`, so no empty round trip after it.
    let first = query.page(db, 6).await.unwrap();
    let second = query
        .clone()
        .after(first.next.clone().expect("six more follow"))
        .page(db, 6)
        .await
        .unwrap();
    assert_eq!(second.items.len(), 6);
    assert!(second.next.is_none());
    // The page's limit replaces the query's.
    assert_eq!(query.clone().limit(2).page(db, 6).await.unwrap(), first);
    // A limit Firestore refuses is refused before sending, look-ahead or not.
    for limit in [0, sharded_runtime::limits::MAX_LIMIT + 1] {
        assert!(matches!(
            query.page(db, limit).await,
            Err(Error::InvalidQuery(_))
        ));
    }

    // Every fetch can say what it cost: two chunk queries for Tick's 40 shard values.
    let (items, stats) = query.fetch_with_stats(db).await.unwrap();
    assert_eq!(items.len(), 12);
    assert_eq!(stats.queries, 2);
    assert_eq!(stats.documents_read, 12);
}

/// A stream borrows neither its query nor the database handle it was opened with: it goes
/// into a task of its own after both are gone, and reads every page there (Tick's 40 shard
/// values are two chunks, each read in pages of 2).
#[tokio::test]
async fn a_stream_outlives_its_query_and_database_handle() {
    let test = test_db("query-stream-static").await;
    for seq in 0..12 {
        Tick::collection(&test.db)
            .upsert(&format!("t{seq:02}"), &tick(seq))
            .await
            .unwrap();
    }
    let expected = Tick::query()
        .venue("XNAS")
        .fetch_stored(&test.db)
        .await
        .unwrap();
    let stream = {
        let db = test.db.clone();
        let query = Tick::query().venue("XNAS");
        query.stream_in_pages_of(&db, 2).await.unwrap()
    };
    let streamed: Vec<Stored<Tick>> = tokio::spawn(futures::TryStreamExt::try_collect(stream))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(streamed, expected);
    assert_eq!(streamed.len(), 12);
}

/// Integer literals take the field's own type: `code(7)` on a `u32` field and `range(10..20)`
/// on a `u32` order field compile (with `impl Into<u32>`, a literal fell back to `i32`, which
/// does not convert), and select what they say.
#[tokio::test]
async fn literals_take_the_fields_own_types() {
    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "rank", direction = "asc", collection = "codes")]
    #[sharded(index(code, level))]
    struct Coded {
        #[sharded(index)]
        code: u32,
        level: u8,
        rank: u32,
    }
    let test = test_db("query-literals").await;
    let db = &test.db;
    for n in 0..30u32 {
        let coded = Coded {
            code: n % 3 + 6,
            level: (n % 2) as u8,
            rank: n,
        };
        Coded::collection(db)
            .upsert(&format!("c{n:02}"), &coded)
            .await
            .unwrap();
    }
    let ranks = |documents: Vec<Coded>| documents.iter().map(|c| c.rank).collect::<Vec<_>>();
    let sevens = Coded::query()
        .code(7)
        .range(10..20)
        .fetch(db)
        .await
        .unwrap();
    assert_eq!(ranks(sevens), [10, 13, 16, 19]);
    let pair = Coded::query().code_and_level(7, 1).fetch(db).await.unwrap();
    assert_eq!(ranks(pair), [1, 7, 13, 19, 25]);
    let inclusive = Coded::query().all().range(28..=29).fetch(db).await.unwrap();
    assert_eq!(ranks(inclusive), [28, 29]);
}

/// An `Option` left out of the document when `None` (`skip_serializing_if =
/// "Option::is_none"`) is stored under its own name whenever it holds a value, which is all
/// an equality query asks for: its query and a field set with it equal the unsharded ones.
#[tokio::test]
async fn an_option_left_out_when_none_is_queried_exactly() {
    use sharded_tests::equivalence::Unsharded;
    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 40, order_by = "at", collection = "regions")]
    #[sharded(index(region, kind))]
    struct Site {
        #[sharded(index)]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        region: Option<String>,
        kind: String,
        at: i64,
    }
    let test = test_db("query-option-skip").await;
    let db = &test.db;
    for n in 0..60i64 {
        let site = Site {
            region: [None, Some("eu".to_owned()), Some("us".to_owned())][n as usize % 3].clone(),
            kind: ["a", "b"][n as usize % 2].into(),
            at: n % 7,
        };
        Site::collection(db)
            .upsert(&format!("s{n:02}"), &site)
            .await
            .unwrap();
    }
    let ids = |sites: Vec<sharded_runtime::Stored<Site>>| {
        sites.into_iter().map(|s| s.id).collect::<Vec<_>>()
    };
    for region in ["eu", "us"] {
        let expected = Unsharded::default()
            .equal("region", region)
            .ids::<Site>(db, Site::COLLECTION)
            .await
            .unwrap();
        assert_eq!(expected.len(), 20);
        let ours = Site::query().region(region).fetch_stored(db).await.unwrap();
        assert_eq!(ids(ours), expected, "{region}");
        let expected = Unsharded::default()
            .equal("region", region)
            .equal("kind", "a")
            .ids::<Site>(db, Site::COLLECTION)
            .await
            .unwrap();
        let ours = Site::query()
            .region_and_kind(region, "a")
            .fetch_stored(db)
            .await
            .unwrap();
        assert_eq!(ids(ours), expected, "{region} a");
    }
    // The documents without a region store no field at all.
    let none = sharded_tests::all_documents(db, Site::COLLECTION)
        .await
        .into_iter()
        .filter(|document| !document.fields.contains_key("region"))
        .count();
    assert_eq!(none, 20);
}

/// Every query's type has a name (`TickVenueQuery`..., `WholeCollection<Tick>`), and so do its cursor
/// and page (`CursorOf<TickVenueQuery>`, `PageOf<TickVenueQuery>`), so a query and where it
/// got to can be kept in a struct and taken up again, page by page, to the end.
#[tokio::test]
async fn queries_and_cursors_can_be_kept_by_name() {
    use sharded_runtime::{CursorOf, PageOf, WholeCollection, reads::Queries};
    use sharded_tests::models::TickVenueQuery;
    struct Feed {
        query: TickVenueQuery,
        next: Option<CursorOf<TickVenueQuery>>,
    }
    let test = test_db("query-names").await;
    let db = &test.db;
    for seq in 0..12 {
        Tick::collection(db)
            .upsert(&format!("t{seq:02}"), &tick(seq))
            .await
            .unwrap();
    }
    let queries: Queries<Tick> = Tick::query();
    let everything: WholeCollection<Tick> = queries.all();
    let expected: Vec<String> = Tick::query()
        .venue("XNAS")
        .fetch_stored(db)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(expected.len(), 12);
    assert_eq!(everything.count(db).await.unwrap(), 12);
    let mut feed = Feed {
        query: Tick::query().venue("XNAS"),
        next: None,
    };
    let mut seen = Vec::new();
    loop {
        let query = feed.query.clone().after(feed.next.take());
        let page: PageOf<TickVenueQuery> = query.page(db, 5).await.unwrap();
        seen.extend(page.items.into_iter().map(|s| s.id));
        match page.next {
            Some(next) => feed.next = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, expected);
}

/// Each query of a type with indexed fields and field sets both filters on its own fields:
/// the runtime reads a query's fields from the description by the query's position (indexed
/// fields first, then sets), so a position off by one would filter on a neighbour's field.
/// Every combination of values is stored, and each field's values are spread differently, so
/// a query on the wrong field returns other documents.
#[tokio::test]
async fn each_query_filters_on_its_own_fields() {
    #[derive(serde::Serialize, serde::Deserialize, Sharded)]
    // Clippy takes `side` in both sets for a repeated attribute (rust-clippy#13238).
    #[allow(clippy::duplicated_attributes)]
    #[sharded(shards = 3, order_by = "at", collection = "orders")]
    #[sharded(index(venue, side))]
    #[sharded(index(side, r#type))]
    struct Order {
        #[sharded(index)]
        venue: String,
        #[sharded(index)]
        side: String,
        #[sharded(index)]
        r#type: String,
        at: i64,
    }
    let test = test_db("own-fields").await;
    let db = &test.db;
    let (venues, sides, types) = (["v0", "v1"], ["v0", "v1", "v2"], ["v0", "v1", "v2", "v3"]);
    let mut orders = Vec::new();
    for (i, venue) in venues.iter().enumerate() {
        for (j, side) in sides.iter().enumerate() {
            for (k, kind) in types.iter().enumerate() {
                let at = (i * 100 + j * 10 + k) as i64;
                let order = Order {
                    venue: venue.to_string(),
                    side: side.to_string(),
                    r#type: kind.to_string(),
                    at,
                };
                Order::collection(db)
                    .upsert(&format!("o{at:03}"), &order)
                    .await
                    .unwrap();
                orders.push(order);
            }
        }
    }
    let expected = |keep: &dyn Fn(&Order) -> bool| -> Vec<i64> {
        let mut ats: Vec<i64> = orders.iter().filter(|o| keep(o)).map(|o| o.at).collect();
        ats.sort_unstable_by(|a, b| b.cmp(a));
        ats
    };
    let ats = |found: Vec<Order>| found.into_iter().map(|o| o.at).collect::<Vec<_>>();
    let query = Order::query();
    for value in ["v0", "v1", "v2"] {
        let venue = ats(query.venue(value).fetch(db).await.unwrap());
        assert_eq!(venue, expected(&|o| o.venue == value), "venue {value}");
        let side = ats(query.side(value).fetch(db).await.unwrap());
        assert_eq!(side, expected(&|o| o.side == value), "side {value}");
        let kind = ats(query.r#type(value).fetch(db).await.unwrap());
        assert_eq!(kind, expected(&|o| o.r#type == value), "type {value}");
        let pair = ats(query.venue_and_side("v1", value).fetch(db).await.unwrap());
        let want = expected(&|o| o.venue == "v1" && o.side == value);
        assert_eq!(pair, want, "venue and side {value}");
        let pair = ats(query.side_and_type("v1", value).fetch(db).await.unwrap());
        let want = expected(&|o| o.side == "v1" && o.r#type == value);
        assert_eq!(pair, want, "side and type {value}");
    }
    assert_eq!(ats(query.all().fetch(db).await.unwrap()).len(), 24);
}

/// Firestore stores a timestamp in whole microseconds. A cursor made from a time the app
/// kept with nanoseconds (`Cursor::at` with a `SystemTime`) starts where the stored value
/// does: the documents stored in the same microsecond after its id come next, in both
/// directions and past one `in` (40 shard values), exactly as the unsharded query's.
#[tokio::test]
async fn a_cursor_at_a_time_with_nanoseconds_starts_at_the_stored_microsecond() {
    use sharded_tests::equivalence::Unsharded;
    use std::time::{Duration, SystemTime};
    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 40, order_by = "at", reversible, collection = "kept_times")]
    struct Event {
        #[sharded(index)]
        kind: String,
        at: SystemTime,
    }
    let test = test_db("query-cursor-nanos").await;
    let db = &test.db;
    // Three instants a microsecond apart, each kept with 789 nanoseconds more.
    let kept = |micros: u64| {
        SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_000_000_789 + micros * 1_000)
    };
    for n in 0..24u64 {
        let event = Event {
            kind: "k".into(),
            at: kept(n % 3),
        };
        Event::collection(db)
            .upsert(&format!("e{n:02}"), &event)
            .await
            .unwrap();
    }
    let ids = |items: Vec<Stored<Event>>| items.into_iter().map(|s| s.id).collect::<Vec<_>>();
    let every = ids(Event::query().kind("k").fetch_stored(db).await.unwrap());
    let expected = Unsharded::default()
        .equal("kind", "k")
        .ids::<Event>(db, Event::COLLECTION)
        .await
        .unwrap();
    assert_eq!(every, expected);
    // `e04` was written at the middle instant: after it come the rest of that microsecond.
    let position = every.iter().position(|id| id == "e04").unwrap();
    let after = Cursor::at(&kept(1), "e04").unwrap();
    let rest = ids(Event::query()
        .kind("k")
        .after(after.clone())
        .fetch_stored(db)
        .await
        .unwrap());
    assert_eq!(rest, every[position + 1..]);
    assert_eq!(
        after,
        Cursor::after(&Event::query().kind("k").fetch_stored(db).await.unwrap()[position]).unwrap()
    );
    let back = Cursor::at(&kept(1), "e04").unwrap();
    let mut before = ids(Event::query()
        .kind("k")
        .reversed()
        .after(back)
        .fetch_stored(db)
        .await
        .unwrap());
    before.reverse();
    assert_eq!(before, every[..position]);
}

/// An enum ordered as its rank: stored as an integer (`#[serde(into, try_from)]`), so it
/// orders as the integers do, and declared an `OrderKey`; queries by it equal the unsharded
/// ones (the guide's example).
#[tokio::test]
async fn an_enum_stored_as_its_rank_orders_a_query() {
    use sharded_tests::equivalence::Unsharded;
    #[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
    #[serde(into = "u8", try_from = "u8")]
    enum Priority {
        Low,
        Normal,
        Urgent,
    }
    impl From<Priority> for u8 {
        fn from(priority: Priority) -> u8 {
            priority as u8
        }
    }
    impl TryFrom<u8> for Priority {
        type Error = String;
        fn try_from(rank: u8) -> Result<Self, String> {
            match rank {
                0 => Ok(Priority::Low),
                1 => Ok(Priority::Normal),
                2 => Ok(Priority::Urgent),
                other => Err(format!("no priority ranks {other}")),
            }
        }
    }
    impl sharded_runtime::reads::OrderKey for Priority {}
    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 40, order_by = "priority", collection = "tickets")]
    struct Ticket {
        #[sharded(index)]
        queue: String,
        priority: Priority,
    }
    let test = test_db("query-enum-order").await;
    let db = &test.db;
    for n in 0..30 {
        let ticket = Ticket {
            queue: "support".into(),
            priority: [Priority::Normal, Priority::Urgent, Priority::Low][n % 3],
        };
        Ticket::collection(db)
            .upsert(&format!("t{n:02}"), &ticket)
            .await
            .unwrap();
    }
    let ours: Vec<String> = Ticket::query()
        .queue("support")
        .fetch_stored(db)
        .await
        .unwrap()
        .into_iter()
        .map(|stored| stored.id)
        .collect();
    let expected = Unsharded::default()
        .equal("queue", "support")
        .ids::<Ticket>(db, Ticket::COLLECTION)
        .await
        .unwrap();
    assert_eq!(ours, expected);
    // Urgent first (descending), ties by name descending too.
    assert_eq!(&ours[..3], ["t28", "t25", "t22"]);
    let urgent = Ticket::query()
        .queue("support")
        .range(Priority::Urgent..=Priority::Urgent)
        .count(db)
        .await
        .unwrap();
    assert_eq!(urgent, 10);
    // A cursor at an enum value reads back as one.
    let page = Ticket::query().queue("support").page(db, 4).await.unwrap();
    let token = page.next.unwrap().to_token();
    let again: sharded_runtime::CursorOf<TicketQueueQuery> = token.parse().unwrap();
    let next = Ticket::query()
        .queue("support")
        .after(again)
        .page(db, 4)
        .await
        .unwrap();
    assert_eq!(next.items.len(), 4);
}

/// A query that ends `before` a cursor is read backwards through its plan; the reads that
/// take no `before` (a stream, a listener) refuse it before sending anything, with the reason.
#[tokio::test]
async fn a_stream_or_a_listener_of_a_query_ending_before_a_cursor_is_refused() {
    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "at", reversible, collection = "ends_before")]
    struct Line {
        at: i64,
    }
    let test = test_db("query-before-refused").await;
    let db = &test.db;
    let query = Line::query().all().before(Cursor::at(&5, "l1").unwrap());
    let plan = query.plan().unwrap();
    assert!(plan.ends_before());
    let refused = |result: Result<(), Error>| match result {
        Err(Error::InvalidQuery(why)) => assert!(why.contains("`before` runs with"), "{why}"),
        other => panic!("{other:?}"),
    };
    refused(query.stream(db).await.map(drop));
    refused(query.listen(db).map(drop));
    // The reads that take it run it.
    assert_eq!(query.count(db).await.unwrap(), 0);
    assert!(query.fetch(db).await.unwrap().is_empty());
}
