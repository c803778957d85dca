//! Opaque, typed cursors: where the last page ended, as (order value, document id).

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use firestore::gcloud_sdk::google::firestore::v1::{Document, Value, value::ValueType};
use firestore::gcloud_sdk::prost_types::Timestamp;
use serde::{Deserialize, Serialize};

use super::reach::{InCollection, Reach};
use crate::error::{Error, Result};
use crate::model::document_id::check_document_id;
use crate::model::document_path::DocumentPath;
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;
use crate::model::value_order::{field_value, stored_precision};
use firestore::FirestoreValue;

/// Where a page of a `ShardedQuery<T, QUERY>` ended; pass it to
/// [`ShardedQuery::after`](crate::query::ShardedQuery::after) for the next page.
///
/// The type says which query it belongs to, so a cursor of one query does not compile with
/// another, nor a collection-group query's ([`InGroup`](crate::query::InGroup)) with a per-parent
/// query's ([`InCollection`]) or the reverse. Its string form ([`Display`](fmt::Display), [`FromStr`], serde) is an opaque,
/// URL-safe token a web handler can hand to a client and take back; parsing a token of another
/// query is an [`Error::InvalidCursor`].
pub struct Cursor<T, const QUERY: u64, R: Reach = InCollection> {
    pub(crate) position: Position,
    marker: PhantomData<fn() -> (T, R)>,
}

/// What [`after`](crate::query::ShardedQuery::after) and [`before`](crate::query::ShardedQuery::before)
/// take: a [`Cursor`] of the query, or an `Option` of one (`None`: no cursor), so a loop over
/// pages passes each page's [`next`](crate::query::Page::next) as it is. Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a cursor of this query",
    label = "a cursor of another query, reach or direction",
    note = "a cursor starts only the query whose page gave it: the same typed query (`QUERY`), the same reach (`in_group` or not) and the same direction (`reversed` or not); `CursorOf<Query>` names a query's cursor type"
)]
pub trait CursorArgument<T, const QUERY: u64, R: Reach>: sealed::Sealed {
    #[doc(hidden)]
    fn into_position(self) -> Option<Position>;
}

impl<T, const QUERY: u64, R: Reach> CursorArgument<T, QUERY, R> for Cursor<T, QUERY, R> {
    fn into_position(self) -> Option<Position> {
        Some(self.position)
    }
}

impl<T, const QUERY: u64, R: Reach> CursorArgument<T, QUERY, R> for Option<Cursor<T, QUERY, R>> {
    fn into_position(self) -> Option<Position> {
        self.map(|cursor| cursor.position)
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T, const QUERY: u64, R: super::Reach> Sealed for super::Cursor<T, QUERY, R> {}
    impl<T, const QUERY: u64, R: super::Reach> Sealed for Option<super::Cursor<T, QUERY, R>> {}
}

/// Where a cursor points, whatever its query's type: what a query keeps to start after.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct Position {
    pub(crate) order_value: Value,
    pub(crate) id: String,
    /// The path of the document's parent below the database root, for a subcollection's.
    pub(crate) parent: Option<String>,
    /// Whether a collection-group query made it.
    pub(crate) group: bool,
    /// The document's values of the type's `#[sharded(range)]` fields that it holds: a query
    /// with a range filter orders by one of them after the order field.
    pub(crate) ranged: Vec<(String, Value)>,
    /// A position at an end of the query rather than at a document: what an empty page's
    /// cursors point at (the page before the end of the query, the one after its start).
    pub(crate) edge: Option<Edge>,
}

/// An end of a query, where a [`Position`] may point when there is no document to point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub enum Edge {
    /// Before the first document: `after` it is the query from its start.
    Start,
    /// After the last document: `before` it is the query's last documents.
    End,
}

impl Position {
    /// [`Error::InvalidCursor`] when the cursor's document is not where `scope` reads: a
    /// cursor of one parent's query on another's, of a top-level query on a group, of a
    /// per-parent query on a group query it was turned into. A group reads every collection
    /// of its id, the top-level one too: its cursor may point at a document under a parent
    /// or at a top-level one.
    pub(crate) fn check_scope(&self, scope: &crate::model::handle::Scope) -> Result<()> {
        use crate::model::handle::Scope;
        if self.edge.is_some() {
            return Ok(());
        }
        let fits = match (scope, &self.parent) {
            (Scope::Top, None) => !self.group,
            (Scope::Group, _) => self.group,
            (Scope::Under(parent), Some(own)) => parent == own && !self.group,
            _ => false,
        };
        match fits {
            true => Ok(()),
            false => Err(Error::InvalidCursor(format!(
                "the cursor of a {} query points at a document {}, which this query does not read",
                match self.group {
                    true => "collection-group",
                    false => "collection",
                },
                match &self.parent {
                    Some(parent) => format!("under `{parent}`"),
                    None => "of the top-level collection".to_owned(),
                }
            ))),
        }
    }

    /// The cursor's document's value of the range field `path`, which a query filtered on it
    /// starts after; [`Error::InvalidCursor`] when the cursor has none.
    pub(crate) fn value_of(&self, path: &str) -> Result<&Value> {
        self.ranged
            .iter()
            .find(|(field, _)| field == path)
            .map(|(_, value)| value)
            .ok_or_else(|| {
                Error::InvalidCursor(format!(
                    "the query is filtered on `{path}`, which it orders by after the order field, and the cursor holds no value of it (a cursor of `Cursor::at`, or of a document without the field); take the cursor from a page or `Cursor::after`"
                ))
            })
    }
}

/// The token's contents.
#[derive(Serialize, Deserialize)]
struct Token {
    /// The query it belongs to: collection and indexed field.
    q: String,
    v: TokenValue,
    id: String,
    /// The parent document's path, for a subcollection's document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<String>,
    /// The values of the type's range fields the document holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    r: Vec<(String, TokenValue)>,
    /// An end of the query (`s`: its start, `e`: its end), for a cursor at no document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e: Option<String>,
}

/// The order field's value; order fields are scalars (the derive rejects arrays and maps).
#[derive(Serialize, Deserialize)]
enum TokenValue {
    #[serde(rename = "t")]
    Timestamp(i64, i32),
    #[serde(rename = "i")]
    Integer(i64),
    /// The double's bits: exact for NaN, ±infinity and -0.0, which JSON numbers cannot hold.
    #[serde(rename = "f")]
    Double(u64),
    #[serde(rename = "s")]
    String(String),
    #[serde(rename = "b")]
    Boolean(bool),
    #[serde(rename = "y")]
    Bytes(String),
    #[serde(rename = "r")]
    Reference(String),
    #[serde(rename = "n")]
    Null,
}

impl TokenValue {
    /// A scalar's token; `None` for arrays, maps and geo points.
    fn of(value: &Value) -> Option<TokenValue> {
        Some(match value.value_type.as_ref()? {
            ValueType::TimestampValue(ts) => TokenValue::Timestamp(ts.seconds, ts.nanos),
            ValueType::IntegerValue(i) => TokenValue::Integer(*i),
            ValueType::DoubleValue(d) => TokenValue::Double(d.to_bits()),
            ValueType::StringValue(s) => TokenValue::String(s.clone()),
            ValueType::BooleanValue(b) => TokenValue::Boolean(*b),
            ValueType::BytesValue(b) => TokenValue::Bytes(URL_SAFE_NO_PAD.encode(b)),
            ValueType::ReferenceValue(r) => TokenValue::Reference(r.clone()),
            ValueType::NullValue(_) => TokenValue::Null,
            _ => return None,
        })
    }

    fn into_value(self) -> Result<Value> {
        let value_type = match self {
            TokenValue::Timestamp(seconds, nanos) => {
                ValueType::TimestampValue(Timestamp { seconds, nanos })
            }
            TokenValue::Integer(i) => ValueType::IntegerValue(i),
            TokenValue::Double(bits) => ValueType::DoubleValue(f64::from_bits(bits)),
            TokenValue::String(s) => ValueType::StringValue(s),
            TokenValue::Boolean(b) => ValueType::BooleanValue(b),
            TokenValue::Bytes(b) => ValueType::BytesValue(
                URL_SAFE_NO_PAD
                    .decode(b)
                    .map_err(|_| Error::InvalidCursor("bad bytes".into()))?,
            ),
            TokenValue::Reference(r) => ValueType::ReferenceValue(r),
            TokenValue::Null => ValueType::NullValue(0),
        };
        Ok(Value {
            value_type: Some(value_type),
        })
    }
}

/// The values of `T`'s range fields that `document` holds.
fn ranged_values<T: Sharded>(document: &Document) -> Vec<(String, Value)> {
    T::DESCRIPTION
        .range_field_paths()
        .into_iter()
        .filter_map(|path| Some((path.to_owned(), field_value(document, path)?.clone())))
        .collect()
}

impl<T: Sharded, const QUERY: u64, R: Reach> Cursor<T, QUERY, R> {
    fn new(order_value: Value, id: String, parent: Option<String>) -> Self {
        Cursor {
            position: Position {
                order_value: stored_precision(order_value),
                id,
                parent,
                group: R::GROUP,
                ranged: Vec::new(),
                edge: None,
            },
            marker: PhantomData,
        }
    }

    /// The cursor at `position`, as a query holds it.
    pub(crate) fn from_position(position: Position) -> Self {
        Cursor {
            position,
            marker: PhantomData,
        }
    }

    /// The cursor at an end of the query: what an empty page's cursors are.
    pub(crate) fn at_edge(edge: Edge) -> Self {
        let mut cursor = Self::new(
            Value {
                value_type: Some(ValueType::NullValue(0)),
            },
            String::new(),
            None,
        );
        cursor.position.edge = Some(edge);
        cursor
    }

    fn with_ranged(mut self, ranged: Vec<(String, Value)>) -> Self {
        self.position.ranged = ranged
            .into_iter()
            .map(|(path, value)| (path, stored_precision(value)))
            .collect();
        self
    }

    /// The cursor just after `document`, the last one of a page.
    pub(crate) fn after_document(document: &Document) -> Result<Self> {
        let order_value = field_value(document, T::ORDER_FIELD)
            .cloned()
            .ok_or_else(|| Error::MissingField {
                document: document.name.clone(),
                field: T::ORDER_FIELD.to_owned(),
            })?;
        let path = DocumentPath::parse(&document.name);
        Ok(Self::new(
            order_value,
            path.id().to_owned(),
            path.parent().map(str::to_owned),
        )
        .with_ranged(ranged_values::<T>(document)))
    }

    /// The cursor just after the top-level document `id` whose order field holds
    /// `order_value`: resume after a known item without fetching it again. For a document
    /// under a parent, [`at_in`](Self::at_in).
    pub fn at(order_value: &T::OrderValue, id: &str) -> Result<Self> {
        Self::at_position(order_value, id, None)
    }

    /// [`at`](Self::at) for the document `id` under `parent`, of a subcollection type.
    pub fn at_in(
        order_value: &T::OrderValue,
        parent: &crate::model::handle::Parent<T>,
        id: &str,
    ) -> Result<Self>
    where
        T: crate::model::sharded::Subcollection,
    {
        Self::at_position(order_value, id, Some(parent.path().to_owned()))
    }

    fn at_position(order_value: &T::OrderValue, id: &str, parent: Option<String>) -> Result<Self> {
        check_cursor_id(id)?;
        let order_value = <FirestoreValue as From<&T::OrderValue>>::from(order_value).value;
        if order_value.value_type.is_none() {
            return Err(Error::InvalidCursor(
                "the order value does not serialize to a Firestore value".into(),
            ));
        }
        Ok(Self::new(order_value, id.to_owned(), parent))
    }

    /// The cursor just after `item`, as the query returned it.
    pub fn after(item: &Stored<T>) -> Result<Self> {
        let document = firestore::firestore_document_from_serializable("", &item.document)?;
        let order_value = field_value(&document, T::ORDER_FIELD)
            .cloned()
            .ok_or_else(|| Error::MissingField {
                document: item.id.clone(),
                field: T::ORDER_FIELD.to_owned(),
            })?;
        check_cursor_id(&item.id)?;
        Ok(Self::new(order_value, item.id.clone(), item.parent.clone())
            .with_ranged(ranged_values::<T>(&document)))
    }

    /// The query a token belongs to; a group query's is marked, and a reversed one's, so its
    /// tokens parse as no per-parent or forward query's cursor, nor the reverse.
    fn query_tag() -> String {
        let group = if R::GROUP { "@group" } else { "" };
        let reversed = if R::REVERSED { "@reversed" } else { "" };
        format!(
            "{}:{}{group}{reversed}",
            T::COLLECTION,
            super::query_name::<T>(QUERY)
        )
    }

    /// The opaque token.
    pub fn to_token(&self) -> String {
        let Position {
            order_value,
            id,
            parent,
            group: _,
            ranged,
            edge,
        } = &self.position;
        // Arrays, maps and geo points are rejected as order fields by the derive.
        let v = TokenValue::of(order_value).unwrap_or(TokenValue::Null);
        let token = Token {
            q: Self::query_tag(),
            v,
            id: id.clone(),
            p: parent.clone(),
            // A range field holding an array or a map (another client's write) has no token:
            // a query filtered on it refuses the cursor rather than start elsewhere.
            r: ranged
                .iter()
                .filter_map(|(path, value)| Some((path.clone(), TokenValue::of(value)?)))
                .collect(),
            e: edge.map(|edge| match edge {
                Edge::Start => "s".to_owned(),
                Edge::End => "e".to_owned(),
            }),
        };
        crate::wire::token::encode(&token)
    }

    /// Parses a token made by [`to_token`](Self::to_token) for this same query.
    pub fn from_token(token: &str) -> Result<Self> {
        let invalid = |why: &str| Error::InvalidCursor(why.to_owned());
        let token: Token =
            crate::wire::token::decode(token.trim()).map_err(|_| invalid("not a cursor token"))?;
        if token.q != Self::query_tag() {
            return Err(Error::InvalidCursor(format!(
                "this cursor belongs to the query `{}`, not `{}`",
                token.q,
                Self::query_tag()
            )));
        }
        match token.e.as_deref() {
            None => {}
            Some("s") => return Ok(Self::at_edge(Edge::Start)),
            Some("e") => return Ok(Self::at_edge(Edge::End)),
            Some(_) => return Err(invalid("not a cursor token")),
        }
        check_cursor_id(&token.id)?;
        if let Some(parent) = &token.p {
            check_parent_path(parent)?;
        }
        let order_value = token.v.into_value()?;
        if !crate::model::order_key::is_stored_as::<T::OrderValue>(&order_value) {
            return Err(Error::InvalidCursor(format!(
                "the cursor's order value is not a stored value of `{}` ({})",
                T::ORDER_FIELD,
                std::any::type_name::<T::OrderValue>()
            )));
        }
        let fields = T::DESCRIPTION.range_field_paths();
        let mut ranged = Vec::with_capacity(token.r.len());
        for (path, value) in token.r {
            let Some(path) = fields.iter().find(|field| **field == path) else {
                return Err(invalid(
                    "the cursor holds a value of a field this type does not filter by range",
                ));
            };
            if ranged.iter().any(|(seen, _)| seen == path) {
                return Err(invalid("the cursor holds a range field twice"));
            }
            ranged.push(((*path).to_owned(), value.into_value()?));
        }
        Ok(Self::new(order_value, token.id, token.p).with_ranged(ranged))
    }
}

/// A parent path a token may carry: a document path.
fn check_parent_path(path: &str) -> Result<()> {
    crate::model::document_id::check_document_path(path)
        .map_err(|error| Error::InvalidCursor(error.to_string()))
}

/// A document id a cursor may point at.
fn check_cursor_id(id: &str) -> Result<()> {
    check_document_id(id).map_err(|error| Error::InvalidCursor(error.to_string()))
}

impl<T, const QUERY: u64, R: Reach> Clone for Cursor<T, QUERY, R> {
    fn clone(&self) -> Self {
        Cursor {
            position: self.position.clone(),
            marker: PhantomData,
        }
    }
}

impl<T, const QUERY: u64, R: Reach> PartialEq for Cursor<T, QUERY, R> {
    fn eq(&self, other: &Self) -> bool {
        self.position == other.position
    }
}

impl<T, const QUERY: u64, R: Reach> fmt::Debug for Cursor<T, QUERY, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cursor")
            .field("order_value", &self.position.order_value)
            .field("id", &self.position.id)
            .field("parent", &self.position.parent)
            .field("group", &self.position.group)
            .field("ranged", &self.position.ranged)
            .field("edge", &self.position.edge)
            .finish()
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach> fmt::Display for Cursor<T, QUERY, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_token())
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach> FromStr for Cursor<T, QUERY, R> {
    type Err = Error;

    fn from_str(token: &str) -> Result<Self> {
        Self::from_token(token)
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach> Serialize for Cursor<T, QUERY, R> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_token())
    }
}

impl<'de, T: Sharded, const QUERY: u64, R: Reach> Deserialize<'de> for Cursor<T, QUERY, R> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let token = String::deserialize(deserializer)?;
        Self::from_token(&token).map_err(serde::de::Error::custom)
    }
}
