//! `find_nearest`: Firestore's vector search over every shard, merged by distance.
//!
//! A vector search pre-filters by equality: each shard value is one request, `shard == v` and
//! the query's own equality filters, served by the vector index the plan holds (the shard
//! field, the query's fields, the vector field). Each returns its `limit` nearest; the nearest
//! `limit` of all of them are the unsharded search's, since every one of those is among the
//! nearest of its own shard value.

use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};
use firestore::{
    FirestoreDb, FirestoreFindNearestDistanceMeasure, FirestoreFindNearestOptions, FirestoreVector,
};
use tracing::Instrument as _;

use super::fetch::begin_requests;
use super::plan::Chunk;
use super::spans::{chunk_span, query_span};
use super::{Reach, ShardedQuery, Window};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;

/// A Rust type stored as a Firestore vector: what `#[sharded(vector(dimension = n))]` takes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not stored as a Firestore vector",
    label = "a `vector` field's type",
    note = "`#[sharded(vector(dimension = n))]` takes the firestore crate's `FirestoreVector` (`sharded_runtime::firestore::FirestoreVector`), which Firestore stores as a vector value"
)]
pub trait VectorValue {}

impl VectorValue for FirestoreVector {}

/// A vector field of `T` (`T::vectors().embedding`), to pass to
/// [`find_nearest`](crate::query::ShardedQuery::find_nearest): its path and dimension, declared by
/// `#[sharded(vector(dimension = n))]`, whose vector indexes the plan holds.
pub struct VectorField<T> {
    path: &'static str,
    dimension: u32,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T> VectorField<T> {
    /// The stored field path.
    pub fn path(&self) -> &'static str {
        self.path
    }

    /// The number of values in each of its vectors.
    pub fn dimension(&self) -> u32 {
        self.dimension
    }
}

impl<T> Clone for VectorField<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for VectorField<T> {}

impl<T> std::fmt::Debug for VectorField<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("VectorField")
            .field(&self.path)
            .field(&self.dimension)
            .finish()
    }
}

/// The vector field `path` of `T`, of type `V`, `dimension` numbers long: what the derive's
/// `T::vectors()` is made of. `V: VectorValue` is what refuses a `vector` field that is not
/// a vector, on the field's type.
pub fn vector_field<T, V: VectorValue>(path: &'static str, dimension: u32) -> VectorField<T> {
    VectorField {
        path,
        dimension,
        marker: std::marker::PhantomData,
    }
}

/// Firestore's most neighbors in one vector search.
pub const MAX_NEIGHBORS: u32 = 1000;

/// Where each returned document carries its distance: a name in the library's reserved
/// `_sharded` prefix, taken off before the document is read as `T`.
const DISTANCE_FIELD: &str = "_sharded_distance";

/// A document a vector search found, with its distance from the query vector (for
/// `DotProduct`, the dot product: larger is nearer).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Neighbor<T> {
    /// The document, with its id and shard.
    pub item: Stored<T>,
    /// Its distance from the query vector by the search's measure.
    pub distance: f64,
}

pub(super) async fn find_nearest<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    field: VectorField<T>,
    vector: &[f64],
    limit: u32,
    measure: FirestoreFindNearestDistanceMeasure,
) -> Result<Vec<Neighbor<T>>> {
    let path = field.path();
    if vector.len() != field.dimension() as usize {
        return Err(Error::InvalidQuery(format!(
            "`{path}` holds vectors of {} numbers, and the query vector has {}",
            field.dimension(),
            vector.len()
        )));
    }
    if !(1..=MAX_NEIGHBORS).contains(&limit) {
        return Err(Error::InvalidQuery(format!(
            "a vector search returns 1 to {MAX_NEIGHBORS} neighbors, not {limit}"
        )));
    }
    if !query.plain_equality() {
        return Err(Error::InvalidQuery(
            "a vector search pre-filters by equality alone: its query takes no range, filter, `in`, OR, projection, limit or cursor (the search's own limit is its third argument)".into(),
        ));
    }
    let span = query_span::<T, QUERY>("find_nearest");
    async {
        let mut plan = query.plan()?;
        // One shard value per request, compared by equality (`chunk_filter`'s `not-in` form):
        // a vector search pre-filters by equality alone.
        plan.shard_by_equality = true;
        let singles: Vec<Chunk> = plan
            .chunks
            .iter()
            .flat_map(|chunk| chunk.shards.chunks(1).map(|shard| chunk.with_shards(shard)))
            .collect();
        let snapshot = begin_requests::<T>(db, &plan, &span, singles.len()).await?;
        let options = FirestoreFindNearestOptions {
            field_name: path.to_owned(),
            query_vector: FirestoreVector(vector.to_vec()),
            distance_measure: measure.clone(),
            neighbors_limit: limit,
            distance_result_field: Some(DISTANCE_FIELD.to_owned()),
            distance_threshold: None,
        };
        let found = futures::future::try_join_all(singles.iter().enumerate().map(|(i, single)| {
            let filter = plan.chunk_filter(*single);
            let select = plan
                .scope
                .select(
                    snapshot.db(),
                    snapshot.db().fluent().select().from(plan.collection),
                )
                .filter(move |_| Some(filter.clone()))
                .find_nearest_with_options(options.clone());
            async move {
                crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, || {
                    select.clone().query()
                })
                .await
            }
            .instrument(chunk_span(i, *single))
        }))
        .await;
        snapshot.release();
        let mut found: Vec<(f64, Document)> = found?
            .into_iter()
            .flatten()
            .map(|mut document| {
                let distance = match document.fields.remove(DISTANCE_FIELD) {
                    Some(value) => match value.value_type {
                        Some(ValueType::DoubleValue(d)) => d,
                        Some(ValueType::IntegerValue(i)) => i as f64,
                        _ => f64::NAN,
                    },
                    None => f64::NAN,
                };
                (distance, document)
            })
            .collect();
        if found.iter().any(|(distance, _)| distance.is_nan()) {
            return Err(Error::UnexpectedAnswer(
                "a vector search returned a document without its distance".into(),
            ));
        }
        let nearer_first = !matches!(measure, FirestoreFindNearestDistanceMeasure::DotProduct);
        found.sort_by(|(a, x), (b, y)| {
            let by_distance = match nearer_first {
                true => a.total_cmp(b),
                false => b.total_cmp(a),
            };
            by_distance.then_with(|| x.name.cmp(&y.name))
        });
        found.truncate(limit as usize);
        span.record("documents_read", found.len());
        found
            .into_iter()
            .map(|(distance, document)| {
                Ok(Neighbor {
                    item: Stored::from_document(&document)?,
                    distance,
                })
            })
            .collect()
    }
    .instrument(span.clone())
    .await
}
