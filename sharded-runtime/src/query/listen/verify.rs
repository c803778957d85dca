//! A target the server sent afresh (a reset), checked against its query at the read time the
//! server declared it consistent at.
//!
//! Measured on the emulator: after a reset it may declare a target current, and every target
//! consistent, in the middle of the resend (RESET, 21 documents, RESET, 19 documents, CURRENT,
//! NO_CHANGE, then the other 21), so a snapshot would show 19 of 40. The Firebase SDKs guard
//! against a server's view and their own drifting apart with existence filters and limbo
//! resolution (reading a document that leaves a view without a reason). Here the check is a
//! count of the query at that read time (one read per thousand matches; none for a limited
//! target that holds its limit), and only when it differs, the query's documents, which
//! replace what the stream said. The reads are retried after transient failures, each given
//! the listener's idle timeout; if they still fail, or one is silent, the target is listened
//! to afresh.

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, RunAggregationQueryRequest, RunQueryRequest, StructuredAggregationQuery,
    StructuredQuery, run_aggregation_query_request, run_query_request,
    structured_aggregation_query::{self, Aggregation, aggregation},
    value::ValueType,
};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::gcloud_sdk::tonic::{Request, Status};
use futures::TryStreamExt;

use super::connection::{Connection, retried};
use super::targets::ChunkTargets;
use crate::wire::retry::Backoff;

/// Checks each target in `reset` against its query at `read_time`: its count, and when that
/// differs from what the stream left it with, its documents, which replace those.
pub(super) async fn check_resets(
    connection: &Connection,
    parent: &str,
    targets: &mut ChunkTargets,
    read_time: Timestamp,
    reset: &[i32],
    backoff: Backoff,
    silence: Option<std::time::Duration>,
) -> Result<(), Status> {
    for &id in reset {
        let Some(query) = targets.find(id).map(|target| target.query.clone()) else {
            continue;
        };
        let held = targets.committed_len(id);
        // A limited target holding its limit is complete: there is no more to hold.
        if query
            .limit
            .is_some_and(|limit| held >= limit.max(0) as usize)
        {
            continue;
        }
        if retried(backoff, silence, || {
            count_at(connection, parent, &query, read_time)
        })
        .await?
            == held
        {
            continue;
        }
        let documents = retried(backoff, silence, || {
            documents_at(connection, parent, &query, read_time)
        })
        .await?;
        tracing::debug!(
            target = id,
            held,
            read = documents.len(),
            "sharded listener corrects a target declared consistent mid-resend"
        );
        targets.correct(id, documents);
    }
    Ok(())
}

/// Attempts of each check's read: a check that fails makes the target start over, so it is
/// worth a few.
pub(crate) const ATTEMPTS: u32 = 5;

/// How many documents `query` matches at `read_time` (at most its limit).
async fn count_at(
    connection: &Connection,
    parent: &str,
    query: &StructuredQuery,
    read_time: Timestamp,
) -> Result<usize, Status> {
    let request = RunAggregationQueryRequest {
        parent: parent.to_owned(),
        query_type: Some(
            run_aggregation_query_request::QueryType::StructuredAggregationQuery(
                StructuredAggregationQuery {
                    aggregations: vec![Aggregation {
                        alias: "n".to_owned(),
                        operator: Some(aggregation::Operator::Count(aggregation::Count {
                            up_to: None,
                        })),
                    }],
                    query_type: Some(structured_aggregation_query::QueryType::StructuredQuery(
                        query.clone(),
                    )),
                },
            ),
        ),
        consistency_selector: Some(
            run_aggregation_query_request::ConsistencySelector::ReadTime(read_time),
        ),
        ..Default::default()
    };
    let responses: Vec<_> = connection
        .get()
        .run_aggregation_query(Request::new(request))
        .await?
        .into_inner()
        .try_collect()
        .await?;
    let count = responses
        .iter()
        .filter_map(|response| response.result.as_ref())
        .filter_map(|result| result.aggregate_fields.get("n"))
        .find_map(|value| match value.value_type {
            Some(ValueType::IntegerValue(n)) => usize::try_from(n).ok(),
            _ => None,
        });
    count.ok_or_else(|| Status::internal("a count query answered without its count"))
}

/// The documents `query` matches at `read_time`.
async fn documents_at(
    connection: &Connection,
    parent: &str,
    query: &StructuredQuery,
    read_time: Timestamp,
) -> Result<Vec<Document>, Status> {
    let request = RunQueryRequest {
        parent: parent.to_owned(),
        query_type: Some(run_query_request::QueryType::StructuredQuery(query.clone())),
        consistency_selector: Some(run_query_request::ConsistencySelector::ReadTime(read_time)),
        ..Default::default()
    };
    let responses: Vec<_> = connection
        .get()
        .run_query(Request::new(request))
        .await?
        .into_inner()
        .try_collect()
        .await?;
    Ok(responses
        .into_iter()
        .filter_map(|response| response.document)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::checkpoint::TargetCheckpoint;
    use super::*;
    use firestore::FirestoreQueryParams;
    use std::time::{Duration, SystemTime};

    fn names(targets: &ChunkTargets, id: i32) -> Vec<String> {
        targets
            .committed_versions(id)
            .into_iter()
            .map(|(name, _)| name.rsplit('/').next().unwrap().to_owned())
            .collect()
    }

    /// A target the stream left with 2 of the 4 documents its query matches is corrected
    /// from the query at the read time; one that holds them all is left as it is.
    #[tokio::test]
    async fn a_reset_target_short_of_its_query_is_corrected_at_the_read_time() {
        let emulator = sharded_emulator::emulator::Emulator::start().await.unwrap();
        let db = emulator.db("listen-verify").await.unwrap();
        for n in 0..6i64 {
            db.fluent()
                .update()
                .in_col("verify")
                .document_id(format!("d{n}"))
                .object(&serde_json::json!({ "n": n }))
                .execute::<serde_json::Value>()
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut read_time = Timestamp::from(SystemTime::now() - Duration::from_millis(10));
        read_time.nanos -= read_time.nanos % 1000;
        // A later write the read time must not see.
        db.fluent()
            .delete()
            .from("verify")
            .document_id("d0")
            .execute()
            .await
            .unwrap();
        let query = StructuredQuery::try_from(
            FirestoreQueryParams::new("verify".into())
                .with_order_by(vec![firestore::FirestoreQueryOrder::new(
                    "n".into(),
                    firestore::FirestoreQueryDirection::Ascending,
                )])
                .with_limit(4),
        )
        .unwrap();
        let stored = |names: &[&str]| -> Vec<Document> {
            names
                .iter()
                .map(|name| Document {
                    name: crate::model::document_path::document_name(
                        db.get_documents_path(),
                        None,
                        "verify",
                        name,
                    ),
                    ..Default::default()
                })
                .collect()
        };
        let root = db.get_documents_path().clone();
        let mut targets = ChunkTargets::new(vec![query]);
        targets.restore(vec![TargetCheckpoint {
            id: 1,
            resume_token: vec![1],
            documents: stored(&["d0", "d1"]),
        }]);
        check_resets(
            db.client(),
            &root,
            &mut targets,
            read_time,
            &[1],
            Backoff::default(),
            None,
        )
        .await
        .unwrap();
        assert_eq!(names(&targets, 1), ["d0", "d1", "d2", "d3"]);

        // Complete already: nothing is read, nothing replaced.
        let mut targets = ChunkTargets::new(vec![targets.find(1).unwrap().query.clone()]);
        targets.restore(vec![TargetCheckpoint {
            id: 1,
            resume_token: vec![1],
            documents: stored(&["d0", "d1", "d2", "x"]),
        }]);
        check_resets(
            db.client(),
            &root,
            &mut targets,
            read_time,
            &[1],
            Backoff::default(),
            None,
        )
        .await
        .unwrap();
        assert_eq!(names(&targets, 1), ["d0", "d1", "d2", "x"]);
    }
}
