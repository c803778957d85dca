//! Traffic moved from one kind (or collection) to another user by user, as the Datastore
//! best-practices page advises: a deterministic hash of the user id, unbiased by the hash and
//! by the ids users have, picks the share of users on the new one, which the app raises step
//! by step (the new key range then splits as its load grows, instead of taking it all at
//! once); writes go to both while any user is still on the old one, since otherwise there is
//! no rolling back.

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result};

/// A share of users, in parts per million.
pub const WHOLE: u32 = 1_000_000;

/// A move of users from an old kind to a new one, at a share the app sets
/// ([`share_ppm`](Self::share_ppm), from 0 to [`WHOLE`]).
///
/// A user is on the new kind when the hash of the rollout's name and the user's id falls
/// below the share: the same answer in every process and every version of this crate (SHA-256,
/// the first 64 bits mapped onto a million buckets by multiplication, so no bucket is favoured
/// by more than one part in 10^13), users spread alike whatever their ids look like (sequential
/// ids included, measured over a million), a user on the new kind stays there as the share
/// grows, and two rollouts of other names pick unrelated users.
///
/// While the share is below the whole, [`dual_writes`](Self::dual_writes) says to write both
/// kinds, so that lowering the share (a rollback) finds the old kind current: read from
/// [`uses_new`](Self::uses_new)'s kind, write to both, and stop writing the old one only at
/// the whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    name: String,
    share_ppm: u32,
}

impl Rollout {
    /// A rollout named `name` (what salts the hash: keep it for the whole move) at
    /// `share_ppm` parts per million of users on the new kind. [`Error::InvalidOptions`] for
    /// an empty name or a share above [`WHOLE`].
    pub fn new(name: &str, share_ppm: u32) -> Result<Rollout> {
        if name.is_empty() {
            return Err(Error::InvalidOptions {
                option: "name",
                expected: "a rollout name that is not empty: it salts the users' hash",
            });
        }
        if share_ppm > WHOLE {
            return Err(Error::InvalidOptions {
                option: "share_ppm",
                expected: "0 to 1,000,000 parts per million of users",
            });
        }
        Ok(Rollout {
            name: name.to_owned(),
            share_ppm,
        })
    }

    /// The same rollout at another share: raised, it keeps every user it had on the new
    /// kind there; lowered (a rollback), only users above the new share go back.
    pub fn with_share(&self, share_ppm: u32) -> Result<Rollout> {
        Rollout::new(&self.name, share_ppm)
    }

    /// The rollout's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The share of users on the new kind, in parts per million.
    pub fn share_ppm(&self) -> u32 {
        self.share_ppm
    }

    /// The user's bucket, 0 to [`WHOLE`] − 1: the user is on the new kind at any share above
    /// it.
    pub fn bucket(&self, user_id: &str) -> u32 {
        let mut hash = Sha256::new();
        hash.update(self.name.as_bytes());
        // A separator no name holds twice over: ("ab", "c") and ("a", "bc") hash apart.
        hash.update((self.name.len() as u64).to_be_bytes());
        hash.update(user_id.as_bytes());
        let digest = hash.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        // Multiply-shift: a 64-bit value onto [0, WHOLE) without modulo's bias.
        ((u64::from_be_bytes(first) as u128 * WHOLE as u128) >> 64) as u32
    }

    /// Whether the user reads (and writes first) the new kind.
    pub fn uses_new(&self, user_id: &str) -> bool {
        self.bucket(user_id) < self.share_ppm
    }

    /// Whether writes go to both kinds: while any user may be on the old one, so that the
    /// old kind is still current if the share is lowered again.
    pub fn dual_writes(&self) -> bool {
        self.share_ppm < WHOLE
    }

    /// Whether every user is on the new kind.
    pub fn is_done(&self) -> bool {
        self.share_ppm == WHOLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_checked_where_they_enter() {
        assert!(Rollout::new("", 10).is_err());
        assert!(Rollout::new("m", WHOLE + 1).is_err());
        let none = Rollout::new("m", 0).unwrap();
        let all = none.with_share(WHOLE).unwrap();
        assert!(!none.uses_new("u") && none.dual_writes());
        assert!(all.uses_new("u") && !all.dual_writes() && all.is_done());
    }

    #[test]
    fn the_bucket_is_fixed_by_the_name_and_id() {
        let rollout = Rollout::new("orders-v2", 0).unwrap();
        // Pinned, as Python's hashlib computes them (SHA-256 of the name, its length as 8
        // big-endian bytes, and the id; the first 8 bytes times a million, shifted by 64):
        // a change of the hash would move users between kinds mid-way.
        assert_eq!(rollout.bucket("user-1"), 515_544);
        assert_eq!(rollout.bucket("user-2"), 842_313);
        assert_eq!(rollout.bucket("ada@example.com"), 848_370);
        assert_eq!(
            rollout.bucket("user-1"),
            Rollout::new("orders-v2", 5).unwrap().bucket("user-1")
        );
        let other = Rollout::new("orders-v3", 0).unwrap();
        let moved = (0..1000)
            .filter(|i| rollout.bucket(&format!("user-{i}")) != other.bucket(&format!("user-{i}")))
            .count();
        assert!(moved > 990, "{moved}");
        // The name's length separates it from the id.
        assert_ne!(
            Rollout::new("ab", 0).unwrap().bucket("c"),
            Rollout::new("a", 0).unwrap().bucket("bc")
        );
    }

    #[test]
    fn raising_the_share_keeps_every_user_on_the_new_kind() {
        let ids: Vec<String> = (0..5000).map(|i| format!("u{i}")).collect();
        let mut before = Rollout::new("r", 0).unwrap();
        for share in [1_000, 10_000, 100_000, 500_000, WHOLE] {
            let after = before.with_share(share).unwrap();
            for id in &ids {
                assert!(
                    !before.uses_new(id) || after.uses_new(id),
                    "{id} at {share}"
                );
            }
            before = after;
        }
    }
}
