//! A sharded query's count and sum in Datastore mode: one aggregation query per chunk, at
//! the first chunk's read time, the chunks' values added up as Native mode adds them.

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use firestore::gcloud_sdk::prost_types::Timestamp;

use super::filter::{at, property};
use super::{Kind, status_error};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::query::plan::QueryPlan;
use crate::query::{Number, NumericField, Reach, ShardedQuery, Summable, SummedOver, Window};

impl<T: Sharded> Kind<T> {
    /// How many entities `query` matches (at most its limit): the chunks' counts added up,
    /// each a Datastore count aggregation.
    pub async fn count<const QUERY: u64, R: Reach, W: Window>(
        &self,
        query: &ShardedQuery<T, QUERY, R, W>,
    ) -> Result<u64> {
        use ds::aggregation_query::aggregation::{Count, Operator};
        let plan = self.plan(query)?;
        let up_to = plan.limit.map(i64::from);
        let counts = self
            .aggregate(&plan, Operator::Count(Count { up_to }))
            .await?;
        let mut total: u64 = 0;
        for count in counts {
            match count.value_type {
                Some(ds::value::ValueType::IntegerValue(n)) => {
                    total += u64::try_from(n).unwrap_or_default()
                }
                other => {
                    return Err(Error::UnexpectedAnswer(format!(
                        "a count answered as {other:?}"
                    )));
                }
            }
        }
        Ok(match plan.limit {
            Some(limit) => total.min(u64::from(limit)),
            None => total,
        })
    }

    /// The sum of `field` over every entity `query` matches: the chunks' sums added up, exact
    /// while every one is an integer and their total fits an `i64` (a partial total past it
    /// that later chunks bring back stays exact), a double otherwise.
    pub async fn sum<const QUERY: u64, R: Reach, W, S: SummedOver<QUERY>>(
        &self,
        query: &ShardedQuery<T, QUERY, R, W>,
        field: NumericField<T, S>,
    ) -> Result<Number>
    where
        W: Window + Summable<S>,
    {
        use ds::aggregation_query::aggregation::{Operator, Sum};
        let plan = self.plan(query)?;
        let property = property(field.path())?;
        let sums = self
            .aggregate(
                &plan,
                Operator::Sum(Sum {
                    property: Some(ds::PropertyReference { name: property }),
                }),
            )
            .await?;
        // Added as Firestore totals them: integers exactly, whatever the chunks' order.
        let parts = sums
            .into_iter()
            .map(|sum| match sum.value_type {
                Some(ds::value::ValueType::IntegerValue(n)) => Ok(Number::Integer(n)),
                Some(ds::value::ValueType::DoubleValue(d)) => Ok(Number::Double(d)),
                other => Err(Error::UnexpectedAnswer(format!(
                    "a sum answered as {other:?}"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Number::total(parts))
    }

    /// `operator` over each chunk query (ordered by the order property alone, as the
    /// unsharded query's aggregation reads), at one read time: each chunk's one value.
    async fn aggregate(
        &self,
        plan: &QueryPlan,
        operator: ds::aggregation_query::aggregation::Operator,
    ) -> Result<Vec<ds::Value>> {
        let mut values = Vec::with_capacity(plan.chunks.len());
        let mut read_time: Option<Timestamp> = None;
        for chunk in &plan.chunks {
            let nested = self.chunk_query(plan, *chunk, false, None, Vec::new())?;
            let request = ds::RunAggregationQueryRequest {
                project_id: self.datastore.partition.project_id.clone(),
                database_id: self.datastore.partition.database_id.clone(),
                partition_id: Some(self.datastore.partition.clone()),
                read_options: at(read_time),
                query_type: Some(
                    ds::run_aggregation_query_request::QueryType::AggregationQuery(
                        ds::AggregationQuery {
                            aggregations: vec![ds::aggregation_query::Aggregation {
                                alias: "value".into(),
                                operator: Some(operator.clone()),
                            }],
                            query_type: Some(ds::aggregation_query::QueryType::NestedQuery(nested)),
                        },
                    ),
                ),
                ..Default::default()
            };
            let batch = self
                .datastore
                .client
                .get()
                .run_aggregation_query(request)
                .await
                .map_err(status_error)?
                .into_inner()
                .batch
                .ok_or_else(|| {
                    Error::UnexpectedAnswer("an aggregation answered no batch".into())
                })?;
            read_time = read_time.or(batch.read_time);
            let value = batch
                .aggregation_results
                .into_iter()
                .next()
                .and_then(|mut result| result.aggregate_properties.remove("value"))
                .ok_or_else(|| {
                    Error::UnexpectedAnswer("an aggregation without its value".into())
                })?;
            values.push(value);
        }
        Ok(values)
    }
}
