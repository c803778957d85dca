//! A tracked part's checkpoint in Datastore mode: an entity of a kind of the job's (named by
//! the part's id, at the top of the client's namespace), the checkpoint in one unindexed
//! property as JSON.

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Datastore;
use crate::error::{Error, Result};
use crate::job::stored_checkpoint::CheckpointStore;

/// The property the checkpoint is kept in.
const PROGRESS_PROPERTY: &str = "progress";

/// The checkpoints of the parts of one kind of job.
pub(super) struct EntityCheckpoints<'a> {
    pub(super) datastore: &'a Datastore,
    /// The kind the parts' entities are of.
    pub(super) kind: &'static str,
}

impl EntityCheckpoints<'_> {
    fn key(&self, id: &str) -> ds::Key {
        ds::Key {
            partition_id: Some(self.datastore.partition.clone()),
            path: vec![ds::key::PathElement {
                kind: self.kind.to_owned(),
                id_type: Some(ds::key::path_element::IdType::Name(id.to_owned())),
            }],
        }
    }

    async fn read_state<C: DeserializeOwned>(&self, id: &str) -> Result<Option<C>> {
        let answer = self.datastore.lookup(vec![self.key(id)], None).await?;
        let Some(entity) = answer.found.into_iter().find_map(|found| found.entity) else {
            return Ok(None);
        };
        match entity
            .properties
            .get(PROGRESS_PROPERTY)
            .and_then(|value| value.value_type.as_ref())
        {
            Some(ds::value::ValueType::StringValue(json)) => serde_json::from_str(json)
                .map(Some)
                .map_err(|err| Error::InvalidCheckpoint(format!("{id}: {err}"))),
            _ => Err(Error::InvalidCheckpoint(format!(
                "{} `{id}` holds no `{PROGRESS_PROPERTY}`",
                self.kind
            ))),
        }
    }

    async fn write_state<C: Serialize>(&self, id: &str, state: &C) -> Result<()> {
        let json = serde_json::to_string(state)
            .map_err(|err| Error::InvalidCheckpoint(err.to_string()))?;
        let entity = ds::Entity {
            key: Some(self.key(id)),
            properties: [(
                PROGRESS_PROPERTY.to_owned(),
                ds::Value {
                    value_type: Some(ds::value::ValueType::StringValue(json)),
                    exclude_from_indexes: true,
                    ..Default::default()
                },
            )]
            .into(),
        };
        self.datastore
            .commit(
                vec![ds::Mutation {
                    operation: Some(ds::mutation::Operation::Upsert(entity)),
                    ..Default::default()
                }],
                None,
            )
            .await
            .map(drop)
    }
}

impl<C: Serialize + DeserializeOwned + Send + Sync + 'static> CheckpointStore<C>
    for EntityCheckpoints<'_>
{
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<C>>> {
        Box::pin(self.read_state(id))
    }
    fn write<'a>(&'a self, id: &'a str, state: &'a C) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.write_state(id, state))
    }
}
