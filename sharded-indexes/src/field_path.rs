//! Field paths as Firestore spells them: segments joined by `.`, each bare when it is an
//! identifier (`[A-Za-z_][A-Za-z0-9_]*`) and backtick-quoted otherwise. One implementation, in
//! `const fn`s: the front end calls it on the paths it knows, the runtime at compile time on
//! nested paths whose stored names only the compiler sees.

/// Whether Firestore takes `segment` bare in a field path.
pub const fn is_simple(segment: &[u8]) -> bool {
    if segment.is_empty() || !(segment[0].is_ascii_alphabetic() || segment[0] == b'_') {
        return false;
    }
    let mut i = 1;
    while i < segment.len() {
        if !(segment[i].is_ascii_alphanumeric() || segment[i] == b'_') {
            return false;
        }
        i += 1;
    }
    true
}

/// The name a one-segment path stands for, unquoted (`shard-id` for `` `shard-id` ``), at
/// compile time: the shard field is described once, as a path, and its stored name read
/// from it. A quoted segment with an escape in it (a name holding `` ` `` or `\`) has no
/// borrowed unquoted form; the front end refuses such a shard field name, and this panics
/// (at compile time, in a `const`) on one.
pub const fn unquoted_segment(path: &str) -> &str {
    let bytes = path.as_bytes();
    if bytes.len() < 2 || bytes[0] != b'`' || bytes[bytes.len() - 1] != b'`' {
        return path;
    }
    let mut i = 1;
    while i < bytes.len() - 1 {
        if bytes[i] == b'\\' {
            panic!("a quoted field path segment with an escape has no borrowed unquoted form");
        }
        i += 1;
    }
    let (_, rest) = path.split_at(1);
    rest.split_at(rest.len() - 1).0
}

/// The length of the field path of `segments`.
pub const fn path_len(segments: &[&str]) -> usize {
    let mut len = 0;
    let mut i = 0;
    while i < segments.len() {
        let segment = segments[i].as_bytes();
        if i > 0 {
            len += 1;
        }
        if is_simple(segment) {
            len += segment.len();
        } else {
            len += 2;
            let mut j = 0;
            while j < segment.len() {
                len += if segment[j] == b'`' || segment[j] == b'\\' {
                    2
                } else {
                    1
                };
                j += 1;
            }
        }
        i += 1;
    }
    len
}

/// Writes the field path of `segments` at the start of `out`, which holds at least
/// [`path_len`] bytes.
pub const fn write_path(segments: &[&str], out: &mut [u8]) {
    let mut k = 0;
    let mut i = 0;
    while i < segments.len() {
        let segment = segments[i].as_bytes();
        if i > 0 {
            out[k] = b'.';
            k += 1;
        }
        let simple = is_simple(segment);
        if !simple {
            out[k] = b'`';
            k += 1;
        }
        let mut j = 0;
        while j < segment.len() {
            if !simple && (segment[j] == b'`' || segment[j] == b'\\') {
                out[k] = b'\\';
                k += 1;
            }
            out[k] = segment[j];
            k += 1;
            j += 1;
        }
        if !simple {
            out[k] = b'`';
            k += 1;
        }
        i += 1;
    }
}

/// The field path of `segments`.
pub fn field_path(segments: &[&str]) -> String {
    let mut out = vec![0; path_len(segments)];
    write_path(segments, &mut out);
    String::from_utf8(out).expect("segments are UTF-8, and the quoting adds ASCII only")
}

/// The names a field path stands for, unquoted: `` `x.y`.z `` is `x.y`, then `z`.
pub fn segments(path: &str) -> Vec<String> {
    let mut segments = vec![String::new()];
    let mut quoted = false;
    let mut chars = path.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '`' => quoted = !quoted,
            '\\' if quoted => segments
                .last_mut()
                .expect("one segment")
                .extend(chars.next()),
            '.' if !quoted => segments.push(String::new()),
            _ => segments.last_mut().expect("one segment").push(ch),
        }
    }
    segments
}

/// The order of field paths by their unquoted segments, one after another: the order
/// Firestore adds inequality fields to a query's order in (by their names, measured on
/// top-level fields in `server_inequalities.rs`).
pub fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    segments(a).cmp(&segments(b))
}

#[cfg(test)]
mod tests {

    #[test]
    fn paths_order_by_their_segments_not_their_text() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        assert_eq!(path_order("price", "qty"), Less);
        assert_eq!(path_order("qty", "price"), Greater);
        assert_eq!(path_order("a.b", "a.b"), Equal);
        // As text, `a!` (0x21) sorts before `a.z` (0x2E); by segments `a` comes first.
        assert_eq!(path_order("a.z", "`a!`"), Less);
        assert_eq!(path_order("`x.y`", "x.y"), Greater);
        // By code points: U+FF21 before U+1F600 (as UTF-16 code units it would be after).
        assert_eq!(path_order("\u{FF21}", "\u{1F600}"), Less);
    }
    use super::*;

    #[test]
    fn a_path_splits_into_its_unquoted_names() {
        assert_eq!(segments("price.currency"), ["price", "currency"]);
        assert_eq!(segments("`x.y`.z"), ["x.y", "z"]);
        assert_eq!(segments("`a\\`b`"), ["a`b"]);
        for names in [
            &["a b", "c.d", "e`f", "g\\h"][..],
            &["plain"],
            &["1st", "x"],
        ] {
            assert_eq!(segments(&field_path(names)), names, "{names:?}");
        }
    }

    #[test]
    fn one_segment_paths_unquote_to_their_name() {
        for name in ["shard", "shard-id", "1st", "région", "_x", "a b"] {
            assert_eq!(unquoted_segment(&field_path(&[name])), name);
        }
        const NAME: &str = unquoted_segment("`shard-id`");
        assert_eq!(NAME, "shard-id");
    }

    #[test]
    fn segments_are_quoted_only_when_needed() {
        assert_eq!(field_path(&["price", "currency"]), "price.currency");
        assert_eq!(field_path(&["_private1"]), "_private1");
        assert_eq!(field_path(&["x-y"]), "`x-y`");
        assert_eq!(field_path(&["1st", "a`b"]), "`1st`.`a\\`b`");
        assert_eq!(field_path(&["place", "région"]), "place.`région`");
        assert_eq!(field_path(&["a\\b"]), "`a\\\\b`");
        assert_eq!(
            field_path(&["instrument type", "code"]),
            "`instrument type`.code"
        );
        const LEN: usize = path_len(&["x-y", "z"]);
        assert_eq!(LEN, "`x-y`.z".len());
    }
}
