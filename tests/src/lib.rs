//! Shared pieces of the test suite: an emulator per test and the recipe's data model.

use sharded_runtime::emulator::Emulator;
use sharded_runtime::firestore::FirestoreDb;

pub mod models;

/// A started emulator and a client of a project no other test uses.
pub struct TestDb {
    pub db: FirestoreDb,
    pub emulator: Emulator,
}

/// Starts (or joins, with `FIRESTORE_EMULATOR_HOST`) an emulator and connects to a fresh project.
pub async fn test_db(name: &str) -> TestDb {
    let emulator = Emulator::start()
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let project = format!("{name}-{}", rand::random::<u32>());
    let db = emulator
        .db(&project)
        .await
        .expect("connect to the emulator");
    TestDb { db, emulator }
}
