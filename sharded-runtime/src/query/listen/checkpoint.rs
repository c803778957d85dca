//! A live query's state at one snapshot, as bytes a caller can keep (a file, a document) and
//! start a new listener from: every target's documents and the resume token committed with
//! them. The server then sends only what changed after those tokens, instead of the whole
//! result again (and bills only those reads), as the Firebase SDKs do from their cache.

use firestore::gcloud_sdk::google::firestore::v1::{Document, StructuredQuery};
use firestore::gcloud_sdk::prost::Message;
use firestore::gcloud_sdk::prost::bytes::Buf;
use firestore::gcloud_sdk::prost::encoding::{decode_varint, encode_varint};
use firestore::gcloud_sdk::prost_types::Timestamp;

use crate::error::{Error, Result};

const MAGIC: &[u8; 5] = b"shck1";

/// Where a live query can start again: the documents each of its targets held at one
/// snapshot, with the resume token the server gave for that moment.
///
/// Take one from [`QuerySnapshot::checkpoint`](super::QuerySnapshot::checkpoint) (listen with
/// [`ListenOptions::checkpoints`](super::ListenOptions::checkpoints) on), keep
/// [`to_bytes`](Self::to_bytes), and pass [`from_bytes`](Self::from_bytes) to
/// [`ShardedQuery::listen_from`](crate::query::ShardedQuery::listen_from) after a restart. A checkpoint
/// belongs to one query on one database: given to another, it is refused
/// ([`Error::InvalidCheckpoint`]) before anything is sent.
#[derive(Clone, PartialEq)]
pub struct ListenCheckpoint {
    pub(super) query: u64,
    pub(super) read_time: Timestamp,
    pub(super) targets: Vec<TargetCheckpoint>,
}

/// One target's committed state.
#[derive(Clone, PartialEq)]
pub(super) struct TargetCheckpoint {
    pub(super) id: i32,
    pub(super) resume_token: Vec<u8>,
    pub(super) documents: Vec<Document>,
}

impl std::fmt::Debug for ListenCheckpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenCheckpoint")
            .field(
                "read_time",
                &crate::wire::server_clock::system_time(self.read_time),
            )
            .field("targets", &self.targets.len())
            .field(
                "documents",
                &self
                    .targets
                    .iter()
                    .map(|t| t.documents.len())
                    .sum::<usize>(),
            )
            .finish()
    }
}

impl ListenCheckpoint {
    /// The read time of the snapshot it was taken at.
    pub fn read_time(&self) -> std::time::SystemTime {
        crate::wire::server_clock::system_time(self.read_time)
    }

    /// The checkpoint as bytes, to keep.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&self.query.to_le_bytes());
        bytes.extend_from_slice(&self.read_time.seconds.to_le_bytes());
        bytes.extend_from_slice(&self.read_time.nanos.to_le_bytes());
        encode_varint(self.targets.len() as u64, &mut bytes);
        for target in &self.targets {
            encode_varint(u64::from(target.id.unsigned_abs()), &mut bytes);
            encode_varint(target.resume_token.len() as u64, &mut bytes);
            bytes.extend_from_slice(&target.resume_token);
            encode_varint(target.documents.len() as u64, &mut bytes);
            for document in &target.documents {
                document
                    .encode_length_delimited(&mut bytes)
                    .expect("a Vec grows as needed");
            }
        }
        bytes
    }

    /// A checkpoint from [`to_bytes`](Self::to_bytes); [`Error::InvalidCheckpoint`] when the
    /// bytes are not one.
    pub fn from_bytes(bytes: &[u8]) -> Result<ListenCheckpoint> {
        let invalid = |what: &str| Error::InvalidCheckpoint(what.to_owned());
        let mut buf = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or_else(|| invalid("not a sharded listen checkpoint (version 1)"))?;
        let truncated = || invalid("truncated");
        if buf.remaining() < 20 {
            return Err(truncated());
        }
        let query = buf.get_u64_le();
        let read_time = Timestamp {
            seconds: buf.get_i64_le(),
            nanos: buf.get_i32_le(),
        };
        let count = |buf: &mut &[u8]| -> Result<usize> {
            let n = decode_varint(buf).map_err(|_| truncated())?;
            // Each counted item takes at least a byte: a larger count is corrupt, not a
            // reason to reserve memory.
            usize::try_from(n)
                .ok()
                .filter(|n| *n <= buf.remaining())
                .ok_or_else(truncated)
        };
        let targets = count(&mut buf)?;
        let mut checkpoint = ListenCheckpoint {
            query,
            read_time,
            targets: Vec::with_capacity(targets),
        };
        for _ in 0..targets {
            let id = decode_varint(&mut buf).map_err(|_| truncated())?;
            // The protocol's target ids are positive int32s: 0 asks the server to choose one,
            // which it never reports as current (a listener that waits for ever).
            let id = i32::try_from(id)
                .ok()
                .filter(|id| *id > 0)
                .ok_or_else(|| invalid("a target id out of range"))?;
            if checkpoint.targets.iter().any(|target| target.id == id) {
                return Err(invalid("two targets with one id"));
            }
            let token = count(&mut buf)?;
            let resume_token = buf[..token].to_vec();
            buf.advance(token);
            let documents = count(&mut buf)?;
            let documents = (0..documents)
                .map(|_| {
                    Document::decode_length_delimited(&mut buf).map_err(|_| invalid("a document"))
                })
                .collect::<Result<Vec<_>>>()?;
            checkpoint.targets.push(TargetCheckpoint {
                id,
                resume_token,
                documents,
            });
        }
        if buf.has_remaining() {
            return Err(invalid("bytes after the last target"));
        }
        Ok(checkpoint)
    }
}

/// What identifies a query's targets across processes: the database and every chunk's query
/// (FNV-1a over their encoding, stable across builds, unlike `std`'s hasher).
pub(super) fn fingerprint(database: &str, queries: &[StructuredQuery]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    feed(database.as_bytes());
    for query in queries {
        feed(&query.encode_length_delimited_to_vec());
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn random(rng: &mut StdRng) -> ListenCheckpoint {
        let targets = (0..rng.random_range(0..6))
            .map(|_| TargetCheckpoint {
                id: rng.random_range(1..i32::MAX),
                resume_token: (0..rng.random_range(0..40)).map(|_| rng.random()).collect(),
                documents: (0..rng.random_range(0..5))
                    .map(|n| Document {
                        name: format!("projects/p/databases/(default)/documents/c/{n}"),
                        update_time: Some(Timestamp {
                            seconds: rng.random(),
                            nanos: rng.random_range(0..1_000_000_000),
                        }),
                        ..Default::default()
                    })
                    .collect(),
            })
            .collect();
        ListenCheckpoint {
            query: rng.random(),
            read_time: Timestamp {
                seconds: rng.random(),
                nanos: rng.random_range(0..1_000_000_000),
            },
            targets,
        }
    }

    #[test]
    fn bytes_round_trip() {
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..500 {
            let checkpoint = random(&mut rng);
            let bytes = checkpoint.to_bytes();
            assert_eq!(ListenCheckpoint::from_bytes(&bytes).unwrap(), checkpoint);
        }
    }

    /// Target ids that are not positive `int32`s, or that repeat, are refused: 0 had the
    /// server choose an id the listener never saw become current, and ids from 2^31 up were
    /// read as negative.
    #[test]
    fn target_ids_out_of_range_or_repeated_are_refused() {
        let with_ids = |ids: &[u64]| {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&7u64.to_le_bytes());
            bytes.extend_from_slice(&1i64.to_le_bytes());
            bytes.extend_from_slice(&0i32.to_le_bytes());
            encode_varint(ids.len() as u64, &mut bytes);
            for id in ids {
                encode_varint(*id, &mut bytes);
                encode_varint(0, &mut bytes);
                encode_varint(0, &mut bytes);
            }
            ListenCheckpoint::from_bytes(&bytes)
        };
        let ids = |checkpoint: ListenCheckpoint| -> Vec<i32> {
            checkpoint.targets.iter().map(|target| target.id).collect()
        };
        assert_eq!(ids(with_ids(&[1, 2, 3]).unwrap()), [1, 2, 3]);
        assert_eq!(ids(with_ids(&[i32::MAX as u64]).unwrap()), [i32::MAX]);
        for bad in [
            &[0][..],
            &[1 << 31],
            &[u64::from(u32::MAX)],
            &[1 << 40],
            &[2, 2],
            &[1, 3, 1],
        ] {
            assert!(
                matches!(with_ids(bad), Err(Error::InvalidCheckpoint(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn every_prefix_and_any_garbage_is_refused_without_panicking() {
        let mut rng = StdRng::seed_from_u64(2);
        for _ in 0..50 {
            let bytes = random(&mut rng).to_bytes();
            for cut in 0..bytes.len() {
                assert!(
                    ListenCheckpoint::from_bytes(&bytes[..cut]).is_err(),
                    "{cut}"
                );
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(ListenCheckpoint::from_bytes(&longer).is_err());
            let mut garbage = bytes.clone();
            for _ in 0..4 {
                let at = rng.random_range(0..garbage.len());
                garbage[at] = rng.random();
            }
            let _ = ListenCheckpoint::from_bytes(&garbage);
        }
    }
}
