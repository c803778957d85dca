//! The shard value a write stores: drawn uniformly at random. [`crate::document`] adds it to
//! the document as it is serialized.

use rand::Rng;

/// A shard value drawn uniformly at random from `values`.
///
/// # Panics
/// If `values` is empty; the derive rejects an empty set of shard values.
pub fn draw_shard(values: &'static [&'static str]) -> &'static str {
    values[rand::rng().random_range(0..values.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_only_given_values() {
        const VALUES: &[&str] = &["x", "y", "z"];
        for _ in 0..1000 {
            assert!(VALUES.contains(&draw_shard(VALUES)));
        }
    }
}
