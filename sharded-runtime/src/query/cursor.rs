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
use crate::document_id::check_document_id;
use crate::document_path::DocumentPath;
use crate::value_order::field_value;
use crate::{Error, Result, Sharded, Stored};
use firestore::FirestoreValue;

/// Where a page of a `ShardedQuery<T, QUERY>` ended; pass it to
/// [`ShardedQuery::after`](crate::ShardedQuery::after) for the next page.
///
/// The type says which query it belongs to, so a cursor of one query does not compile with
/// another, nor a collection-group query's ([`InGroup`](crate::InGroup)) with a per-parent
/// query's ([`InCollection`]) or the reverse. Its string form ([`Display`](fmt::Display), [`FromStr`], serde) is an opaque,
/// URL-safe token a web handler can hand to a client and take back; parsing a token of another
/// query is an [`Error::InvalidCursor`].
pub struct Cursor<T, const QUERY: u64, R: Reach = InCollection> {
    pub(crate) position: Position,
    marker: PhantomData<fn() -> (T, R)>,
}

/// Where a cursor points, whatever its query's type: what a query keeps to start after.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Position {
    pub(crate) order_value: Value,
    pub(crate) id: String,
    /// The path of the document's parent below the database root, for a subcollection's.
    pub(crate) parent: Option<String>,
    /// Whether a collection-group query made it.
    pub(crate) group: bool,
}

impl Position {
    /// [`Error::InvalidCursor`] when the cursor's document is not where `scope` reads: a
    /// cursor of one parent's query on another's, of a top-level query on a group, of a
    /// per-parent query on a group query it was turned into. A group reads every collection
    /// of its id, the top-level one too: its cursor may point at a document under a parent
    /// or at a top-level one.
    pub(crate) fn check_scope(&self, scope: &crate::parent::Scope) -> Result<()> {
        use crate::parent::Scope;
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

    /// The full name of the cursor's document in `collection`.
    pub(crate) fn document_name(&self, db: &firestore::FirestoreDb, collection: &str) -> String {
        crate::document_path::document_name(
            db.get_documents_path(),
            self.parent.as_deref(),
            collection,
            &self.id,
        )
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

impl<T: Sharded, const QUERY: u64, R: Reach> Cursor<T, QUERY, R> {
    fn new(order_value: Value, id: String, parent: Option<String>) -> Self {
        Cursor {
            position: Position {
                order_value,
                id,
                parent,
                group: R::GROUP,
            },
            marker: PhantomData,
        }
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
        ))
    }

    /// The cursor just after the top-level document `id` whose order field holds
    /// `order_value`: resume after a known item without fetching it again. For a document
    /// under a parent, [`at_in`](Self::at_in).
    pub fn at(order_value: &T::OrderValue, id: &str) -> Result<Self> {
        Self::at_position(order_value, id, None)
    }

    /// [`at`](Self::at) for the document `id` under `parent`, of a subcollection type.
    pub fn at_in(order_value: &T::OrderValue, parent: &crate::Parent<T>, id: &str) -> Result<Self>
    where
        T: crate::Subcollection,
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
        Ok(Self::new(order_value, item.id.clone(), item.parent.clone()))
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
        } = &self.position;
        let v = match &order_value.value_type {
            Some(ValueType::TimestampValue(ts)) => TokenValue::Timestamp(ts.seconds, ts.nanos),
            Some(ValueType::IntegerValue(i)) => TokenValue::Integer(*i),
            Some(ValueType::DoubleValue(d)) => TokenValue::Double(d.to_bits()),
            Some(ValueType::StringValue(s)) => TokenValue::String(s.clone()),
            Some(ValueType::BooleanValue(b)) => TokenValue::Boolean(*b),
            Some(ValueType::BytesValue(b)) => TokenValue::Bytes(URL_SAFE_NO_PAD.encode(b)),
            Some(ValueType::ReferenceValue(r)) => TokenValue::Reference(r.clone()),
            // Arrays, maps and geo points are rejected as order fields by the derive.
            _ => TokenValue::Null,
        };
        let token = Token {
            q: Self::query_tag(),
            v,
            id: id.clone(),
            p: parent.clone(),
        };
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&token).expect("tokens serialize"))
    }

    /// Parses a token made by [`to_token`](Self::to_token) for this same query.
    pub fn from_token(token: &str) -> Result<Self> {
        let invalid = |why: &str| Error::InvalidCursor(why.to_owned());
        let bytes = URL_SAFE_NO_PAD
            .decode(token.trim())
            .map_err(|_| invalid("not a cursor token"))?;
        let token: Token =
            serde_json::from_slice(&bytes).map_err(|_| invalid("not a cursor token"))?;
        if token.q != Self::query_tag() {
            return Err(Error::InvalidCursor(format!(
                "this cursor belongs to the query `{}`, not `{}`",
                token.q,
                Self::query_tag()
            )));
        }
        check_cursor_id(&token.id)?;
        if let Some(parent) = &token.p {
            check_parent_path(parent)?;
        }
        let value_type = match token.v {
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
                    .map_err(|_| invalid("bad bytes"))?,
            ),
            TokenValue::Reference(r) => ValueType::ReferenceValue(r),
            TokenValue::Null => ValueType::NullValue(0),
        };
        let order_value = Value {
            value_type: Some(value_type),
        };
        if !crate::order_key::is_stored_as::<T::OrderValue>(&order_value) {
            return Err(Error::InvalidCursor(format!(
                "the cursor's order value is not a stored value of `{}` ({})",
                T::ORDER_FIELD,
                std::any::type_name::<T::OrderValue>()
            )));
        }
        Ok(Self::new(order_value, token.id, token.p))
    }
}

/// A parent path a token may carry: a document path.
fn check_parent_path(path: &str) -> Result<()> {
    crate::document_id::check_document_path(path)
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
