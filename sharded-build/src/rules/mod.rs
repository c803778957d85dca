//! `firestore.rules`: the shard contract as security rules, so that every client the rules
//! govern (web, mobile, any SDK signed in as a user) writes what sharded queries read.
//!
//! Firestore allows a request when any `allow` that matches it does, so a generated `match`
//! with its own `allow` could only open writes, never narrow the user's. The build generates
//! functions instead, one per sharded type, that the user's `allow create, update` conditions
//! call; they live in a fenced block of the user's file that the build owns, and every other
//! byte of the file stays the user's. A crate without a rules file gets one that denies
//! everything until its owner writes the conditions, and already calls each function.

mod contract;
mod counters;
mod render;

use crate::scan::ShardedType;

/// What the build writes into the rules file, and what the user should know.
#[derive(Debug)]
pub(crate) struct Merged {
    /// The whole file; `None` when there is no file and nothing to put in one.
    pub(crate) text: Option<String>,
    pub(crate) warnings: Vec<String>,
}

/// The fence's first line, for the crate that owns it.
fn begin(crate_name: &str) -> String {
    format!("// sharded-build: begin `{crate_name}`")
}

fn end(crate_name: &str) -> String {
    format!("// sharded-build: end `{crate_name}`")
}

/// The file with this crate's fenced block replaced (or placed, at the top of the documents
/// match), or a new file; `existing` is the file on disk.
pub(crate) fn merge(
    existing: Option<&str>,
    types: &[ShardedType],
    crate_name: &str,
) -> Result<Merged, String> {
    let contracts = contract::contracts(types);
    let block = if contracts.is_empty() {
        String::new()
    } else {
        format!(
            "    {}\n    // Generated on every build from the #[derive(Sharded)] types; what is between these two\n    // lines is replaced. Each function holds a client's write to the shard contract.\n{}    {}\n",
            begin(crate_name),
            render::functions(&contracts),
            end(crate_name)
        )
    };
    let text = match existing {
        None if contracts.is_empty() => None,
        None => Some(render::starting_file(&block, &contracts)),
        Some(text) => Some(replace_block(text, &block, crate_name)?),
    };
    let mut warnings = Vec::new();
    if let Some(text) = &text {
        let outside = without_block(text, crate_name)?;
        for contract in &contracts {
            let call = format!("{}(", contract.function);
            if !outside.contains(&call) {
                warnings.push(format!(
                    "firestore.rules never calls `{}()`: a client the rules let write {} can store a document without a valid shard, which no sharded query returns; call it in that match's `allow create, update` condition",
                    contract.function,
                    contract::places(&contract.ty.description).join(" or ")
                ));
            }
        }
        for (function, place) in counters::calls(&contracts) {
            if !outside.contains(&format!("{function}(")) {
                warnings.push(format!(
                    "firestore.rules never calls `{function}()`: call it in the `allow create` condition of {place}, so that a client's increment counts once (the Admin SDK and this crate bypass rules)"
                ));
            }
        }
        let groups = contracts
            .iter()
            .any(|contract| contract.ty.description.collection_group);
        if groups && !declares_version_2(text) {
            warnings.push(
                "firestore.rules does not declare `rules_version = '2';`: a collection group's rules need it for `{path=**}`".to_owned(),
            );
        }
    }
    Ok(Merged { text, warnings })
}

/// `text` with the crate's block (its lines, markers included) replaced by `block`: where the
/// markers are, or first in the documents match when there are none.
fn replace_block(text: &str, block: &str, crate_name: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let begin = begin(crate_name);
    let end = end(crate_name);
    let start = lines.iter().position(|line| line.trim() == begin);
    let stop = lines.iter().position(|line| line.trim() == end);
    let (before, after) = match (start, stop) {
        (Some(start), Some(stop)) if start < stop => (&lines[..start], &lines[stop + 1..]),
        (None, None) => {
            let Some(documents) = lines.iter().position(|line| opens_documents(line)) else {
                if block.is_empty() {
                    return Ok(text.to_owned());
                }
                return Err(format!(
                    "firestore.rules has no `match /databases/{{database}}/documents {{` line to place the generated functions after; add the two lines `{begin}` and `{end}` where they should go"
                ));
            };
            (&lines[..=documents], &lines[documents + 1..])
        }
        _ => {
            return Err(format!(
                "firestore.rules has one of `{begin}` and `{end}` without the other, or them out of order: restore the pair (what is between them is generated)"
            ));
        }
    };
    let mut out: String = before.concat();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(block);
    out.push_str(&after.concat());
    Ok(out)
}

/// `text` without the crate's block: what the user wrote.
fn without_block(text: &str, crate_name: &str) -> Result<String, String> {
    crate::fence::without_block(text, &begin(crate_name), &end(crate_name))
}

/// `match /databases/{database}/documents {`, however it is spaced.
fn opens_documents(line: &str) -> bool {
    let compact: Vec<&str> = line.split_whitespace().collect();
    let compact = compact.join(" ");
    let Some(rest) = compact.strip_prefix("match /databases/{") else {
        return false;
    };
    rest.ends_with("}/documents {") || rest.ends_with("}/documents{")
}

fn declares_version_2(text: &str) -> bool {
    text.lines().any(|line| {
        let compact: String = line.chars().filter(|ch| !ch.is_whitespace()).collect();
        compact.starts_with("rules_version='2'") || compact.starts_with("rules_version=\"2\"")
    })
}

#[cfg(test)]
mod tests;
