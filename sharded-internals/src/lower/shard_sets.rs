//! The shard sets: the current one writes draw from (`shards`, `shard_values` or
//! `writes_per_second`), and while resharding the `previous(...)` and `retired(...)` ones.

use std::collections::HashSet;

use super::missing;
use crate::ast::Container;
use crate::attr::{Keyed, ShardSetAttrs};
use crate::ctxt::Ctxt;
use crate::model::{Resharding, numbered};
use crate::symbol::{MAX_SHARDS, WRITES_PER_SHARD};

/// The shard values writes draw from.
pub(super) fn shard_values(cx: &Ctxt, cont: &Container) -> Option<Vec<String>> {
    match shard_set(cx, &cont.attrs.set)? {
        Some(values) => Some(values),
        None => {
            if !cx.has_errors() {
                cx.syn_error(missing(
                    cont,
                    "missing the number of shards: add `shards = 3`, `shard_values = [\"x\", \"y\", \"z\"]` or `writes_per_second = 1500` to `#[sharded(...)]`",
                ));
            }
            None
        }
    }
}

/// The values of whichever of `shards`, `shard_values` and `writes_per_second` is given:
/// `Some(None)` when none is, `None` after an error.
fn shard_set(cx: &Ctxt, attrs: &ShardSetAttrs) -> Option<Option<Vec<String>>> {
    let given: Vec<&syn::Path> = [
        attrs.shards.as_ref().map(|k| &k.key),
        attrs.shard_values.as_ref().map(|k| &k.key),
        attrs.writes_per_second.as_ref().map(|k| &k.key),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() > 1 {
        let first = given[0]
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        for extra in &given[1..] {
            let key = extra
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            cx.error_spanned_by(
                extra,
                format!("`{key}` and `{first}` both set the number of shards; keep one"),
            );
        }
        return None;
    }
    if let Some(shards) = &attrs.shards {
        return Some(Some(numbered(shards.value)));
    }
    if let Some(writes) = &attrs.writes_per_second {
        let shards = writes.value.div_ceil(WRITES_PER_SHARD);
        if shards > MAX_SHARDS {
            cx.error_spanned_by(
                &writes.tokens,
                format!("{} writes per second need {shards} shards, more than the {MAX_SHARDS} supported", writes.value),
            );
            return None;
        }
        return Some(Some(numbered(shards)));
    }
    if let Some(values) = &attrs.shard_values {
        return explicit_values(cx, values).map(Some);
    }
    Some(None)
}

/// `previous(...)`: the set the collection moves from, and when the move began.
pub(super) fn previous(
    cx: &Ctxt,
    cont: &Container,
    current: Option<&[String]>,
) -> Option<Resharding> {
    let Some(previous) = &cont.attrs.previous else {
        return Some(Resharding::default());
    };
    let values = match shard_set(cx, &previous.value.set)? {
        Some(values) => values,
        None if previous.value.malformed => return None,
        None => {
            cx.error_spanned_by(
                &previous.tokens,
                "`previous(...)` needs the shard set the collection is moving from, e.g. `previous(shards = 3)`",
            );
            return None;
        }
    };
    let since = match &previous.value.since {
        Some(lit) => match crate::rfc3339::unix_seconds(&lit.value.value()) {
            Ok(seconds) => Some(seconds),
            Err(why) => {
                cx.error_spanned_by(
                    &lit.value,
                    format!("`since` is an RFC 3339 time such as \"2026-11-22T19:00:00Z\": {why}"),
                );
                return None;
            }
        },
        None => None,
    };
    if let Some(current) = current {
        let same = values.len() == current.len() && values.iter().all(|v| current.contains(v));
        if same {
            cx.error_spanned_by(
                &previous.tokens,
                "`previous(...)` gives the same shard values as the current set, so nothing is moving; remove it",
            );
            return None;
        }
    }
    Some(Resharding {
        previous_values: values,
        since,
        retired_values: Vec::new(),
    })
}

/// `retired(...)`: the values of a set a rebalance moved every document out of that queries
/// read no more (its values among the current or previous ones are read, so not retired).
pub(super) fn retired(
    cx: &Ctxt,
    cont: &Container,
    current: Option<&[String]>,
    resharding: &Resharding,
) -> Vec<String> {
    let Some(retired) = &cont.attrs.retired else {
        return Vec::new();
    };
    let values = match shard_set(cx, &retired.value.set) {
        Some(Some(values)) => values,
        None => return Vec::new(),
        Some(None) if retired.value.malformed => return Vec::new(),
        Some(None) => {
            cx.error_spanned_by(
                &retired.tokens,
                "`retired(...)` needs the shard set a rebalance moved every document out of, e.g. `retired(shards = 6)`",
            );
            return Vec::new();
        }
    };
    let Some(current) = current else {
        return Vec::new();
    };
    let retired_values: Vec<String> = values
        .into_iter()
        .filter(|value| !current.contains(value) && !resharding.previous_values.contains(value))
        .collect();
    if retired_values.is_empty() {
        cx.error_spanned_by(
            &retired.tokens,
            "every value of `retired(...)` is one that queries read (a current or previous value), so none is retired; remove it",
        );
    }
    retired_values
}

fn explicit_values(cx: &Ctxt, values: &Keyed<Vec<syn::LitStr>>) -> Option<Vec<String>> {
    if values.value.is_empty() {
        cx.error_spanned_by(
            &values.tokens,
            "`shard_values` is empty: list the values to spread writes over, e.g. `[\"x\", \"y\", \"z\"]`",
        );
        return None;
    }
    if values.value.len() as u64 > MAX_SHARDS {
        cx.error_spanned_by(
            &values.tokens,
            format!("more than {MAX_SHARDS} shard values"),
        );
        return None;
    }
    let mut seen = HashSet::new();
    let mut ok = true;
    for lit in &values.value {
        if !seen.insert(lit.value()) {
            cx.error_spanned_by(
                lit,
                format!("duplicate shard value \"{}\": each value must be distinct for writes to spread evenly", lit.value()),
            );
            ok = false;
        }
    }
    ok.then(|| values.value.iter().map(syn::LitStr::value).collect())
}
