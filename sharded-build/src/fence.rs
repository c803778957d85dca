//! A block the build owns inside a file of the user's (`firestore.rules`, `index.yaml`):
//! the lines between a begin and an end marker, each alone on its line.

/// `text` without the lines of the block between `begin` and `end`, markers included: what
/// the user wrote. A marker without its pair is an error naming it.
pub(crate) fn without_block(text: &str, begin: &str, end: &str) -> Result<String, String> {
    let mut kept = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed == begin {
            inside = true;
        } else if trimmed == end {
            if !inside {
                return Err(format!("`{end}` without `{begin}` before it"));
            }
            inside = false;
        } else if !inside {
            kept.push_str(line);
        }
    }
    match inside {
        true => Err(format!("`{begin}` without `{end}` after it")),
        false => Ok(kept),
    }
}
