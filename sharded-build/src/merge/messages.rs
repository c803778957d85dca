//! How the merge's messages name shard values and types.

/// `"x", "y", "z"`, shortened past a dozen values.
pub(crate) fn describe_values(values: &[String]) -> String {
    const SHOWN: usize = 12;
    let shown: Vec<String> = values
        .iter()
        .take(SHOWN)
        .map(|v| format!("{v:?}"))
        .collect();
    let more = values.len().saturating_sub(SHOWN);
    if more == 0 {
        format!("[{}]", shown.join(", "))
    } else {
        format!("[{}, and {more} more]", shown.join(", "))
    }
}

pub(crate) fn describe_types(types: &[String]) -> String {
    types
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
