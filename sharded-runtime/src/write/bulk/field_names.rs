//! Field names Firestore refuses: checked before a write is queued, since the server rejects
//! the whole request that carries one.

use std::collections::HashMap;

use firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};

use crate::error::{Error, Result};

/// [`Error::InvalidFieldName`] for the first field, at any depth, whose name Firestore
/// reserves (`__.*__`) or that is empty.
pub(crate) fn check(fields: &HashMap<String, Value>) -> Result<()> {
    for (name, value) in fields {
        let reason = if name.is_empty() {
            Some("a field name may not be empty")
        } else if name.len() >= 4 && name.starts_with("__") && name.ends_with("__") {
            Some("names matching `__.*__` are reserved by Firestore")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(Error::InvalidFieldName {
                field: name.clone(),
                reason,
            });
        }
        if let Some(ValueType::MapValue(map)) = &value.value_type {
            check(&map.fields)?;
        }
    }
    Ok(())
}
