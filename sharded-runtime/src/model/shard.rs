//! The shard value a write stores: drawn uniformly at random. [`crate::write::document`] adds it to
//! the document as it is serialized.

use rand::Rng;

/// A shard value drawn uniformly at random from `values`.
///
/// # Panics
/// If `values` is empty; the derive rejects an empty set of shard values.
pub fn draw_shard(values: &'static [&'static str]) -> &'static str {
    values[rand::rng().random_range(0..values.len())]
}

/// The most shard values a numbered set (`shards = n`) has; the derive refuses more.
const MAX_NUMBERED: usize = sharded_indexes::MAX_SHARDS as usize;

/// The values of `shards = n`, `"0"` to `n - 1`, shared by every type: a description takes
/// them from here rather than writing an array of its own, which each user's build would check
/// for each type.
///
/// # Panics
/// If `n` is more than `MAX_SHARDS` (at compile time, where the derive calls it).
pub const fn numbered_shards(n: usize) -> &'static [&'static str] {
    NUMBERED.split_at(n).0
}

/// `"0"` to `"999"`, each a slice of [`DIGITS`].
const NUMBERED: [&str; MAX_NUMBERED] = {
    let mut values = [""; MAX_NUMBERED];
    let (mut n, mut rest): (usize, &[u8]) = (0, &DIGITS);
    while n < MAX_NUMBERED {
        let (value, tail) = rest.split_at(decimal_len(n));
        values[n] = match std::str::from_utf8(value) {
            Ok(value) => value,
            Err(_) => panic!("digits are ASCII"),
        };
        (n, rest) = (n + 1, tail);
    }
    values
};

/// The decimal numbers 0 to `MAX_NUMBERED - 1`, written one after another.
const DIGITS: [u8; digits_len()] = {
    let mut digits = [0; digits_len()];
    let (mut n, mut at) = (0, 0);
    while n < MAX_NUMBERED {
        let len = decimal_len(n);
        let (mut i, mut rest) = (len, n);
        while i > 0 {
            i -= 1;
            digits[at + i] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        (n, at) = (n + 1, at + len);
    }
    digits
};

const fn decimal_len(n: usize) -> usize {
    if n < 10 { 1 } else { 1 + decimal_len(n / 10) }
}

const fn digits_len() -> usize {
    let (mut n, mut len) = (0, 0);
    while n < MAX_NUMBERED {
        len += decimal_len(n);
        n += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_shards_are_the_decimal_numbers_below_n() {
        for n in [0, 1, 3, 10, 11, 100, 101, MAX_NUMBERED] {
            let expected: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            assert_eq!(numbered_shards(n), expected);
        }
    }

    #[test]
    fn draws_only_given_values() {
        const VALUES: &[&str] = &["x", "y", "z"];
        for _ in 0..1000 {
            assert!(VALUES.contains(&draw_shard(VALUES)));
        }
    }
}
