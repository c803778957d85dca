//! A plan in words: each chunk query as Firestore receives it, and the indexes that serve it.

use std::fmt;

use firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use firestore::{
    FirestoreQueryDirection, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryFilterCompositeOperator,
};
use sharded_indexes::{Direction, QueryScope};

use super::QueryPlan;
use crate::model::handle::Scope;

impl fmt::Display for QueryPlan {
    /// One line for where the query reads and how its chunks merge, one per chunk query
    /// (its filter, order, cursor, and limit when it is one query), one per index need.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.scope {
            Scope::Top => format!("collection `{}`", self.collection),
            Scope::Under(parent) => format!("collection `{}` under `{parent}`", self.collection),
            Scope::Group => format!("collection group `{}`", self.collection),
        };
        let queries = match (self.chunks.len(), self.limit) {
            (1, _) => "1 query".to_owned(),
            (n, None) => format!("{n} chunk queries merged by the order below"),
            (n, Some(limit)) => format!(
                "{n} chunk queries merged by the order below, the first {limit} of the merge kept (each chunk asked for its share of them, and for more in rounds while the merge needs it)"
            ),
        };
        writeln!(f, "{place}: {queries}")?;
        if self.ends_before {
            writeln!(
                f,
                "  read backwards from the `before` cursor, documents then reversed"
            )?;
        }
        for (i, chunk) in self.chunks.iter().enumerate() {
            write!(f, "  #{}: WHERE ", i + 1)?;
            write_filter(f, &self.chunk_filter(*chunk), false)?;
            write!(f, " ORDER BY ")?;
            for (k, order) in self.orders.iter().enumerate() {
                let direction = match order.direction {
                    FirestoreQueryDirection::Ascending => "ASC",
                    FirestoreQueryDirection::Descending => "DESC",
                };
                let comma = if k == 0 { "" } else { ", " };
                write!(f, "{comma}{} {direction}", order.field_name)?;
            }
            for (cursor, inclusive, exclusive) in [
                (&self.start, " START AT (", " START AFTER ("),
                (&self.end, " END AT (", " END BEFORE ("),
            ] {
                let Some(cursor) = cursor else { continue };
                write!(
                    f,
                    "{}",
                    if cursor.inclusive {
                        inclusive
                    } else {
                        exclusive
                    }
                )?;
                for value in &cursor.values {
                    write_value(f, value)?;
                    write!(f, ", ")?;
                }
                let parent = cursor
                    .parent
                    .as_deref()
                    .map_or(String::new(), |p| format!("{p}/"));
                write!(f, "{parent}{}/{})", self.collection, cursor.id)?;
            }
            if let (Some(limit), 1) = (self.limit, self.chunks.len()) {
                write!(f, " LIMIT {limit}")?;
            }
            if let Some(mask) = &self.mask {
                write!(f, " SELECT {}", mask.join(", "))?;
            }
            writeln!(f)?;
        }
        for need in &self.index_needs {
            let scope = match need.query_scope {
                QueryScope::Collection => "COLLECTION",
                QueryScope::CollectionGroup => "COLLECTION_GROUP",
            };
            write!(f, "  index ({scope}): ")?;
            let mut fields: Vec<String> = need
                .equalities
                .iter()
                .map(|field| format!("{field} ASC"))
                .collect();
            fields.extend(
                need.contains
                    .iter()
                    .map(|field| format!("{field} CONTAINS")),
            );
            fields.extend(need.orders.iter().map(|(field, direction)| {
                let direction = match direction {
                    Direction::Ascending => "ASC",
                    Direction::Descending => "DESC",
                };
                format!("{field} {direction}")
            }));
            writeln!(f, "{}", fields.join(", "))?;
        }
        Ok(())
    }
}

/// `filter` in words; a composite inside another in parentheses.
fn write_filter(
    f: &mut fmt::Formatter<'_>,
    filter: &FirestoreQueryFilter,
    nested: bool,
) -> fmt::Result {
    use FirestoreQueryFilterCompare as C;
    match filter {
        FirestoreQueryFilter::Composite(composite) => {
            let operator = match composite.operator {
                FirestoreQueryFilterCompositeOperator::And => " AND ",
                FirestoreQueryFilterCompositeOperator::Or => " OR ",
            };
            if nested {
                write!(f, "(")?;
            }
            for (i, filter) in composite.for_all_filters.iter().enumerate() {
                if i > 0 {
                    write!(f, "{operator}")?;
                }
                write_filter(f, filter, true)?;
            }
            if nested {
                write!(f, ")")?;
            }
            Ok(())
        }
        FirestoreQueryFilter::Compare(Some(compare)) => {
            let (field, operator, value) = match compare {
                C::Equal(field, value) => (field, "==", value),
                C::NotEqual(field, value) => (field, "!=", value),
                C::LessThan(field, value) => (field, "<", value),
                C::LessThanOrEqual(field, value) => (field, "<=", value),
                C::GreaterThan(field, value) => (field, ">", value),
                C::GreaterThanOrEqual(field, value) => (field, ">=", value),
                C::In(field, value) => (field, "IN", value),
                C::NotIn(field, value) => (field, "NOT IN", value),
                C::ArrayContains(field, value) => (field, "ARRAY-CONTAINS", value),
                C::ArrayContainsAny(field, value) => (field, "ARRAY-CONTAINS-ANY", value),
            };
            write!(f, "{field} {operator} ")?;
            write_value(f, &value.value)
        }
        FirestoreQueryFilter::Compare(None) => Ok(()),
        FirestoreQueryFilter::Unary(unary) => write!(f, "{unary:?}"),
    }
}

fn write_value(f: &mut fmt::Formatter<'_>, value: &Value) -> fmt::Result {
    match &value.value_type {
        None | Some(ValueType::NullValue(_)) => write!(f, "null"),
        Some(ValueType::BooleanValue(b)) => write!(f, "{b}"),
        Some(ValueType::IntegerValue(i)) => write!(f, "{i}"),
        Some(ValueType::DoubleValue(d)) => write!(f, "{d:?}"),
        Some(ValueType::StringValue(s)) => write!(f, "{s:?}"),
        Some(ValueType::TimestampValue(t)) => write!(f, "timestamp({}s {}ns)", t.seconds, t.nanos),
        Some(ValueType::ReferenceValue(r)) => write!(f, "ref({r})"),
        Some(ValueType::BytesValue(b)) => write!(f, "bytes({} bytes)", b.len()),
        Some(ValueType::ArrayValue(array)) => {
            write!(f, "[")?;
            for (i, value) in array.values.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write_value(f, value)?;
            }
            write!(f, "]")
        }
        Some(other) => write!(f, "{other:?}"),
    }
}
