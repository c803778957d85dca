//! Adding chunk queries' answers into the query's total: each chunk's subtotal known exactly, or
//! left open to be asked again (see the module above).

use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};

use super::Number;
use crate::error::{Error, Result};

/// A part of the query's documents, its sum and its count of numbers known exactly: what
/// adds up to the total.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Subtotal {
    /// The integers' sum. At most 2^64 values of at most 2^63 each: an i128 cannot overflow.
    integers: i128,
    /// The doubles' sum, if the part holds any.
    doubles: Option<f64>,
    /// How many documents hold a number in the field: what an average divides by.
    numbers: u64,
}

impl Subtotal {
    pub(super) fn of_sum(sum: Number, numbers: u64) -> Subtotal {
        match sum {
            Number::Integer(i) => Subtotal {
                integers: i128::from(i),
                doubles: None,
                numbers,
            },
            Number::Double(d) => Subtotal {
                integers: 0,
                doubles: Some(d),
                numbers,
            },
        }
    }

    /// The subtotal of documents as read, their field's values added here.
    pub(super) fn of_documents<'d>(
        values: impl IntoIterator<Item = Option<&'d ValueType>>,
    ) -> Subtotal {
        values
            .into_iter()
            .fold(Subtotal::default(), |subtotal, value| match value {
                Some(ValueType::IntegerValue(i)) => Subtotal {
                    integers: subtotal.integers + i128::from(*i),
                    numbers: subtotal.numbers + 1,
                    ..subtotal
                },
                Some(ValueType::DoubleValue(d)) => Subtotal {
                    doubles: Some(subtotal.doubles.unwrap_or(0.0) + d),
                    numbers: subtotal.numbers + 1,
                    ..subtotal
                },
                _ => subtotal,
            })
    }

    pub(super) fn add(self, other: Subtotal) -> Subtotal {
        Subtotal {
            integers: self.integers + other.integers,
            doubles: match (self.doubles, other.doubles) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
            },
            numbers: self.numbers + other.numbers,
        }
    }

    /// The sum as Firestore returns it: an integer while every value is one and the sum fits.
    pub(super) fn sum(&self) -> Number {
        match (self.doubles, i64::try_from(self.integers)) {
            (None, Ok(exact)) => Number::Integer(exact),
            (None, Err(_)) => Number::Double(self.integers as f64),
            (Some(doubles), _) => Number::Double(self.integers as f64 + doubles),
        }
    }

    /// Whether the sum is exactly zero, so that an average is 0 (or none) whatever it divides by.
    pub(super) fn is_zero(&self) -> bool {
        self.integers == 0 && self.doubles.is_none_or(|d| d == 0.0)
    }

    pub(super) fn avg(&self) -> Option<f64> {
        (self.numbers > 0).then(|| self.sum().as_f64() / self.numbers as f64)
    }
}

/// One query's `count`, `sum` and `avg` of a field, as Firestore answered them. Beside a
/// `sum` or an `avg` of a field, `count` counts the documents that have the field, numbers
/// or not (measured in `tests/tests/suite/server_aggregates.rs`).
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
        let missing =
            |name: &str| Error::UnexpectedAnswer(format!("an aggregation returned no {name}"));
        let count = crate::query::count_of(rows)?;
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

    /// The exact sum, if the answer fixes it: an integer field's sum is exact unless it came
    /// back a double; a double field's sum is Firestore's own.
    pub(super) fn exact_sum(&self, integer: bool) -> Option<Number> {
        match self.sum {
            Number::Double(_) if integer => None,
            sum => Some(sum),
        }
    }

    /// How many documents hold a number, if the answer fixes it: none without an average;
    /// sum / avg when that is a whole count the average checks out with; one when only one
    /// document has the field. An average of 0 fixes nothing else (a chunk of 5, -5 and two
    /// nulls averages 0 over 2 of its 4 counted documents).
    pub(super) fn numbers(&self) -> Option<u64> {
        let avg = match self.avg {
            None => return Some(0),
            Some(avg) => avg,
        };
        if !avg.is_finite() {
            // A NaN or an infinity among doubles: so is the average of the whole, whatever it
            // divides by.
            return Some(self.count.max(1));
        }
        if self.count == 1 {
            return Some(1);
        }
        if avg == 0.0 {
            return None;
        }
        let sum = self.sum.as_f64();
        let numbers = (sum / avg).round();
        // Each count nearby gives an average at least 1/count apart: a match within far
        // less than that is the count.
        let matches = numbers >= 1.0
            && numbers <= self.count as f64
            && ((sum / numbers) - avg).abs() <= avg.abs() * 1e-12;
        matches.then_some(numbers as u64)
    }
}

/// The query's subtotals as the chunk queries answered them, each known or still open.
#[derive(Debug)]
pub(super) struct Subtotals {
    integer: bool,
    chunks: Vec<(ChunkAggregate, Option<Subtotal>)>,
}

impl Subtotals {
    pub(super) fn new(integer: bool, chunks: Vec<ChunkAggregate>) -> Subtotals {
        Subtotals {
            integer,
            chunks: chunks.into_iter().map(|chunk| (chunk, None)).collect(),
        }
    }

    /// The chunks whose subtotal the answers leave open: those whose sum is not exact, and,
    /// when an average is asked for, those whose count of numbers is not fixed, unless the
    /// total is zero (its average is then 0 whatever the count).
    pub(super) fn open(&self, average: bool) -> Vec<usize> {
        if self.chunks.len() == 1 {
            // One query over every shard value: its answers are the unsharded query's.
            return Vec::new();
        }
        let integer = self.integer;
        let sum_open = |chunk: &ChunkAggregate| chunk.exact_sum(integer).is_none();
        let open_sums: Vec<usize> = (0..self.chunks.len())
            .filter(|&i| self.chunks[i].1.is_none() && sum_open(&self.chunks[i].0))
            .collect();
        if !average || !open_sums.is_empty() {
            return open_sums;
        }
        let total = self.known_total();
        if total.is_zero() {
            return Vec::new();
        }
        (0..self.chunks.len())
            .filter(|&i| self.chunks[i].1.is_none() && self.chunks[i].0.numbers().is_none())
            .collect()
    }

    /// Chunk `i`'s subtotal, found by asking again.
    pub(super) fn settle(&mut self, i: usize, subtotal: Subtotal) {
        self.chunks[i].1 = Some(subtotal);
    }

    /// Every subtotal added, a subtotal left open counted by its sum and by its count of documents.
    pub(super) fn known_total(&self) -> Subtotal {
        self.chunks
            .iter()
            .map(|(chunk, settled)| match settled {
                Some(subtotal) => *subtotal,
                None => Subtotal::of_sum(chunk.sum, chunk.numbers().unwrap_or(chunk.count)),
            })
            .fold(Subtotal::default(), Subtotal::add)
    }

    /// The total, once nothing is open that the answer needs.
    pub(super) fn total(&self) -> (Number, Option<f64>) {
        if let [(only, None)] = self.chunks.as_slice() {
            // One query: its answers are Firestore's own.
            return (only.sum, only.avg);
        }
        let total = self.known_total();
        (total.sum(), total.avg())
    }
}

impl Number {
    #[cfg_attr(not(feature = "datastore"), allow(dead_code))]
    /// The total of partial sums as Firestore totals values: integers add exactly whatever
    /// their order, and the total is an integer when it fits in an `i64` (a partial sum past
    /// `i64::MAX` that later ones bring back does not make it a double); with a double among
    /// them, or a total that does not fit, it is a double.
    pub(crate) fn total(sums: impl IntoIterator<Item = Number>) -> Number {
        sums.into_iter()
            .map(|sum| Subtotal::of_sum(sum, 0))
            .fold(Subtotal::default(), Subtotal::add)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(count: u64, sum: Number) -> ChunkAggregate {
        let avg = (count > 0).then(|| sum.as_f64() / count as f64);
        ChunkAggregate { count, sum, avg }
    }

    /// The total of chunks whose answers fix their subtotals (nothing open).
    fn combine(chunks: &[ChunkAggregate]) -> (Number, Option<f64>) {
        let subtotals = Subtotals::new(false, chunks.to_vec());
        assert!(subtotals.open(true).is_empty(), "{chunks:?}");
        subtotals.total()
    }

    fn answer(count: u64, sum: Number, avg: Option<f64>) -> ChunkAggregate {
        ChunkAggregate { count, sum, avg }
    }

    /// An integer field's chunk sum that came back a double (past `i64::MAX`) is open, and
    /// so is only that chunk; a double field's never is; one chunk is the unsharded query.
    #[test]
    fn an_integer_sum_that_came_back_a_double_is_open() {
        let max = i64::MAX as f64;
        let chunks = vec![
            answer(2, Number::Double(2.0 * max), Some(max)),
            answer(1, Number::Integer(-i64::MAX), Some(-max)),
        ];
        assert_eq!(Subtotals::new(true, chunks.clone()).open(false), [0]);
        assert_eq!(Subtotals::new(true, chunks.clone()).open(true), [0]);
        assert!(Subtotals::new(false, chunks.clone()).open(true).is_empty());
        assert!(
            Subtotals::new(true, chunks[..1].to_vec())
                .open(true)
                .is_empty()
        );
        // Settled from its values, the total is the exact integer.
        let mut subtotals = Subtotals::new(true, chunks);
        subtotals.settle(
            0,
            Subtotal::of_documents([
                Some(&ValueType::IntegerValue(i64::MAX)),
                Some(&ValueType::IntegerValue(i64::MAX)),
            ]),
        );
        assert!(subtotals.open(true).is_empty());
        assert_eq!(
            subtotals.total(),
            (Number::Integer(i64::MAX), Some(max / 3.0))
        );
    }

    /// A chunk averaging 0 does not say how many of its counted documents hold numbers:
    /// open when an average is asked for and the total is not 0, and settled by its values
    /// (5, -5 and two nulls with 6 elsewhere average 2, not 6 / 5).
    #[test]
    fn a_zero_average_leaves_the_count_of_numbers_open() {
        let chunks = vec![
            answer(4, Number::Integer(0), Some(0.0)),
            answer(1, Number::Integer(6), Some(6.0)),
        ];
        assert!(Subtotals::new(true, chunks.clone()).open(false).is_empty());
        assert_eq!(Subtotals::new(true, chunks.clone()).open(true), [0]);
        let mut subtotals = Subtotals::new(true, chunks);
        let null = ValueType::NullValue(0);
        subtotals.settle(
            0,
            Subtotal::of_documents([
                Some(&ValueType::IntegerValue(5)),
                Some(&ValueType::IntegerValue(-5)),
                Some(&null),
                None,
            ]),
        );
        assert_eq!(subtotals.total(), (Number::Integer(6), Some(2.0)));
        // Every chunk 0: the average is 0 whatever it divides by.
        let zeros = vec![answer(4, Number::Integer(0), Some(0.0)); 2];
        let subtotals = Subtotals::new(true, zeros);
        assert!(subtotals.open(true).is_empty());
        assert_eq!(subtotals.total(), (Number::Integer(0), Some(0.0)));
    }

    /// sum / avg is the count of numbers when it checks out; an average it does not check
    /// out with (a reordered double sum that cancelled) leaves it open.
    #[test]
    fn the_count_of_numbers_is_what_sum_over_average_checks_out_with() {
        for numbers in [1u64, 2, 3, 7, 1000, 123_457] {
            for sum in [1i64, -3, 1 << 60, i64::MAX, -7_919] {
                let avg = sum as f64 / numbers as f64;
                let chunk = answer(numbers + 5, Number::Integer(sum), Some(avg));
                assert_eq!(chunk.numbers(), Some(numbers), "{sum} / {numbers}");
            }
        }
        assert_eq!(answer(3, Number::Integer(0), None).numbers(), Some(0));
        assert_eq!(answer(1, Number::Integer(0), Some(0.0)).numbers(), Some(1));
        assert_eq!(answer(3, Number::Integer(0), Some(0.0)).numbers(), None);
        // 1e16 + 1 - 1e16 summed in another order: 0 over 3 values averaging 1/3.
        assert_eq!(
            answer(3, Number::Double(0.0), Some(1.0 / 3.0)).numbers(),
            None
        );
        // More numbers than documents counted: not a count.
        assert_eq!(answer(2, Number::Integer(9), Some(3.0)).numbers(), None);
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
