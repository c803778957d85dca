//! The page's per-user migration in Datastore mode, on the emulator: users moved in batches
//! chosen by the rollout's hash, each user's state on the user's own entity (its other
//! properties kept as they were), reads of each user where the state says, a rollback that
//! sends back exactly the users above a lowered share, a user whose entity cannot be copied
//! held mid-way where reads still find it, and the run as a tracked job split over tasks.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};
use sharded_runtime::Error;
use sharded_runtime::Sharded;
use sharded_runtime::datastore::{
    Kind, LeftBehindReason, Migration, USER_MIGRATION_STATE_KIND, UserMigration,
    UserMigrationProgress, UserState,
};
use sharded_runtime::firestore::gcloud_sdk::google::datastore::v1 as ds;
use sharded_runtime::rollout::{Rollout, WHOLE};

use crate::datastore_mode::{Raw, fresh_datastore, integer, raw_client, string};

use ds::key::path_element::IdType;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", collection = "OrderV2")]
struct Order {
    owner: Owner,
    at: i64,
    note: String,
}

/// The user an order belongs to, as the old kind holds it: a name, or a number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
enum Owner {
    Name(String),
    Number(i64),
}

const OLD_KIND: &str = "OrderV1";
const USER_KIND: &str = "Account";

/// A user's id as the runtime names it, and its key's id.
fn user_ids() -> Vec<(String, IdType, Owner)> {
    let mut users: Vec<(String, IdType, Owner)> = (0..40)
        .map(|i| {
            let name = format!("user-{i:02}");
            (name.clone(), IdType::Name(name.clone()), Owner::Name(name))
        })
        .collect();
    // A numbered user: `__id<N>__` to the runtime, an integer in the old kind.
    users.push(("__id77__".into(), IdType::Id(77), Owner::Number(77)));
    users
}

struct World {
    raw: Raw,
    partition: ds::PartitionId,
    kind: Kind<Order>,
    /// Every order of the old kind: its id, owner and note.
    orders: BTreeMap<String, (Owner, String)>,
    /// The owners with no user entity.
    orphans: Vec<Owner>,
}

impl World {
    async fn new(name: &str) -> World {
        let (datastore, project) = fresh_datastore(name).await;
        let partition = ds::PartitionId {
            project_id: project.clone(),
            ..Default::default()
        };
        let raw = raw_client().await;
        let mut orders = BTreeMap::new();
        let mut entities = Vec::new();
        let mut owners: Vec<Owner> = user_ids().into_iter().map(|(_, _, owner)| owner).collect();
        let orphans = vec![Owner::Name("ghost".into())];
        owners.extend(orphans.clone());
        for (u, owner) in owners.iter().enumerate() {
            // 0 to 3 orders a user: some users have none.
            for j in 0..(u % 4) {
                let id = format!("o{u:02}{j}");
                let note = format!("order {j} of {owner:?}");
                orders.insert(id.clone(), (owner.clone(), note.clone()));
                let owner_value = match owner {
                    Owner::Name(name) => string(name),
                    Owner::Number(n) => integer(*n),
                };
                entities.push(entity(
                    &partition,
                    OLD_KIND,
                    IdType::Name(id),
                    HashMap::from([
                        ("owner".to_owned(), owner_value),
                        ("at".to_owned(), integer((u * 10 + j) as i64)),
                        ("note".to_owned(), string(&note)),
                    ]),
                ));
            }
        }
        for (_, id, owner) in user_ids() {
            // The user's own properties, one unindexed: kept as they were by every state change.
            let mut bio = string(&format!("bio of {owner:?}"));
            bio.exclude_from_indexes = true;
            entities.push(entity(
                &partition,
                USER_KIND,
                id,
                HashMap::from([("bio".to_owned(), bio), ("plan".to_owned(), string("pro"))]),
            ));
        }
        commit(&raw, &project, entities).await;
        World {
            raw,
            partition,
            kind: datastore.kind::<Order>(),
            orders,
            orphans,
        }
    }

    fn options(&self, share_ppm: u32) -> UserMigration {
        UserMigration {
            users_per_batch: 7,
            batch_size: 5,
            ..UserMigration::new(
                Rollout::new("orders-v2", share_ppm).unwrap(),
                OLD_KIND,
                USER_KIND,
                "owner",
            )
        }
    }

    /// The entity of `kind` at `id`, through the Datastore API itself.
    async fn lookup(&self, kind: &str, id: IdType) -> Option<ds::Entity> {
        let key = entity(&self.partition, kind, id, HashMap::new()).key;
        let found = self
            .raw
            .get()
            .lookup(ds::LookupRequest {
                project_id: self.partition.project_id.clone(),
                keys: key.into_iter().collect(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        found.found.into_iter().find_map(|result| result.entity)
    }

    /// The user entities as stored.
    async fn users(&self) -> BTreeMap<String, ds::Entity> {
        let keys = user_ids()
            .into_iter()
            .map(|(_, id, _)| ds::Key {
                partition_id: Some(self.partition.clone()),
                path: vec![ds::key::PathElement {
                    kind: USER_KIND.into(),
                    id_type: Some(id),
                }],
            })
            .collect();
        let found = self
            .raw
            .get()
            .lookup(ds::LookupRequest {
                project_id: self.partition.project_id.clone(),
                keys,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(found.deferred.is_empty());
        found
            .found
            .into_iter()
            .filter_map(|result| result.entity)
            .map(|entity| {
                let id = match entity.key.as_ref().unwrap().path[0]
                    .id_type
                    .clone()
                    .unwrap()
                {
                    IdType::Name(name) => name,
                    IdType::Id(n) => format!("__id{n}__"),
                };
                (id, entity)
            })
            .collect()
    }

    /// Checks every user's state against `expected`, the user entity's other properties kept,
    /// the new kind holding exactly the orders of the users ever below the share (the highest,
    /// `high_water_ppm`, so far: a rollback copies nothing back and deletes nothing, and the
    /// app made no writes here), and each order read as its user's state says.
    async fn check(
        &self,
        options: &UserMigration,
        expected: &BTreeMap<String, UserState>,
        high_water_ppm: u32,
    ) {
        let users = self.users().await;
        assert_eq!(users.len(), expected.len());
        for (id, entity) in &users {
            let state = self.kind.user_state(options, id).await.unwrap();
            assert_eq!(state, expected[id], "{id}");
            let bio = &entity.properties["bio"];
            assert!(
                bio.exclude_from_indexes,
                "{id}: an unindexed property stays so"
            );
            assert_eq!(entity.properties["plan"], string("pro"));
        }
        let owner_state: BTreeMap<Owner, UserState> = user_ids()
            .into_iter()
            .map(|(id, _, owner)| (owner, expected[&id]))
            .collect();
        let high_water = Rollout::new("orders-v2", high_water_ppm).unwrap();
        let moved: BTreeSet<String> = self
            .orders
            .iter()
            .filter(|(_, (owner, _))| {
                user_ids()
                    .iter()
                    .any(|(id, _, o)| o == owner && high_water.uses_new(id))
            })
            .map(|(id, _)| id.clone())
            .collect();
        let in_new: BTreeSet<String> = self
            .kind
            .fetch(&Order::query().all())
            .await
            .unwrap()
            .into_iter()
            .map(|stored| stored.id)
            .collect();
        assert_eq!(
            in_new, moved,
            "the new kind holds the orders of every user moved so far"
        );
        for (id, (owner, note)) in &self.orders {
            let state = owner_state.get(owner).copied().unwrap_or(UserState::Old);
            let read = self
                .kind
                .get_for_user(id, state, OLD_KIND)
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{id} of a user {state:?} is not found"));
            assert_eq!((&read.owner, &read.note), (owner, note));
        }
    }
}

fn entity(
    partition: &ds::PartitionId,
    kind: &str,
    id: IdType,
    properties: HashMap<String, ds::Value>,
) -> ds::Entity {
    ds::Entity {
        key: Some(ds::Key {
            partition_id: Some(partition.clone()),
            path: vec![ds::key::PathElement {
                kind: kind.into(),
                id_type: Some(id),
            }],
        }),
        properties,
    }
}

async fn commit(raw: &Raw, project: &str, entities: Vec<ds::Entity>) {
    for chunk in entities.chunks(500) {
        raw.get()
            .commit(ds::CommitRequest {
                project_id: project.into(),
                mode: ds::commit_request::Mode::NonTransactional as i32,
                mutations: chunk
                    .iter()
                    .map(|entity| ds::Mutation {
                        operation: Some(ds::mutation::Operation::Upsert(entity.clone())),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
}

/// The states a share leaves users in: `Moved` below it, `Old` above.
fn states_at(share_ppm: u32) -> BTreeMap<String, UserState> {
    let rollout = Rollout::new("orders-v2", share_ppm).unwrap();
    user_ids()
        .into_iter()
        .map(|(id, _, _)| {
            let state = if rollout.uses_new(&id) {
                UserState::Moved
            } else {
                UserState::Old
            };
            (id, state)
        })
        .collect()
}

async fn run(world: &World, options: &UserMigration) -> (UserMigrationProgress, usize) {
    let mut steps = 0;
    let done = world
        .kind
        .migrate_users(options, None, |_| {
            steps += 1;
            ControlFlow::Continue(())
        })
        .await
        .unwrap();
    assert!(done.is_done());
    (done, steps)
}

/// Raised to 30 %, then lowered to 10 %, then raised to the whole: at each step exactly the
/// users below the share are moved, the rest old, every order read where its user's state
/// says; the rollback copies nothing back; the users' other properties stay; a user with no
/// entity of the user kind is not moved, and the whole-kind migration then copies what it
/// left.
#[tokio::test]
async fn users_move_by_hash_in_batches_and_roll_back_above_a_lowered_share() {
    let world = World::new("ds-users").await;
    let nobody = world.options(0);
    let (done, _) = run(&world, &nobody).await;
    assert_eq!((done.users_moved, done.copied), (0, 0));
    world.check(&nobody, &states_at(0), 0).await;

    let thirty = world.options(300_000);
    let expected = states_at(300_000);
    let movers = expected
        .values()
        .filter(|s| **s == UserState::Moved)
        .count() as u64;
    assert!(
        (5..=20).contains(&movers),
        "{movers} of 41 users below 30 %"
    );
    let (done, steps) = run(&world, &thirty).await;
    let orders_of_movers = world
        .orders
        .values()
        .filter(|(owner, _)| {
            user_ids()
                .iter()
                .any(|(id, _, o)| o == owner && expected[id] == UserState::Moved)
        })
        .count() as u64;
    assert_eq!(
        (done.users_moved, done.copied, done.users_rolled_back),
        (movers, orders_of_movers, 0)
    );
    assert!(done.commits >= orders_of_movers.div_ceil(5));
    assert!(steps >= movers.div_ceil(7) as usize, "batches of 7 users");
    world.check(&thirty, &expected, 300_000).await;
    // Again at the same share: nothing to do.
    let (again, _) = run(&world, &thirty).await;
    assert_eq!(
        (again.users_moved, again.users_already_moved, again.copied),
        (0, movers, 0)
    );

    // The rollback: only users between 10 % and 30 % go back, nothing is copied.
    let ten = world.options(100_000);
    let (back, _) = run(&world, &ten).await;
    let expected_ten = states_at(100_000);
    let stay = expected_ten
        .values()
        .filter(|s| **s == UserState::Moved)
        .count() as u64;
    assert_eq!(
        (back.users_rolled_back, back.users_moved, back.copied),
        (movers - stay, 0, 0)
    );
    let users = world.users().await;
    for (id, state) in &expected_ten {
        assert_eq!(
            world.kind.user_state(&ten, id).await.unwrap(),
            *state,
            "{id}"
        );
        if *state == UserState::Old && expected[id] == UserState::Moved {
            assert_eq!(
                users[id].properties["sharded_migration"],
                string("old"),
                "{id}"
            );
        }
    }

    let whole = world.options(WHOLE);
    let (all, _) = run(&world, &whole).await;
    assert_eq!(all.users_moved, 41 - stay);
    assert_eq!(
        all.already_there,
        world
            .orders
            .values()
            .filter(|(owner, _)| user_ids().iter().any(|(id, _, o)| o == owner
                && expected[id] == UserState::Moved
                && expected_ten[id] == UserState::Old))
            .count() as u64,
        "the rolled-back users' orders were in the new kind already"
    );
    world.check(&whole, &states_at(WHOLE), WHOLE).await;
    // The orphan's orders are not moved by the per-user job; the whole-kind migration copies
    // them, and only them.
    let orphan_orders: BTreeSet<&String> = world
        .orders
        .iter()
        .filter(|(_, (owner, _))| world.orphans.contains(owner))
        .map(|(id, _)| id)
        .collect();
    assert!(!orphan_orders.is_empty());
    let rest = world
        .kind
        .migrate_from(&Migration::from_kind(OLD_KIND), None, |_| {
            ControlFlow::Continue(())
        })
        .await
        .unwrap();
    assert_eq!(rest.copied, orphan_orders.len());
    assert_eq!(
        world.kind.fetch(&Order::query().all()).await.unwrap().len(),
        world.orders.len()
    );
}

/// A user with an order the new kind cannot hold as it is (its name is no document id) stays
/// `Moving`: reads try the new kind, then the old one, and find every order of the user; the
/// entity is reported by key.
#[tokio::test]
async fn a_user_with_an_entity_left_behind_stays_mid_way_and_loses_nothing() {
    let world = World::new("ds-users-held").await;
    let user = "user-05";
    let bad = "a/b";
    commit(
        &world.raw,
        &world.partition.project_id,
        vec![entity(
            &world.partition,
            OLD_KIND,
            IdType::Name(bad.into()),
            HashMap::from([
                ("owner".to_owned(), string(user)),
                ("at".to_owned(), integer(1)),
                ("note".to_owned(), string("kept")),
            ]),
        )],
    )
    .await;
    // An entity of the user kind under an ancestor is no user: users are at the top.
    let nested = ds::Entity {
        key: Some(ds::Key {
            partition_id: Some(world.partition.clone()),
            path: vec![
                ds::key::PathElement {
                    kind: "Org".into(),
                    id_type: Some(IdType::Name("acme".into())),
                },
                ds::key::PathElement {
                    kind: USER_KIND.into(),
                    id_type: Some(IdType::Name("user-07".into())),
                },
            ],
        }),
        properties: HashMap::from([("plan".to_owned(), string("team"))]),
    };
    commit(
        &world.raw,
        &world.partition.project_id,
        vec![nested.clone()],
    )
    .await;
    let whole = world.options(WHOLE);
    let mut left = Vec::new();
    let done = world
        .kind
        .migrate_users(&whole, None, |progress| {
            left.extend(progress.left_behind.clone());
            ControlFlow::Continue(())
        })
        .await
        .unwrap();
    assert_eq!((done.users_held, done.users_moved), (1, 40));
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].key, "KEY(OrderV1, 'a/b')");
    assert!(matches!(left[0].reason, LeftBehindReason::NotAnId(_)));
    assert_eq!(
        world.kind.user_state(&whole, user).await.unwrap(),
        UserState::Moving
    );
    let mut expected = states_at(WHOLE);
    expected.insert(user.into(), UserState::Moving);
    world.check(&whole, &expected, WHOLE).await;
    // The Moving read still finds the order that stayed behind: in the old kind. (Its name
    // is no id of the new kind, so it is read through the old kind's raw API here.)
    let found = world.lookup(OLD_KIND, IdType::Name(bad.into())).await;
    assert!(found.is_some(), "never deleted or moved");
    let nested_now = world
        .raw
        .get()
        .lookup(ds::LookupRequest {
            project_id: world.partition.project_id.clone(),
            keys: nested.key.clone().into_iter().collect(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .found
        .into_iter()
        .find_map(|result| result.entity)
        .unwrap();
    assert_eq!(nested_now.properties, nested.properties, "left untouched");
}

/// Two tasks of a tracked job each move the users of their share of the hash; a run stopped
/// after its first batch is resumed from its progress; a finished part returns its stored
/// progress and sends nothing; a checkpoint of another share, and options out of range, are
/// refused before anything is written.
#[tokio::test]
async fn a_per_user_migration_splits_over_tasks_and_resumes() {
    let world = World::new("ds-users-tracked").await;
    let half = world.options(500_000);
    let expected = states_at(500_000);
    let movers = expected
        .values()
        .filter(|s| **s == UserState::Moved)
        .count() as u64;

    // A run stopped after its first batch, resumed from its progress.
    let mut first = None;
    let stopped = world
        .kind
        .migrate_users(&half, None, |progress| {
            first = Some(progress.clone());
            ControlFlow::Break(())
        })
        .await
        .unwrap();
    assert_eq!(Some(&stopped), first.as_ref());
    assert!(!stopped.is_done());
    assert!(stopped.users_moved <= 7);
    let other_share = world.options(600_000);
    match world
        .kind
        .migrate_users(&other_share, Some(&stopped), |_| ControlFlow::Continue(()))
        .await
    {
        Err(Error::InvalidCheckpoint(message)) => {
            assert!(message.contains("500000 ppm"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    let rest = world
        .kind
        .migrate_users(&half, Some(&stopped), |_| ControlFlow::Continue(()))
        .await
        .unwrap();
    assert!(rest.is_done());
    assert_eq!(rest.users_moved, movers);
    world.check(&half, &expected, 500_000).await;

    // The whole, as two tasks.
    let whole = world.options(WHOLE);
    let mut parts = Vec::new();
    for index in 0..2 {
        let part = sharded_runtime::jobs::TaskPart::new(index, 2).unwrap();
        let done = world
            .kind
            .migrate_users_part("to-v2", &whole, part, |_| {})
            .await
            .unwrap();
        assert!(done.is_done());
        parts.push(done);
    }
    let rollout = whole.rollout.clone();
    for (index, part) in parts.iter().enumerate() {
        let own = user_ids()
            .iter()
            .filter(|(id, _, _)| {
                rollout.bucket(id) % 2 == index as u32 && expected[id] == UserState::Old
            })
            .count() as u64;
        assert_eq!(part.users_moved, own, "part {index}");
    }
    world.check(&whole, &states_at(WHOLE), WHOLE).await;
    // A finished part: its stored progress, nothing sent.
    let part = sharded_runtime::jobs::TaskPart::new(1, 2).unwrap();
    let again = world
        .kind
        .migrate_users_part("to-v2", &whole, part, |_| {})
        .await
        .unwrap();
    assert_eq!(again, parts[1]);
    let stored = world
        .lookup(
            USER_MIGRATION_STATE_KIND,
            IdType::Name("to-v2-1-of-2".into()),
        )
        .await;
    assert!(stored.is_some(), "the part's progress is kept by name");

    for bad in [
        UserMigration {
            users_per_batch: 0,
            ..world.options(WHOLE)
        },
        UserMigration {
            batch_size: 501,
            ..world.options(WHOLE)
        },
        UserMigration {
            user_property: String::new(),
            ..world.options(WHOLE)
        },
    ] {
        assert!(matches!(
            world
                .kind
                .migrate_users(&bad, None, |_| ControlFlow::Continue(()))
                .await,
            Err(Error::InvalidOptions { .. })
        ));
    }
}

/// Shares drawn at random, raised and lowered in any order: after each run, exactly the users
/// below the share are moved and every order reads where its user's state says.
#[tokio::test]
async fn any_sequence_of_shares_leaves_exactly_the_users_below_the_last_one_moved() {
    use rand::Rng as _;
    let world = World::new("ds-users-random").await;
    let seed: u64 = rand::random();
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
    let mut high_water = 0;
    for step in 0..4 {
        let share = match rng.random_range(0..5) {
            0 => 0,
            1 => WHOLE,
            _ => rng.random_range(0..=WHOLE),
        };
        high_water = high_water.max(share);
        let options = world.options(share);
        let (done, _) = run(&world, &options).await;
        assert_eq!(done.users_gone, 0, "seed {seed}, step {step}");
        world.check(&options, &states_at(share), high_water).await;
    }
}

/// A run killed between setting a batch `Moving` and copying it leaves those users mid-way
/// with some orders copied (here: the first of each): their reads find every order, the
/// copied ones in the new kind and the rest in the old one; the next run copies the rest and
/// sets them `Moved`, the orders copied already counted as there.
#[tokio::test]
async fn a_user_left_mid_way_by_a_killed_run_reads_both_kinds_and_is_finished_by_the_next() {
    let world = World::new("ds-users-killed").await;
    let options = world.options(WHOLE);
    let mid_way: Vec<(String, IdType, Owner)> = user_ids()
        .into_iter()
        .filter(|(id, _, _)| ["user-02", "user-03", "__id77__"].contains(&id.as_str()))
        .collect();
    let mut users = world.users().await;
    let mut written = Vec::new();
    let mut copied = 0;
    for (id, _, owner) in &mid_way {
        let mut user = users.remove(id).unwrap();
        user.properties
            .insert("sharded_migration".into(), string("moving"));
        written.push(user);
        if let Some((order_id, (_, note))) = world.orders.iter().find(|(_, (o, _))| o == owner) {
            let order = Order {
                owner: owner.clone(),
                at: 0,
                note: note.clone(),
            };
            world.kind.insert(order_id, &order).await.unwrap();
            copied += 1;
        }
    }
    commit(&world.raw, &world.partition.project_id, written).await;
    let mut expected: BTreeMap<String, UserState> = user_ids()
        .into_iter()
        .map(|(id, _, _)| (id, UserState::Old))
        .collect();
    for (id, _, _) in &mid_way {
        expected.insert(id.clone(), UserState::Moving);
    }
    // Mid-way: the new kind holds only the first order of each, yet every order is read.
    let in_new = world.kind.fetch(&Order::query().all()).await.unwrap().len();
    assert_eq!(in_new, copied);
    for (order_id, (owner, note)) in &world.orders {
        let state = mid_way
            .iter()
            .find(|(_, _, o)| o == owner)
            .map_or(UserState::Old, |_| UserState::Moving);
        let read = world
            .kind
            .get_for_user(order_id, state, OLD_KIND)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((&read.owner, &read.note), (owner, note), "{order_id}");
    }
    let (done, _) = run(&world, &options).await;
    assert_eq!(done.users_moved, 41);
    assert_eq!(done.already_there, copied as u64);
    world.check(&options, &states_at(WHOLE), WHOLE).await;
}

/// Through a proxy that drops connections and loses answers after the emulator applied a
/// commit: every state change and copy is retried, a commit whose answer was lost is found
/// done by its retry, and the run ends with every user moved, every order in the new kind
/// once, and the counts whole.
#[tokio::test]
async fn a_per_user_migration_survives_dropped_connections_and_lost_answers() {
    let world = World::new("ds-users-faults").await;
    let proxy = sharded_tests::lossy_proxy(crate::datastore_mode::emulator().host()).await;
    let through =
        sharded_runtime::datastore::Datastore::emulator(&proxy.host(), &world.partition.project_id)
            .await
            .unwrap()
            .kind::<Order>();
    let options = UserMigration {
        backoff: sharded_tests::retries_through_faults(),
        ..world.options(WHOLE)
    };
    let done = through
        .migrate_users(&options, None, |_| ControlFlow::Continue(()))
        .await
        .unwrap();
    assert!(proxy.dropped() > 0, "the proxy dropped nothing");
    assert!(done.is_done());
    assert_eq!(done.users_moved, 41);
    let owned = world
        .orders
        .values()
        .filter(|(owner, _)| !world.orphans.contains(owner))
        .count() as u64;
    assert_eq!(done.copied + done.already_there, owned);
    assert_eq!(done.vanished, 0);
    world.check(&options, &states_at(WHOLE), WHOLE).await;
}
