//! Which composite index serves a query, by Firestore's rules: the index is on the query's
//! collection in the query's scope; its fields are first the fields the query compares by
//! equality or `in` (in any order, either direction) and the array field of an
//! `array-contains` (`"arrayConfig": "CONTAINS"`), then the fields it orders by (the
//! inequality field first, as Firestore requires), in the query's order and directions;
//! `__name__` comes last, in the direction of the last order, whether the index names it or
//! Firestore adds it. The emulator runs any query without an index, so this is what tells a
//! test that production accepts a query.

use crate::{CompositeIndex, Direction, IndexMode, IndexPlan, QueryScope};

/// What one query asks of a composite index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexNeed {
    /// The collection id (for a collection-group query, the group's id).
    pub collection_group: String,
    /// One collection, or every collection with that id.
    pub query_scope: QueryScope,
    /// The field paths compared by equality or `in` (the shard field among them).
    pub equalities: Vec<String>,
    /// The array field path of an `array-contains` or `array-contains-any`, if any.
    pub contains: Option<String>,
    /// The field paths ordered by, in order, with their directions, without `__name__`.
    pub orders: Vec<(String, Direction)>,
}

impl IndexNeed {
    /// Whether the `firestore.indexes.json` document `file` has an index that serves this
    /// query. Entries of other kinds (array, vector) are passed over.
    pub fn is_served_by_file(&self, file: &str) -> Result<bool, serde_json::Error> {
        let file: serde_json::Value = serde_json::from_str(file)?;
        let indexes = file
            .get("indexes")
            .and_then(serde_json::Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(indexes.into_iter().any(|entry| {
            let mut entry = entry;
            if let Some(object) = entry.as_object_mut() {
                object
                    .entry("queryScope")
                    .or_insert_with(|| "COLLECTION".into());
            }
            serde_json::from_value::<CompositeIndex>(entry).is_ok_and(|index| index.serves(self))
        }))
    }
}

impl IndexPlan {
    /// The composite index of this plan that serves `need`, if one does.
    pub fn serving(&self, need: &IndexNeed) -> Option<&CompositeIndex> {
        self.indexes.iter().find(|index| index.serves(need))
    }
}

impl CompositeIndex {
    /// Whether this index serves the query `need` describes.
    pub fn serves(&self, need: &IndexNeed) -> bool {
        if self.collection_group != need.collection_group || self.query_scope != need.query_scope {
            return false;
        }
        let last = need
            .orders
            .last()
            .map_or(Direction::Ascending, |(_, direction)| *direction);
        let mut fields: Vec<(&str, IndexMode)> = self
            .fields
            .iter()
            .map(|field| (field.field_path.as_str(), field.mode))
            .collect();
        if fields.last() == Some(&("__name__", IndexMode::Order(last))) {
            fields.pop();
        }
        let compared = need.equalities.len() + usize::from(need.contains.is_some());
        if fields.len() != compared + need.orders.len() {
            return false;
        }
        let (leading, ordered) = fields.split_at(compared);
        let mut leading_ordered: Vec<&str> = Vec::new();
        let mut leading_contains: Vec<&str> = Vec::new();
        for (path, mode) in leading {
            match mode {
                IndexMode::Order(_) => leading_ordered.push(path),
                IndexMode::ArrayConfig(_) => leading_contains.push(path),
                // A vector index serves `find_nearest` alone (`vector_index`), no need.
                IndexMode::VectorConfig(_) => return false,
            }
        }
        let mut wanted: Vec<&str> = need.equalities.iter().map(String::as_str).collect();
        leading_ordered.sort_unstable();
        wanted.sort_unstable();
        leading_ordered == wanted
            && leading_contains == need.contains.as_deref().into_iter().collect::<Vec<_>>()
            && ordered
                .iter()
                .zip(&need.orders)
                .all(|((path, mode), (wanted, order))| {
                    path == wanted && *mode == IndexMode::Order(*order)
                })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexField;

    fn index(scope: QueryScope, fields: &[(&str, Direction)]) -> CompositeIndex {
        CompositeIndex {
            collection_group: "ticks".into(),
            query_scope: scope,
            fields: fields
                .iter()
                .map(|(path, order)| IndexField::ordered(path, *order))
                .collect(),
        }
    }

    fn need(equalities: &[&str], orders: &[(&str, Direction)]) -> IndexNeed {
        IndexNeed {
            collection_group: "ticks".into(),
            query_scope: QueryScope::Collection,
            equalities: equalities.iter().map(|f| (*f).into()).collect(),
            contains: None,
            orders: orders.iter().map(|(f, d)| ((*f).into(), *d)).collect(),
        }
    }

    use Direction::{Ascending as Asc, Descending as Desc};

    #[test]
    fn equalities_in_any_order_then_the_orders_exactly() {
        let served = index(
            QueryScope::Collection,
            &[("shard", Asc), ("venue", Desc), ("at", Desc)],
        );
        assert!(served.serves(&need(&["venue", "shard"], &[("at", Desc)])));
        assert!(served.serves(&need(&["shard", "venue"], &[("at", Desc)])));
        assert!(!served.serves(&need(&["shard", "venue"], &[("at", Asc)])));
        assert!(!served.serves(&need(&["shard"], &[("at", Desc)])));
        assert!(!served.serves(&need(&["shard", "side"], &[("at", Desc)])));
        assert!(!served.serves(&need(&["shard", "venue", "side"], &[("at", Desc)])));
        let mut group = need(&["shard", "venue"], &[("at", Desc)]);
        group.query_scope = QueryScope::CollectionGroup;
        assert!(!served.serves(&group), "the scope must match");
        let named = index(
            QueryScope::Collection,
            &[("shard", Asc), ("at", Desc), ("__name__", Desc)],
        );
        assert!(named.serves(&need(&["shard"], &[("at", Desc)])));
        let against = index(
            QueryScope::Collection,
            &[("shard", Asc), ("at", Desc), ("__name__", Asc)],
        );
        assert!(!against.serves(&need(&["shard"], &[("at", Desc)])));
    }

    #[test]
    fn an_array_field_is_served_by_its_contains_entry_only() {
        let mut index = index(QueryScope::Collection, &[("shard", Asc), ("at", Desc)]);
        index.fields.insert(1, IndexField::contains("tags"));
        let mut wanted = need(&["shard"], &[("at", Desc)]);
        assert!(
            !index.serves(&wanted),
            "the array field is not in the query"
        );
        wanted.contains = Some("tags".into());
        assert!(index.serves(&wanted));
        wanted.contains = Some("labels".into());
        assert!(!index.serves(&wanted));
        let ordered = self::index(
            QueryScope::Collection,
            &[("shard", Asc), ("tags", Asc), ("at", Desc)],
        );
        wanted.contains = Some("tags".into());
        assert!(
            !ordered.serves(&wanted),
            "an ordered entry holds no array elements"
        );
    }

    #[test]
    fn a_file_serves_what_its_indexes_do() {
        let file = r#"{
            "indexes": [
                {"collectionGroup": "ticks", "fields": [
                    {"fieldPath": "tags", "arrayConfig": "CONTAINS"},
                    {"fieldPath": "at", "order": "DESCENDING"}]},
                {"collectionGroup": "ticks", "fields": [
                    {"fieldPath": "shard", "order": "ASCENDING"},
                    {"fieldPath": "at", "order": "DESCENDING"}]}
            ]
        }"#;
        assert!(
            need(&["shard"], &[("at", Desc)])
                .is_served_by_file(file)
                .unwrap()
        );
        assert!(
            !need(&["shard"], &[("at", Asc)])
                .is_served_by_file(file)
                .unwrap()
        );
    }
}
