//! Where a page of a sharded query ends in Datastore mode: for each chunk query, the cursor
//! Datastore gave after the last entity the page took from it (Datastore's own cursors, never
//! an offset), or that the chunk has nothing more. Bound to the plan it came from, so that it
//! cannot continue another query.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Where the next page of a query starts: pass it back to the same query's
/// [`Kind::page`](super::Kind::page). [`to_token`](Self::to_token) and
/// [`from_token`](Self::from_token) carry it through a URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatastoreCursor {
    /// A digest of the plan's text: the query it continues.
    pub(super) plan: String,
    pub(super) chunks: Vec<ChunkPosition>,
}

/// How far one chunk query has been read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum ChunkPosition {
    /// Nothing taken from it yet.
    Start,
    /// Continues after Datastore's cursor (its bytes, base64url).
    After(String),
    /// Read to its end.
    Done,
}

impl ChunkPosition {
    pub(super) fn after(cursor: &[u8]) -> ChunkPosition {
        ChunkPosition::After(URL_SAFE_NO_PAD.encode(cursor))
    }

    /// The Datastore cursor the chunk query starts at (empty: at its start).
    pub(super) fn start_cursor(&self) -> Result<Vec<u8>> {
        match self {
            ChunkPosition::After(cursor) => URL_SAFE_NO_PAD
                .decode(cursor)
                .map_err(|error| Error::InvalidCursor(error.to_string())),
            ChunkPosition::Start | ChunkPosition::Done => Ok(Vec::new()),
        }
    }
}

impl DatastoreCursor {
    /// The cursor as URL-safe text.
    pub fn to_token(&self) -> String {
        crate::wire::token::encode(self)
    }

    /// The cursor `token` ([`to_token`](Self::to_token)) stands for.
    pub fn from_token(token: &str) -> Result<DatastoreCursor> {
        crate::wire::token::decode(token).map_err(Error::InvalidCursor)
    }

    /// Refuses a cursor of another query, or of the same query planned into other chunks.
    pub(super) fn check(&self, plan: &str, chunks: usize) -> Result<()> {
        if self.plan != plan || self.chunks.len() != chunks {
            return Err(Error::InvalidCursor(
                "the cursor is another query's: continue a query with the cursor of its own last page".into(),
            ));
        }
        Ok(())
    }
}

/// The digest a cursor binds its plan by.
pub(super) fn plan_digest(plan: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(plan.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_survives_its_token_and_refuses_another_plan() {
        let cursor = DatastoreCursor {
            plan: plan_digest("a"),
            chunks: vec![
                ChunkPosition::Start,
                ChunkPosition::after(&[0, 1, 255]),
                ChunkPosition::Done,
            ],
        };
        let back = DatastoreCursor::from_token(&cursor.to_token()).unwrap();
        assert_eq!(back, cursor);
        assert_eq!(back.chunks[1].start_cursor().unwrap(), [0, 1, 255]);
        assert!(back.check(&plan_digest("a"), 3).is_ok());
        assert!(back.check(&plan_digest("b"), 3).is_err());
        assert!(back.check(&plan_digest("a"), 2).is_err());
        assert!(DatastoreCursor::from_token("!").is_err());
    }
}
