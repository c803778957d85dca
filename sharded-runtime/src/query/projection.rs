//! Projections: a query's documents read as a partial type, only its fields sent back.

use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::model::stored_names::StoredNames;

/// The field paths a projection of `T` into `P` reads: `P`'s stored names, each one `T`
/// stores, then `T`'s order and shard fields, and the fields range filters order by after
/// the order field (`then_by`), which the merge and the cursors compare.
pub(super) fn projection_mask<T: Sharded, P: StoredNames>(then_by: &[&str]) -> Result<Vec<String>> {
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
        .chain(then_by.iter().copied())
    {
        if !mask.iter().any(|path| path == field) {
            mask.push(field.to_owned());
        }
    }
    Ok(mask)
}
