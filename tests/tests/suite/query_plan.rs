//! Query plans without an emulator: every shape (all, equality, `in`, contains, contains-any,
//! OR, range filter, `not-in`), scope (top level, under a parent, group), direction (the
//! type's, reversed, read backwards for `before`) and chunking (3, 40 and 61 shard values).
//! For each plan: every shard value is read by exactly one chunk query for each pair of
//! values, no chunk query asks more than 30 disjunctions, the index each part needs is in
//! the type's plan in the scope the query reads, and the direction is the one the query reads
//! in. One plan is pinned whole as printed.

use serde::{Deserialize, Serialize};
use sharded_runtime::{
    Cursor, Parent, QueryPlan, Sharded,
    indexes::{Direction, IndexNeed, QueryScope},
};

/// A type with every kind of query field, placed and ordered as its `#[sharded(...)]`
/// attributes say.
macro_rules! item {
    ($(#[$placement:meta])* $name:ident) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        $(#[$placement])*
        struct $name {
            #[sharded(index)]
            venue: String,
            #[sharded(index)]
            kind: u32,
            #[sharded(contains)]
            tags: Vec<String>,
            #[sharded(range)]
            price: i64,
            at: i64,
        }
    };
}

item!(
    #[sharded(shards = 3, order_by = "at", direction = "asc", reversible)]
    #[sharded(collection = "plan_three")]
    Three
);
item!(
    #[sharded(shards = 40, order_by = "at", direction = "desc", reversible)]
    #[sharded(collection = "plan_forty")]
    Forty
);
item!(
    #[sharded(shards = 61, order_by = "at", direction = "asc", reversible)]
    #[sharded(collection = "plan_sixty_one")]
    SixtyOne
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 40,
    order_by = "at",
    parent = "rooms",
    collection = "plan_notes",
    collection_group
)]
struct Note {
    #[sharded(index)]
    author: String,
    at: i64,
}

/// What every plan of `T` keeps, whatever its shape: each (shard value, `in` value) pair read
/// by one chunk query (an OR's or a contains-any's chunks each ask for all their values, so
/// each shard value once), at most 30 disjunctions a query, each need served by the type's
/// index plan in `scope`, read in `direction`.
fn check<T: Sharded>(
    label: &str,
    plan: &QueryPlan,
    scope: QueryScope,
    direction: Direction,
    values: usize,
) {
    let chunks = plan.chunk_shards();
    assert_eq!(chunks.len(), plan.chunk_queries(), "{label}");
    let mut read: Vec<&str> = chunks
        .iter()
        .flat_map(|chunk| chunk.iter().copied())
        .collect();
    read.sort();
    let mut expected: Vec<&str> = T::READ_SHARD_VALUES
        .iter()
        .flat_map(|shard| std::iter::repeat_n(*shard, values))
        .collect();
    expected.sort();
    assert_eq!(
        read, expected,
        "{label}: every shard value read once per value group"
    );
    assert!(
        chunks
            .iter()
            .all(|chunk| !chunk.is_empty() && chunk.len() <= 30),
        "{label}"
    );
    assert_eq!(plan.direction(), direction, "{label}");
    let indexes = T::indexes();
    assert!(!plan.index_needs().is_empty(), "{label}");
    for need in plan.index_needs() {
        assert_eq!(need.query_scope, scope, "{label}");
        assert_eq!(need.collection_group, T::COLLECTION, "{label}");
        assert_eq!(need.equalities[0], T::DESCRIPTION.shard_field, "{label}");
        assert_eq!(
            need.orders[0],
            (T::ORDER_FIELD.to_owned(), direction),
            "{label}"
        );
        assert!(
            indexes.serving(need).is_some(),
            "{label}: no index of the plan serves {need:?}"
        );
    }
}

/// The groups of `in` values a plan of `n` values over `shards` shard values reads each
/// shard value in: how many chunk queries read each shard value.
fn value_groups(plan: &QueryPlan, shards: usize) -> usize {
    plan.chunk_shards()
        .iter()
        .map(|chunk| chunk.len())
        .sum::<usize>()
        / shards
}

macro_rules! every_shape {
    ($name:ident, $test:ident) => {
        #[test]
        fn $test() {
            type T = $name;
            let own = T::DESCRIPTION.direction;
            let n = T::READ_SHARD_VALUES.len();
            let top = QueryScope::Collection;
            let cursor = || {
                Cursor::<T, { sharded_runtime::reads::query_id("venue") }>::at(&5, "d1").unwrap()
            };

            let plan = T::query().all().plan().unwrap();
            check::<T>("all", &plan, top, own, 1);
            assert_eq!(plan.chunk_queries(), n.div_ceil(30));
            assert!(!plan.ends_before() && plan.limit().is_none());

            let plan = T::query().venue("XNAS").limit(7).plan().unwrap();
            check::<T>("equality", &plan, top, own, 1);
            assert_eq!(plan.limit(), Some(7));
            assert_eq!(
                plan.index_needs()[0].equalities,
                [T::DESCRIPTION.shard_field, "venue"]
            );

            let plan = T::query().venue("XNAS").reversed().plan().unwrap();
            check::<T>("reversed", &plan, top, own.reversed(), 1);

            let plan = T::query().venue("XNAS").before(cursor()).plan().unwrap();
            check::<T>("before", &plan, top, own.reversed(), 1);
            assert!(plan.ends_before());
            let plan = T::query()
                .venue("XNAS")
                .reversed()
                .before(Cursor::at(&5, "d1").unwrap())
                .plan()
                .unwrap();
            check::<T>("reversed before", &plan, top, own, 1);

            let plan = T::query().venue("XNAS").after(cursor()).plan().unwrap();
            check::<T>("after", &plan, top, own, 1);
            assert!(plan.to_string().contains("START AFTER (5, plan_"), "{plan}");
            // Inclusive and end cursors: the same index, every chunk query bounded alike.
            let plan = T::query()
                .venue("XNAS")
                .start_at(cursor())
                .end_before(Cursor::at(&9, "d9").unwrap())
                .plan()
                .unwrap();
            check::<T>("start_at end_before", &plan, top, own, 1);
            let printed = plan.to_string();
            assert!(printed.contains("START AT (5, plan_"), "{plan}");
            assert!(printed.contains("END BEFORE (9, plan_"), "{plan}");
            let plan = T::query().venue("XNAS").end_at(cursor()).plan().unwrap();
            assert!(plan.to_string().contains("END AT (5, plan_"), "{plan}");
            assert!(!plan.ends_before());

            for k in [1, 2, 7, 11, 30] {
                let plan = T::query().kind_in(0..k).plan().unwrap();
                let groups = value_groups(&plan, n);
                check::<T>(&format!("in of {k}"), &plan, top, own, groups);
                assert_eq!(
                    plan.index_needs()[0].equalities,
                    [T::DESCRIPTION.shard_field, "kind"]
                );
            }

            let plan = T::query().tags_contains("a").plan().unwrap();
            check::<T>("contains", &plan, top, own, 1);
            assert_eq!(plan.index_needs()[0].contains.as_deref(), Some("tags"));
            for k in [1, 4, 30] {
                let tags: Vec<String> = (0..k).map(|i| format!("t{i}")).collect();
                let plan = T::query().tags_contains_any(tags).plan().unwrap();
                check::<T>(&format!("contains-any of {k}"), &plan, top, own, 1);
                assert!(
                    plan.chunk_shards()
                        .iter()
                        .all(|c| c.len() * k as usize <= 30)
                );
            }

            let plan = T::query()
                .venue("XNAS")
                .or(T::query().kind(3))
                .plan()
                .unwrap();
            check::<T>("or", &plan, top, own, 1);
            assert_eq!(plan.index_needs().len(), 2);
            assert!(plan.chunk_shards().iter().all(|c| c.len() <= 15));

            let plan = T::query()
                .venue("XNAS")
                .filter(T::ranges().price.greater_than(3))
                .plan()
                .unwrap();
            check::<T>("range", &plan, top, own, 1);
            assert_eq!(plan.then_by(), ["price"]);
            assert_eq!(
                plan.index_needs()[0].orders[1],
                ("price".to_owned(), own),
                "a range filter's field is ordered after the order field"
            );

            let plan = T::query()
                .all()
                .filter(T::ranges().price.not_in([1, 2]))
                .plan()
                .unwrap();
            check::<T>("not-in", &plan, top, own, 1);
            assert_eq!(
                plan.chunk_queries(),
                n,
                "a not-in reads one shard value a query"
            );
        }
    };
}

item!(
    #[sharded(shards = 3, order_by = "at", direction = "desc", reversible)]
    #[sharded(parent = "desks", collection = "plan_placed_three", collection_group)]
    PlacedThree
);
item!(
    #[sharded(shards = 40, order_by = "at", direction = "asc", reversible)]
    #[sharded(parent = "desks", collection = "plan_placed_forty", collection_group)]
    PlacedForty
);
item!(
    #[sharded(shards = 61, order_by = "at", direction = "desc", reversible)]
    #[sharded(
        parent = "desks",
        collection = "plan_placed_sixty_one",
        collection_group
    )]
    PlacedSixtyOne
);

/// Every shape of a subcollection type under one parent (`COLLECTION` scope) and over its
/// group (`COLLECTION_GROUP` scope), each way.
macro_rules! every_shape_placed {
    ($name:ident, $test:ident) => {
        #[test]
        fn $test() {
            type T = $name;
            let desk = Parent::<T>::new(&["d1"]).unwrap();
            let own = T::DESCRIPTION.direction;
            let n = T::READ_SHARD_VALUES.len();
            let tags = || vec!["a".to_owned(), "b".to_owned()];
            for (scope, label) in [
                (QueryScope::Collection, "under a parent"),
                (QueryScope::CollectionGroup, "over the group"),
            ] {
                let group = scope == QueryScope::CollectionGroup;
                macro_rules! placed {
                    ($query:expr) => {
                        match group {
                            true => $query.in_group().plan().unwrap(),
                            false => $query.in_parent(&desk).plan().unwrap(),
                        }
                    };
                }
                let plan = placed!(T::query().all());
                check::<T>(&format!("{label}: all"), &plan, scope, own, 1);
                let place = if group {
                    "collection group `".to_owned()
                } else {
                    "collection `".to_owned()
                };
                assert!(plan.to_string().starts_with(&place), "{plan}");
                let plan = placed!(T::query().venue("XNAS"));
                check::<T>(&format!("{label}: equality"), &plan, scope, own, 1);
                // Reversed after the scope, as a reversed query's type reads.
                let plan = match group {
                    true => T::query().venue("XNAS").in_group().reversed().plan(),
                    false => T::query().venue("XNAS").in_parent(&desk).reversed().plan(),
                }
                .unwrap();
                check::<T>(
                    &format!("{label}: reversed"),
                    &plan,
                    scope,
                    own.reversed(),
                    1,
                );
                let plan = placed!(T::query().kind_in(0..7));
                let groups = value_groups(&plan, n);
                check::<T>(&format!("{label}: in"), &plan, scope, own, groups);
                let plan = placed!(T::query().tags_contains_any(tags()));
                check::<T>(&format!("{label}: contains-any"), &plan, scope, own, 1);
                let plan = placed!(T::query().venue("XNAS").or(T::query().kind(3)));
                check::<T>(&format!("{label}: or"), &plan, scope, own, 1);
                assert_eq!(plan.index_needs().len(), 2);
                let plan = placed!(
                    T::query()
                        .venue("XNAS")
                        .filter(T::ranges().price.within(1..9))
                );
                check::<T>(&format!("{label}: range"), &plan, scope, own, 1);
                // A `!=` goes beside the shard field's `in`; a `not-in` does not (measured in
                // server_inequalities.rs), so it reads one shard value a query.
                let plan = placed!(T::query().all().filter(T::ranges().price.not_equal(4)));
                check::<T>(&format!("{label}: not-equal"), &plan, scope, own, 1);
                assert_eq!(plan.chunk_queries(), n.div_ceil(30), "{label}: not-equal");
                let plan = placed!(T::query().all().filter(T::ranges().price.not_in([4, 5])));
                check::<T>(&format!("{label}: not-in"), &plan, scope, own, 1);
                assert_eq!(plan.chunk_queries(), n, "{label}: one shard value a query");
            }
        }
    };
}

every_shape_placed!(PlacedThree, placed_plans_of_three_shard_values);
every_shape_placed!(PlacedForty, placed_plans_of_forty_shard_values);
every_shape_placed!(PlacedSixtyOne, placed_plans_of_sixty_one_shard_values);

every_shape!(Three, plans_of_three_shard_values);
every_shape!(Forty, plans_of_forty_shard_values);
every_shape!(SixtyOne, plans_of_sixty_one_shard_values);

#[test]
fn plans_read_where_the_query_reads() {
    let parent = Parent::<Note>::new(&["r1"]).unwrap();
    let own = Note::DESCRIPTION.direction;
    let under = Note::query()
        .author("ada")
        .in_parent(&parent)
        .plan()
        .unwrap();
    check::<Note>("under a parent", &under, QueryScope::Collection, own, 1);
    assert!(
        under
            .to_string()
            .starts_with("collection `plan_notes` under `rooms/r1`")
    );
    let group = Note::query().author("ada").in_group().plan().unwrap();
    check::<Note>("group", &group, QueryScope::CollectionGroup, own, 1);
    assert!(
        group
            .to_string()
            .starts_with("collection group `plan_notes`")
    );
    let all = Note::query().all().in_group().limit(3).plan().unwrap();
    check::<Note>("group all", &all, QueryScope::CollectionGroup, own, 1);
    assert_eq!(all.chunk_queries(), 2);
}

/// A query's plan is the one its reads would send: the query's own checks fail it before
/// anything is sent.
#[test]
fn a_plan_refuses_what_firestore_would() {
    assert!(Three::query().all().limit(0).plan().is_err());
    assert!(Three::query().kind_in(0..31).plan().is_err());
    assert!(Three::query().kind_in(Vec::<u32>::new()).plan().is_err());
    let both = Three::query()
        .venue("XNAS")
        .after(Cursor::at(&1, "a").unwrap())
        .before(Cursor::at(&2, "b").unwrap());
    assert!(both.plan().is_err());
}

/// One plan, printed whole: what a user reading `{plan}` sees.
#[test]
fn a_plan_prints_each_chunk_query_and_its_index() {
    let plan = Three::query()
        .venue("XNAS")
        .filter(Three::ranges().price.at_least(10))
        .limit(5)
        .plan()
        .unwrap();
    let need: &IndexNeed = &plan.index_needs()[0];
    assert!(Three::indexes().serving(need).is_some());
    let [a, b, c] = Three::READ_SHARD_VALUES else {
        panic!("three shard values")
    };
    assert_eq!(
        plan.to_string(),
        format!(
            "collection `plan_three`: 1 query\n  #1: WHERE shard IN [{a:?}, {b:?}, {c:?}] AND venue == \"XNAS\" AND price >= 10 ORDER BY at ASC, price ASC, __name__ ASC LIMIT 5\n  index (COLLECTION): shard ASC, venue ASC, at ASC, price ASC\n"
        )
    );
}

/// A plan of several chunk queries prints each with the OR in parentheses, and a limit as
/// the merge's (each chunk is asked for its share in rounds, not for the whole limit).
#[test]
fn a_plan_of_many_chunks_prints_the_merge_and_its_limit() {
    let plan = Forty::query()
        .venue("XNAS")
        .or(Forty::query().kind(3))
        .limit(7)
        .plan()
        .unwrap();
    let printed = plan.to_string();
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "collection `plan_forty`: {} chunk queries merged by the order below, the first 7 of the merge kept (each chunk asked for its share of them, and for more in rounds while the merge needs it)",
            plan.chunk_queries()
        )
    );
    let chunks: Vec<&&str> = lines
        .iter()
        .filter(|line| line.starts_with("  #"))
        .collect();
    assert_eq!(chunks.len(), plan.chunk_queries());
    for (line, shards) in chunks.iter().zip(plan.chunk_shards()) {
        let listed: Vec<String> = shards.iter().map(|shard| format!("{shard:?}")).collect();
        assert!(
            line.contains(&format!(
                "WHERE shard IN [{}] AND (venue == \"XNAS\" OR kind == 3) ORDER BY at DESC, __name__ DESC",
                listed.join(", ")
            )),
            "{line}"
        );
        assert!(!line.contains("LIMIT"), "{line}");
    }
    let indexes: Vec<&&str> = lines
        .iter()
        .filter(|line| line.contains("index ("))
        .collect();
    assert_eq!(
        indexes,
        [
            &"  index (COLLECTION): shard ASC, venue ASC, at DESC",
            &"  index (COLLECTION): shard ASC, kind ASC, at DESC"
        ]
    );
}
