//! Projections: a query's documents read as a partial type, only its fields sent back.

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;

use super::{Reach, ShardedQuery, Window};
use crate::{Error, Result, Sharded, Stored, StoredNames};

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// The matching documents, in order, read as `P`: a struct of some of `T`'s fields
    /// (`#[derive(Deserialize, StoredNames)]`, its fields named and renamed as `T`'s are
    /// stored). Only `P`'s fields come back (a field mask, with the order field, the shard and
    /// a range filter's field, which the merge and [`Stored`] need), so a large document
    /// costs less to send;
    /// Firestore bills a projection as it bills the query, one read per document. A field of
    /// `P` that `T` does not store under that name, or one `P` flattens or skips, is
    /// [`Error::InvalidQuery`] before anything is sent.
    pub fn fetch_as<'q, P>(
        &self,
        db: &'q firestore::FirestoreDb,
    ) -> BoxFuture<'q, Result<Vec<Stored<P>>>>
    where
        P: DeserializeOwned + StoredNames + 'q,
    {
        // Not `async fn`: a future whose type does not carry `P`'s bounds has them checked
        // once, at the call.
        let mask = projection_mask::<T, P>(self.then_by());
        let mut masked = self.clone();
        Box::pin(async move {
            masked.mask = Some(mask?);
            let (documents, _) = masked.fetch_documents(db).await?;
            documents.iter().map(Stored::read_as::<T>).collect()
        })
    }
}

/// The field paths a projection of `T` into `P` reads: `P`'s stored names, each one `T`
/// stores, then `T`'s order and shard fields, and the field a range filter orders by after
/// the order field (`then_by`), which the merge and the cursors compare.
fn projection_mask<T: Sharded, P: StoredNames>(then_by: Option<&str>) -> Result<Vec<String>> {
    let mut mask = Vec::with_capacity(P::STORED_NAMES.len() + 2);
    for (rust, stored) in P::STORED_NAMES {
        let Some(stored) = stored else {
            return Err(Error::InvalidQuery(format!(
                "`{rust}` of `{}` is skipped or flattened, so a projection cannot read it",
                std::any::type_name::<P>()
            )));
        };
        let path = sharded_indexes::field_path::field_path(&[stored]);
        if !T::TABLES.stored_fields.contains(&path.as_str()) {
            return Err(Error::InvalidQuery(format!(
                "`{}` stores no field `{stored}` (`{rust}` of `{}`); a projection reads fields of the type, by their stored names",
                T::COLLECTION,
                std::any::type_name::<P>()
            )));
        }
        mask.push(path);
    }
    for field in [T::ORDER_FIELD, T::SHARD_FIELD_PATH]
        .into_iter()
        .chain(then_by)
    {
        if !mask.iter().any(|path| path == field) {
            mask.push(field.to_owned());
        }
    }
    Ok(mask)
}
