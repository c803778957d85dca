//! `sum` and `avg` of a numeric field across shards, exact across chunk queries.

use std::marker::PhantomData;

use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};
use serde::Serialize;

use crate::{Error, Result};

/// A Rust type stored as a Firestore number on every document: what `#[sharded(aggregate)]`
/// accepts. `Option` is not one (a `None` is stored as null, which `avg` skips but a count
/// does not), and neither are `u64`/`usize` (values above `i64::MAX` are stored wrapped).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be summed or averaged by sharded",
    label = "not a number stored on every document",
    note = "`#[sharded(aggregate)]` takes `i8`, `i16`, `i32`, `i64`, `isize`, `u8`, `u16`, `u32`, `f32` or `f64`: a value every document stores as a number, so an average across chunk queries can be weighted by their counts"
)]
pub trait Numeric: Serialize {}

macro_rules! numeric {
    ($($ty:ty),*) => { $(impl Numeric for $ty {})* };
}
numeric!(i8, i16, i32, i64, isize, u8, u16, u32, f32, f64);

/// A numeric field of `T` (`T::aggregates().price`), to pass to
/// [`ShardedQuery::sum`](crate::ShardedQuery::sum) and [`avg`](crate::ShardedQuery::avg).
pub struct NumericField<T> {
    pub(crate) path: &'static str,
    marker: PhantomData<fn() -> T>,
}

/// The numeric field `path` of `T`, of type `V`: what the derive's `T::aggregates()` is made
/// of, with every type written out, as `field`. `V: Numeric` is what
/// refuses an aggregate on a field that is not a number, on the field's type.
pub fn numeric_field<T, V: Numeric>(path: &'static str) -> NumericField<T> {
    NumericField {
        path,
        marker: PhantomData,
    }
}

impl<T> NumericField<T> {
    /// The stored field path.
    pub fn path(&self) -> &'static str {
        self.path
    }
}

impl<T> Clone for NumericField<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for NumericField<T> {}

impl<T> std::fmt::Debug for NumericField<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("NumericField").field(&self.path).finish()
    }
}

/// A sum as Firestore returns it: an integer while every value is an integer and the sum fits
/// in an `i64`, otherwise a double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// The exact sum of integers.
    Integer(i64),
    /// A sum with a double in it, or one that overflowed an `i64`.
    Double(f64),
}

impl Number {
    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Integer(i) => i as f64,
            Number::Double(d) => d,
        }
    }

    /// The total of partial sums as Firestore totals values: integers add exactly whatever
    /// their order, and the total is an integer when it fits in an `i64` (a partial sum past
    /// `i64::MAX` that later ones bring back does not make it a double); with a double among
    /// them, or a total that does not fit, it is a double.
    pub(crate) fn total(sums: impl IntoIterator<Item = Number>) -> Number {
        let mut integers: i128 = 0;
        let mut doubles: Option<f64> = None;
        for sum in sums {
            match sum {
                // At most 2^64 partial sums of at most 2^63 each: an i128 cannot overflow.
                Number::Integer(i) => integers += i128::from(i),
                Number::Double(d) => *doubles.get_or_insert(0.0) += d,
            }
        }
        match (doubles, i64::try_from(integers)) {
            (None, Ok(exact)) => Number::Integer(exact),
            (None, Err(_)) => Number::Double(integers as f64),
            (Some(doubles), _) => Number::Double(integers as f64 + doubles),
        }
    }
}

/// One chunk's `count`, `sum` and `avg` of a field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChunkAggregate {
    pub(crate) count: u64,
    pub(crate) sum: Number,
    pub(crate) avg: Option<f64>,
}

impl ChunkAggregate {
    pub(crate) fn from_rows(rows: &[Document]) -> Result<ChunkAggregate> {
        let field = |name: &str| {
            rows.first()
                .and_then(|row| row.fields.get(name))
                .and_then(|value| value.value_type.clone())
        };
        let missing = |name: &str| Error::InvalidQuery(format!("Firestore returned no {name}"));
        let count = super::count_of(rows)?;
        let sum = match field("sum") {
            Some(ValueType::IntegerValue(i)) => Number::Integer(i),
            Some(ValueType::DoubleValue(d)) => Number::Double(d),
            _ => return Err(missing("sum")),
        };
        let avg = match field("avg") {
            Some(ValueType::DoubleValue(d)) => Some(d),
            Some(ValueType::NullValue(_)) | None => None,
            _ => return Err(missing("avg")),
        };
        Ok(ChunkAggregate { count, sum, avg })
    }
}

/// The aggregate of the whole query from its chunks'. One chunk is one query: its values
/// are Firestore's own. Across chunks the sum adds as Firestore adds, and the average is the
/// total sum over the total count of numbers, not an average of averages.
///
/// Firestore's `avg` skips a document whose field holds no number (a null, a string: legacy
/// data), while the chunk's `count` counts it. Each chunk's count of numbers is what its own
/// sum and average fix, sum / avg, which for integers is exact; where a chunk averages
/// exactly zero they fix nothing, and its count stands in (right whenever that chunk holds
/// numbers only, as every document sharded writes does).
pub(crate) fn combine(chunks: &[ChunkAggregate]) -> (Number, Option<f64>) {
    if let [only] = chunks {
        return (only.sum, only.avg);
    }
    let sum = Number::total(chunks.iter().map(|chunk| chunk.sum));
    let numbers: f64 = chunks.iter().map(numbers_in).sum();
    let avg = (numbers > 0.0).then(|| sum.as_f64() / numbers);
    (sum, avg)
}

/// How many of a chunk's documents hold a number in the field: what its `avg` divided by.
fn numbers_in(chunk: &ChunkAggregate) -> f64 {
    let count = chunk.count as f64;
    match chunk.avg {
        None => 0.0,
        Some(avg) if avg != 0.0 && avg.is_finite() => (chunk.sum.as_f64() / avg)
            .round()
            .clamp(1.0, count.max(1.0)),
        Some(_) => count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(count: u64, sum: Number) -> ChunkAggregate {
        let avg = (count > 0).then(|| sum.as_f64() / count as f64);
        ChunkAggregate { count, sum, avg }
    }

    #[test]
    fn averages_are_weighted_by_count_not_averaged() {
        // 1 document of 10 and 3 of 2: the mean of 10, 2, 2, 2 is 4, not (10 + 2) / 2.
        let (sum, avg) = combine(&[chunk(1, Number::Integer(10)), chunk(3, Number::Integer(6))]);
        assert_eq!(sum, Number::Integer(16));
        assert_eq!(avg, Some(4.0));
        assert_eq!(
            combine(&[chunk(0, Number::Integer(0)); 2]),
            (Number::Integer(0), None)
        );
    }

    #[test]
    fn integer_sums_overflow_into_doubles_and_doubles_stay_doubles() {
        let (sum, _) = combine(&[
            chunk(1, Number::Integer(i64::MAX)),
            chunk(1, Number::Integer(1)),
        ]);
        assert_eq!(sum, Number::Double(i64::MAX as f64 + 1.0));
        let (sum, _) = combine(&[chunk(1, Number::Integer(1)), chunk(1, Number::Double(0.5))]);
        assert_eq!(sum, Number::Double(1.5));
    }

    #[test]
    fn averages_skip_the_documents_without_a_number() {
        // Chunk 1: 10, 20 and a null (count 3, avg 15); chunk 2: 30 and two strings.
        let with_legacy = |count, sum: i64, numbers: u64| ChunkAggregate {
            count,
            sum: Number::Integer(sum),
            avg: Some(sum as f64 / numbers as f64),
        };
        let (sum, avg) = combine(&[with_legacy(3, 30, 2), with_legacy(3, 30, 1)]);
        assert_eq!(sum, Number::Integer(60));
        assert_eq!(
            avg,
            Some(20.0),
            "60 over the 3 numbers, not the 6 documents"
        );
        // No number at all in a chunk: it adds nothing.
        let nothing = ChunkAggregate {
            count: 4,
            sum: Number::Integer(0),
            avg: None,
        };
        assert_eq!(combine(&[with_legacy(3, 30, 2), nothing]).1, Some(15.0));
    }

    #[test]
    fn integer_sums_are_exact_whatever_the_order_of_the_chunks() {
        let max = Number::Integer(i64::MAX);
        let min = Number::Integer(-i64::MAX);
        for order in [[max, max, min], [max, min, max], [min, max, max]] {
            let chunks: Vec<_> = order.iter().map(|sum| chunk(1, *sum)).collect();
            assert_eq!(combine(&chunks).0, max, "{order:?}");
        }
        let (sum, _) = combine(&[
            chunk(1, Number::Integer(i64::MIN)),
            chunk(1, Number::Integer(-1)),
        ]);
        assert_eq!(sum, Number::Double(i64::MIN as f64 - 1.0));
        assert_eq!(
            Number::total([Number::Integer(-4), Number::Integer(-2)]),
            Number::Integer(-6)
        );
    }
}
