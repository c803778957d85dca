//! The same plan for Firestore in Datastore mode: each composite index as a kind's index in
//! `index.yaml`, and which properties a sharded kind's queries read, so that every other one
//! is excluded from indexes on write (the best-practices page's advice).
//!
//! A Native-mode query on one parent's subcollection is an ancestor query in Datastore mode
//! (`ancestor: yes`); a collection-group query, or a query on a kind without parents, is a
//! kind query (`ancestor: no`). An array field's `CONTAINS` index is an ordinary ascending
//! property there: Datastore indexes each value of a list property, and an equality filter
//! matches any of them. Vector indexes have no `index.yaml` form and are left out.

use crate::field_path::segments;
use crate::{CollectionDescription, CompositeIndex, Direction, IndexField, IndexMode, IndexNeed};
use crate::{QueryScope, plan};

/// A composite index of a Datastore-mode kind, as `index.yaml` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KindIndex {
    /// The kind: the type's collection id.
    pub kind: String,
    /// Whether the index serves ancestor queries (a Native-mode parent's subcollection).
    pub ancestor: bool,
    /// The properties, as dotted property paths, with their directions.
    pub properties: Vec<(String, Direction)>,
}

/// The property path Datastore mode names the field path `path` by: its segments joined by
/// dots. `None` when a segment holds a dot itself, which no Datastore property path can say.
pub fn property_path(path: &str) -> Option<String> {
    let names = segments(path);
    names
        .iter()
        .all(|name| !name.contains('.') && !name.is_empty())
        .then(|| names.join("."))
}

/// The composite indexes of `spec` in Datastore mode: [`plan`]'s, with the scope each serves
/// said as an ancestor flag. Fails naming a field path Datastore mode cannot name.
pub fn kind_indexes(spec: &CollectionDescription<'_>) -> Result<Vec<KindIndex>, String> {
    let has_parent = !spec.parent_collections.is_empty();
    let mut indexes: Vec<KindIndex> = Vec::new();
    for index in plan(spec).indexes {
        if let Some(kind_index) = KindIndex::of_composite(&index, has_parent)?
            && !indexes.contains(&kind_index)
        {
            indexes.push(kind_index);
        }
    }
    Ok(indexes)
}

/// The property paths some query of `spec` filters, orders or aggregates on: the shard and
/// order properties, every indexed, range, array and aggregated field. A write marks every
/// other property excluded from indexes, which is what Datastore mode's best practices ask.
pub fn queried_properties(spec: &CollectionDescription<'_>) -> Vec<String> {
    let mut paths: Vec<&str> = vec![spec.shard_field, spec.order_field];
    paths.extend(spec.indexed_fields);
    paths.extend(spec.field_sets.iter().flat_map(|set| set.iter()));
    paths.extend(spec.aggregate_fields);
    paths.extend(spec.aggregations.iter().map(|of| of.field));
    paths.extend(spec.range_field_paths());
    paths.extend(spec.range_sets.iter().flat_map(|set| set.iter()));
    paths.extend(spec.array_fields);
    let mut properties: Vec<String> = Vec::new();
    for path in paths {
        let property = property_path(path).unwrap_or_else(|| segments(path).join("."));
        if !properties.contains(&property) {
            properties.push(property);
        }
    }
    properties
}

impl KindIndex {
    /// `index` as a kind's index of a type with (or without) parents; `None` for an index
    /// Datastore mode has no form of (a vector index).
    fn of_composite(index: &CompositeIndex, has_parent: bool) -> Result<Option<KindIndex>, String> {
        let mut properties = Vec::with_capacity(index.fields.len());
        for field in &index.fields {
            let direction = match field.mode {
                IndexMode::Order(direction) => direction,
                IndexMode::ArrayConfig(_) => Direction::Ascending,
                IndexMode::VectorConfig(_) => return Ok(None),
            };
            let property = property_path(&field.field_path).ok_or_else(|| {
                format!(
                    "`{}` of `{}` has a name with a dot in it, which Datastore mode cannot tell from a nested property; rename it with `#[serde(rename = \"...\")]`",
                    field.field_path, index.collection_group
                )
            })?;
            properties.push((property, direction));
        }
        Ok(Some(KindIndex {
            kind: index.collection_group.clone(),
            ancestor: has_parent && index.query_scope == QueryScope::Collection,
            properties,
        }))
    }

    /// Whether this index serves the query `need` describes, for a kind with (or without)
    /// parents: the same rules as Native mode's ([`CompositeIndex::serves`]), the ancestor
    /// flag standing for the scope, the implicit key last.
    pub fn serves(&self, need: &IndexNeed, has_parent: bool) -> bool {
        let scope = match (self.ancestor, has_parent) {
            (true, _) | (false, false) => QueryScope::Collection,
            (false, true) => QueryScope::CollectionGroup,
        };
        if self.ancestor && !has_parent {
            return false;
        }
        let equalities = |paths: &[String]| -> Vec<String> {
            paths
                .iter()
                .map(|path| property_path(path).unwrap_or_default())
                .collect()
        };
        let need = IndexNeed {
            collection_group: need.collection_group.clone(),
            query_scope: need.query_scope,
            // Datastore holds a list property's values as it holds any other's: an
            // `array-contains` is an equality on it.
            equalities: equalities(&need.equalities)
                .into_iter()
                .chain(need.contains.iter().filter_map(|path| property_path(path)))
                .collect(),
            contains: None,
            orders: need
                .orders
                .iter()
                .map(|(path, direction)| {
                    let property = match path.as_str() {
                        "__key__" | "__name__" => "__name__".to_owned(),
                        path => property_path(path).unwrap_or_default(),
                    };
                    (property, *direction)
                })
                .collect(),
        };
        let index = CompositeIndex {
            collection_group: self.kind.clone(),
            query_scope: scope,
            fields: self
                .properties
                .iter()
                .map(|(name, direction)| {
                    let name = match name.as_str() {
                        "__key__" => "__name__",
                        name => name,
                    };
                    IndexField {
                        field_path: name.to_owned(),
                        mode: IndexMode::Order(*direction),
                    }
                })
                .collect(),
        };
        index.serves(&need)
    }

    /// The index as one entry of `index.yaml`'s `indexes` list, two-space indented.
    pub fn to_yaml(&self) -> String {
        let mut entry = format!(
            "- kind: {}\n  ancestor: {}\n  properties:\n",
            yaml_scalar(&self.kind),
            if self.ancestor { "yes" } else { "no" }
        );
        for (name, direction) in &self.properties {
            entry.push_str(&format!(
                "  - name: {}\n    direction: {}\n",
                yaml_scalar(name),
                match direction {
                    Direction::Ascending => "asc",
                    Direction::Descending => "desc",
                }
            ));
        }
        entry
    }
}

/// `text` as a YAML scalar: plain when it is a name YAML reads as itself, else double-quoted
/// (a JSON string is a YAML double-quoted scalar).
fn yaml_scalar(text: &str) -> String {
    let plain = text
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && text
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
        // YAML 1.1 reads these as booleans or null.
        && !matches!(
            text.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    match plain {
        true => text.to_owned(),
        false => serde_json::to_string(text).expect("a string serializes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FieldOfQuery;

    fn ticks() -> CollectionDescription<'static> {
        CollectionDescription {
            collection: "Tick",
            shard_field: "shard",
            shard_values: &["0", "1", "2"],
            order_field: "at",
            direction: Direction::Descending,
            indexed_fields: &["venue"],
            array_fields: &["tags"],
            aggregate_fields: &["price.amount"],
            ranges: &[FieldOfQuery {
                field: "qty",
                compared: &[],
                contains: false,
            }],
            ..CollectionDescription::EMPTY
        }
    }

    #[test]
    fn each_composite_index_is_a_kind_index_with_the_same_properties() {
        let spec = ticks();
        let indexes = kind_indexes(&spec).unwrap();
        let plan = plan(&spec);
        assert_eq!(indexes.len(), plan.indexes.len());
        for (kind_index, index) in indexes.iter().zip(&plan.indexes) {
            assert_eq!(kind_index.kind, "Tick");
            assert!(!kind_index.ancestor);
            let names: Vec<String> = index
                .fields
                .iter()
                .map(|f| segments(&f.field_path).join("."))
                .collect();
            let kind_names: Vec<String> = kind_index
                .properties
                .iter()
                .map(|(n, _)| n.clone())
                .collect();
            assert_eq!(kind_names, names);
        }
        assert_eq!(
            indexes[0].to_yaml(),
            "- kind: Tick\n  ancestor: no\n  properties:\n  - name: shard\n    direction: desc\n  - name: at\n    direction: desc\n"
        );
    }

    #[test]
    fn a_parents_subcollection_is_an_ancestor_index_and_its_group_a_kind_index() {
        let spec = CollectionDescription {
            parent_collections: &["Room"],
            collection_group: true,
            ..ticks()
        };
        let indexes = kind_indexes(&spec).unwrap();
        assert!(indexes.iter().any(|index| index.ancestor));
        assert!(indexes.iter().any(|index| !index.ancestor));
        let need = |scope| IndexNeed {
            collection_group: "Tick".into(),
            query_scope: scope,
            equalities: vec!["shard".into(), "venue".into()],
            contains: None,
            orders: vec![("at".into(), Direction::Descending)],
        };
        for scope in [QueryScope::Collection, QueryScope::CollectionGroup] {
            let serving: Vec<&KindIndex> = indexes
                .iter()
                .filter(|index| index.serves(&need(scope), true))
                .collect();
            assert_eq!(serving.len(), 1, "{scope:?}");
            assert_eq!(serving[0].ancestor, scope == QueryScope::Collection);
        }
    }

    #[test]
    fn an_array_contains_is_an_equality_on_the_list_property() {
        let indexes = kind_indexes(&ticks()).unwrap();
        let need = IndexNeed {
            collection_group: "Tick".into(),
            query_scope: QueryScope::Collection,
            equalities: vec!["shard".into()],
            contains: Some("tags".into()),
            orders: vec![("at".into(), Direction::Descending)],
        };
        assert!(indexes.iter().any(|index| index.serves(&need, false)));
        // The other direction is not served: the type is not reversible.
        let reversed = IndexNeed {
            orders: vec![("at".into(), Direction::Ascending)],
            ..need
        };
        assert!(!indexes.iter().any(|index| index.serves(&reversed, false)));
    }

    #[test]
    fn queried_properties_are_the_shard_order_and_declared_fields_only() {
        assert_eq!(
            queried_properties(&ticks()),
            ["shard", "at", "venue", "price.amount", "qty", "tags"]
        );
    }

    #[test]
    fn a_name_with_a_dot_is_refused_and_odd_names_are_quoted() {
        let spec = CollectionDescription {
            indexed_fields: &["`a.b`"],
            ..ticks()
        };
        let error = kind_indexes(&spec).unwrap_err();
        assert!(error.contains("`a.b`"), "{error}");
        assert_eq!(yaml_scalar("yes"), "\"yes\"");
        assert_eq!(yaml_scalar("x-y"), "\"x-y\"");
        assert_eq!(yaml_scalar("région"), "\"région\"");
        assert_eq!(yaml_scalar("price.amount"), "price.amount");
    }
}
