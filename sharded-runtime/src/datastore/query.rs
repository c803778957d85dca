//! A sharded query's plan sent as Datastore queries: each chunk query (its shard values as
//! `shard IN [...]`, the query's filters, the ancestor of its scope) ordered by the order
//! property, the range properties and `__key__` in the query's direction, then merged here in
//! the order Native mode merges in. Every chunk after the first reads at the first one's read
//! time, so the chunks see one state of the database.

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use firestore::gcloud_sdk::google::firestore::v1::Document;
use firestore::gcloud_sdk::prost_types::Timestamp;

use super::convert;
use super::cursor::{ChunkPosition, DatastoreCursor, plan_digest};
use super::filter::{ancestor, and, at, filter, int32_limit, is_empty, property, property_order};
use super::{Kind, status_error};
use crate::error::{Error, Result};
use crate::model::handle::Scope;
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;
use crate::query::plan::{Chunk, QueryPlan};
use crate::query::{Reach, ShardedQuery, Window};

/// One page of a query and where the next one starts.
#[derive(Debug, Clone)]
pub struct DatastorePage<T> {
    /// The entities, in the query's order.
    pub items: Vec<Stored<T>>,
    /// Where the next page starts; `None` after the last one.
    pub next: Option<DatastoreCursor>,
}

/// An entity's key as the runtime names it: its id (a numeric one as `__id<N>__`) and its
/// ancestor's path below the root (`Room/lobby`), if any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntityKey {
    /// The id: the key's name, or `__id<N>__` for a numeric one.
    pub id: String,
    /// The ancestor's path below the root, for a kind under parents.
    pub parent: Option<String>,
}

/// What one chunk query read: its entities with the cursor after each, and whether it has
/// nothing more.
pub(super) struct ChunkRead {
    pub(super) entities: Vec<(Document, Vec<u8>)>,
    pub(super) exhausted: bool,
}

impl<T: Sharded> Kind<T> {
    /// Every entity `query` matches, in its order (with its limit, if any): what the same
    /// query on an unsharded kind returns.
    pub async fn fetch<const QUERY: u64, R: Reach, W: Window>(
        &self,
        query: &ShardedQuery<T, QUERY, R, W>,
    ) -> Result<Vec<Stored<T>>> {
        let plan = self.plan(query)?;
        self.fetch_documents(&plan, false)
            .await?
            .iter()
            .map(Stored::from_document)
            .collect()
    }

    /// Every chunk query read to the plan's limit, merged into the query's order; only the
    /// order and range properties of each entity when `projected`.
    async fn fetch_documents(&self, plan: &QueryPlan, projected: bool) -> Result<Vec<Document>> {
        let start = vec![ChunkPosition::Start; plan.chunks.len()];
        let reads = self
            .read_chunks(plan, plan.limit, &start, projected)
            .await?;
        let lists = reads
            .into_iter()
            .map(|read| read.entities.into_iter().map(|(doc, _)| doc).collect())
            .collect();
        let order = document_order(plan);
        let mut merged =
            crate::query::merge_sorted(lists, plan.limit.map(|l| l as usize), |a, b| {
                order.compare(a, b)
            });
        // Read backwards from the end (`limit_to_last`): the query's last entities, reversed
        // into its order, as the Firebase SDKs answer it.
        if plan.ends_before {
            merged.reverse();
        }
        Ok(merged)
    }

    /// The keys of every entity `query` matches, in its order (with its limit, if any), each
    /// its id and its ancestor's path: a projection query of the order property (and the
    /// range properties), which each chunk's index holds, so that no entity is read whole, as
    /// the best-practices page advises for a read that needs the keys alone. (A keys-only
    /// query could not be merged across chunks: the merge orders by those properties.)
    pub async fn fetch_keys<const QUERY: u64, R: Reach, W: Window>(
        &self,
        query: &ShardedQuery<T, QUERY, R, W>,
    ) -> Result<Vec<EntityKey>> {
        let plan = self.plan(query)?;
        Ok(self
            .fetch_documents(&plan, true)
            .await?
            .iter()
            .map(|document| {
                let path = crate::model::document_path::DocumentPath::parse(&document.name);
                EntityKey {
                    id: path.id().to_owned(),
                    parent: path.parent().map(str::to_owned),
                }
            })
            .collect())
    }

    /// At most `limit` entities of `query` from `after` (the previous page's
    /// [`next`](DatastorePage::next); `None` for the first page). Each chunk query continues
    /// from Datastore's own cursor after the last entity a page took from it: no offset, no
    /// entity read twice or skipped, whatever the ties.
    pub async fn page<const QUERY: u64, R: Reach>(
        &self,
        query: &ShardedQuery<T, QUERY, R>,
        limit: u32,
        after: Option<&DatastoreCursor>,
    ) -> Result<DatastorePage<T>> {
        if limit == 0 {
            return Err(Error::InvalidQuery(
                "a page of 0 entities asks for nothing".into(),
            ));
        }
        let plan = self.plan(query)?;
        if plan.ends_before {
            return Err(Error::InvalidQuery(
                "a query read backwards from its end (`limit_to_last`) has no pages in Datastore mode: fetch it, or page the query in the other direction".into(),
            ));
        }
        let digest = plan_digest(&plan.to_string());
        let positions = match after {
            Some(cursor) => {
                cursor.check(&digest, plan.chunks.len())?;
                cursor.chunks.clone()
            }
            None => vec![ChunkPosition::Start; plan.chunks.len()],
        };
        let reads = self
            .read_chunks(&plan, Some(limit), &positions, false)
            .await?;
        let exhausted: Vec<bool> = reads.iter().map(|read| read.exhausted).collect();
        let lists: Vec<Vec<(usize, Document, Vec<u8>)>> = reads
            .into_iter()
            .enumerate()
            .map(|(chunk, read)| {
                read.entities
                    .into_iter()
                    .map(|(doc, cursor)| (chunk, doc, cursor))
                    .collect()
            })
            .collect();
        let read_counts: Vec<usize> = lists.iter().map(Vec::len).collect();
        let order = document_order(&plan);
        let taken = crate::query::merge_sorted(lists, Some(limit as usize), |a, b| {
            order.compare(&a.1, &b.1)
        });
        let mut next = positions;
        let mut taken_counts = vec![0; next.len()];
        for (chunk, _, cursor) in &taken {
            taken_counts[*chunk] += 1;
            next[*chunk] = ChunkPosition::after(cursor);
        }
        for chunk in 0..next.len() {
            if exhausted[chunk] && taken_counts[chunk] == read_counts[chunk] {
                next[chunk] = ChunkPosition::Done;
            }
        }
        let items = taken
            .iter()
            .map(|(_, doc, _)| Stored::from_document(doc))
            .collect::<Result<Vec<_>>>()?;
        let done = next.iter().all(|position| *position == ChunkPosition::Done);
        Ok(DatastorePage {
            items,
            next: (!done).then_some(DatastoreCursor {
                plan: digest,
                chunks: next,
            }),
        })
    }

    /// The query's plan, in this kind's place when the query names none; refused where
    /// Datastore mode has no form of it.
    pub(super) fn plan<const QUERY: u64, R: Reach, W: Window>(
        &self,
        query: &ShardedQuery<T, QUERY, R, W>,
    ) -> Result<QueryPlan> {
        let mut query = query.clone();
        match (&self.parent, &query.scope) {
            (Some(parent), Scope::Top) => query.scope = Scope::Under(parent.clone()),
            (Some(parent), Scope::Under(other)) if parent != other => {
                return Err(Error::InvalidQuery(format!(
                    "the query reads under `{other}`, the kind is under `{parent}`"
                )));
            }
            _ => {}
        }
        let plan = query.plan()?;
        let refused = |what: &str| {
            Err(Error::InvalidQuery(format!(
                "{what} has no Datastore-mode form: continue pages with `Kind::page`'s cursor"
            )))
        };
        // `limit_to_last` reads backwards from the end, which needs no cursor; `before` a
        // document needs the document's values.
        if plan.start.is_some() || plan.end.is_some() {
            return refused("a cursor built from values (`after`, `start_at`, `end_at`, `before`)");
        }
        if plan.mask.is_some() {
            return refused("a projection (`fetch_as`)");
        }
        Ok(plan)
    }

    /// Each chunk query read from its position, at most `limit` entities each; the first
    /// alone, then the rest at its read time.
    async fn read_chunks(
        &self,
        plan: &QueryPlan,
        limit: Option<u32>,
        positions: &[ChunkPosition],
        projected: bool,
    ) -> Result<Vec<ChunkRead>> {
        // A projection of the properties the merge orders by, which every chunk's index holds.
        let projection = match projected {
            true => std::iter::once(plan.order_field)
                .chain(plan.then_by.iter().copied())
                .map(|path| {
                    Ok(ds::Projection {
                        property: Some(ds::PropertyReference {
                            name: property(path)?,
                        }),
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            false => Vec::new(),
        };
        let mut reads: Vec<Option<ChunkRead>> = positions.iter().map(|_| None).collect();
        // Set once the first chunk is read: the read time the rest read at.
        let mut read_time: Option<Option<Timestamp>> = None;
        let mut pending = Vec::new();
        for (i, (chunk, position)) in plan.chunks.iter().zip(positions).enumerate() {
            if *position == ChunkPosition::Done {
                reads[i] = Some(ChunkRead {
                    entities: Vec::new(),
                    exhausted: true,
                });
                continue;
            }
            let query = ds::Query {
                projection: projection.clone(),
                ..self.chunk_query(plan, *chunk, true, limit, position.start_cursor()?)?
            };
            match read_time {
                None => {
                    let (read, time) = self.run(query, limit, None).await?;
                    reads[i] = Some(read);
                    read_time = Some(time);
                }
                Some(_) => pending.push((i, query)),
            }
        }
        let sent = pending.into_iter().map(|(i, query)| {
            let read_time = read_time.flatten();
            async move { Ok::<_, Error>((i, self.run(query, limit, read_time).await?.0)) }
        });
        for (i, read) in futures::future::try_join_all(sent).await? {
            reads[i] = Some(read);
        }
        Ok(reads
            .into_iter()
            .map(|read| read.expect("every chunk read"))
            .collect())
    }

    /// One chunk query run to `limit` (or its end), through as many batches as Datastore
    /// answers it in; at `read_time`, or now (returned).
    pub(super) async fn run(
        &self,
        query: ds::Query,
        limit: Option<u32>,
        read_time: Option<Timestamp>,
    ) -> Result<(ChunkRead, Option<Timestamp>)> {
        let (read, exhausted, read_at) = self.run_entities(query, limit, read_time).await?;
        let root = self.datastore.documents_root();
        let entities = read
            .into_iter()
            .map(|(entity, cursor)| Ok((convert::to_document(&entity, &root)?, cursor)))
            .collect::<Result<Vec<_>>>()?;
        Ok((
            ChunkRead {
                entities,
                exhausted,
            },
            read_at,
        ))
    }

    /// [`run`](Self::run)'s entities as Datastore answers them, each with the cursor after
    /// it; whether the query has nothing more; the read time.
    pub(super) async fn run_entities(
        &self,
        mut query: ds::Query,
        limit: Option<u32>,
        read_time: Option<Timestamp>,
    ) -> Result<(Vec<(ds::Entity, Vec<u8>)>, bool, Option<Timestamp>)> {
        use ds::query_result_batch::MoreResultsType;
        let mut entities = Vec::new();
        let mut read_at = read_time;
        loop {
            let request = ds::RunQueryRequest {
                project_id: self.datastore.partition.project_id.clone(),
                database_id: self.datastore.partition.database_id.clone(),
                partition_id: Some(self.datastore.partition.clone()),
                read_options: at(read_at),
                query_type: Some(ds::run_query_request::QueryType::Query(query.clone())),
                ..Default::default()
            };
            let batch = self
                .datastore
                .client
                .get()
                .run_query(request)
                .await
                .map_err(status_error)?
                .into_inner()
                .batch
                .ok_or_else(|| Error::UnexpectedAnswer("a query answered no batch".into()))?;
            if read_at.is_none() {
                read_at = batch.read_time;
            }
            for result in batch.entity_results {
                let entity = result.entity.ok_or_else(|| {
                    Error::UnexpectedAnswer("a query result without an entity".into())
                })?;
                entities.push((entity, result.cursor));
            }
            let more = MoreResultsType::try_from(batch.more_results)
                .unwrap_or(MoreResultsType::Unspecified);
            let reached = limit.is_some_and(|limit| entities.len() >= limit as usize);
            match more {
                MoreResultsType::NotFinished if !reached => {
                    query.start_cursor = batch.end_cursor;
                    query.limit = limit.map(|limit| int32_limit(limit - entities.len() as u32));
                }
                _ => return Ok((entities, more == MoreResultsType::NoMoreResults, read_at)),
            }
        }
    }

    /// A chunk's Datastore query: kind, ancestor, filters, and the plan's order (with
    /// `__key__` last when `by_key`; an aggregation orders by the order property alone).
    pub(super) fn chunk_query(
        &self,
        plan: &QueryPlan,
        chunk: Chunk,
        by_key: bool,
        limit: Option<u32>,
        start_cursor: Vec<u8>,
    ) -> Result<ds::Query> {
        let mut filters = vec![filter(
            &plan.chunk_filter(chunk),
            &self.datastore.partition,
        )?];
        if let Some(parent) = plan.scope.parent() {
            filters.push(ancestor(parent, &self.datastore.partition));
        }
        let order = plan
            .orders
            .iter()
            .filter(|order| by_key || order.field_name != "__name__")
            .map(property_order)
            .collect::<Result<Vec<_>>>()?;
        Ok(ds::Query {
            kind: vec![ds::KindExpression {
                name: T::COLLECTION.to_owned(),
            }],
            filter: Some(and(filters)).filter(|filter| !is_empty(filter)),
            order,
            start_cursor,
            limit: limit.map(int32_limit),
            ..Default::default()
        })
    }
}

/// The order chunk results merge in: the plan's, with values compared in Datastore mode's
/// order.
fn document_order(plan: &QueryPlan) -> crate::query::plan::DocumentOrder {
    plan.document_order()
        .comparing_values_by(super::value_order::compare_values)
}
