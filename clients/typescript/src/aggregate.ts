// `sum` and `average` of a numeric field across chunk queries, exact as the Rust library's
// (`sharded-runtime/src/query/aggregate`): each chunk answers its count, sum and average;
// where those fix the chunk's share (its sum, and how many of its documents hold a number),
// the total adds them; where they do not, the chunk is asked again one shard value at a time,
// and a shard value still open has its values read and added here.
//
// Only an average can leave a chunk open in JavaScript: Firestore's `average` skips values
// that are not numbers, which the `count` beside it counts, and sum / average gives that
// number except where the average is 0. (The Rust library also reopens an integer sum that
// came back a double past 2^63; a JavaScript number has no such distinction, and sums of
// integers are exact up to 2^53, as the SDKs' own are.)

import { type CollectionDescription, ShardedError } from "./description.js";
import { type Chunk, declaredFor, type QueryPlan } from "./plan.js";

/** One chunk query's answers, as the SDKs return them. */
export interface ChunkAggregate {
  count: number;
  sum: number;
  /** `null` when no document holds a number. */
  avg: number | null;
}

/** The total of a query's chunks, with what it cost. */
export interface AggregateTotal {
  sum: number;
  /** `null` when no document holds a number. */
  average: number | null;
  stats: { queries: number; documentsRead: number; rounds: number };
}

/** How many documents of an answer hold a number, if the answer fixes it (the Rust
 * `ChunkAggregate::numbers`). */
export function numbersIn(answer: ChunkAggregate): number | undefined {
  if (answer.avg === null) return 0;
  // A NaN or an infinity among the values: so is the average of the whole, whatever it
  // divides by.
  if (!Number.isFinite(answer.avg)) return Math.max(answer.count, 1);
  if (answer.count === 1) return 1;
  if (answer.avg === 0) return undefined;
  const numbers = Math.round(answer.sum / answer.avg);
  // Each count nearby gives an average at least 1/count apart: a match within far less
  // than that is the count.
  const matches =
    numbers >= 1 &&
    numbers <= answer.count &&
    Math.abs(answer.sum / numbers - answer.avg) <= Math.abs(answer.avg) * 1e-12;
  return matches ? numbers : undefined;
}

/** A part's sum and its count of numbers, known exactly. */
interface Subtotal {
  sum: number;
  numbers: number;
}

const add = (a: Subtotal, b: Subtotal): Subtotal => ({ sum: a.sum + b.sum, numbers: a.numbers + b.numbers });
const ZERO: Subtotal = { sum: 0, numbers: 0 };

/** The subtotal of values as read: numbers added in the order given. */
export function subtotalOf(values: unknown[]): Subtotal {
  return values.reduce<Subtotal>(
    (total, value) => (typeof value === "number" ? { sum: total.sum + value, numbers: total.numbers + 1 } : total),
    ZERO,
  );
}

/**
 * The exact sum and average over `chunks`: `ask(chunk)` sends one aggregation (count, sum,
 * average) over a chunk; `read(chunk)` reads its documents' values of the field, in the
 * query's order. `average` says whether the average is wanted (only it may
 * need more requests).
 */
export async function settle(
  chunks: Chunk[],
  average: boolean,
  ask: (chunk: Chunk) => Promise<ChunkAggregate>,
  read: (chunk: Chunk) => Promise<unknown[]>,
): Promise<AggregateTotal> {
  const stats = { queries: chunks.length, documentsRead: 0, rounds: 1 };
  const answers = await Promise.all(chunks.map(ask));
  if (answers.length === 1) {
    // One query over every shard value: its answers are the unsharded query's.
    const only = answers[0]!;
    return { sum: only.sum, average: only.avg, stats };
  }
  const known = (answer: ChunkAggregate): Subtotal => ({ sum: answer.sum, numbers: numbersIn(answer) ?? answer.count });
  const total = answers.map(known).reduce(add, ZERO);
  const open = average && total.sum !== 0 ? answers.flatMap((a, i) => (numbersIn(a) === undefined ? [i] : [])) : [];
  const settled = new Map<number, Subtotal>();
  if (open.length > 0) {
    stats.rounds += 1;
    const exact = await Promise.all(
      open.map(async (i) => {
        const chunk = chunks[i]!;
        if (chunk.shards.length === 1) return readSubtotal(chunk);
        const perValue = chunk.shards.map((value) => ({ ...chunk, shards: [value] }));
        stats.queries += perValue.length;
        const answers = await Promise.all(perValue.map(ask));
        let subtotal = ZERO;
        const unsettled: Chunk[] = [];
        answers.forEach((answer, j) => {
          const numbers = numbersIn(answer);
          if (numbers === undefined) unsettled.push(perValue[j]!);
          else subtotal = add(subtotal, { sum: answer.sum, numbers });
        });
        const read = await Promise.all(unsettled.map(readSubtotal));
        return read.reduce(add, subtotal);
      }),
    );
    open.forEach((i, j) => settled.set(i, exact[j]!));
  }
  const sum = answers.map((answer, i) => settled.get(i) ?? known(answer)).reduce(add, ZERO);
  return { sum: sum.sum, average: sum.numbers > 0 ? sum.sum / sum.numbers : null, stats };

  async function readSubtotal(chunk: Chunk): Promise<Subtotal> {
    stats.queries += 1;
    const values = await read(chunk);
    stats.documentsRead += values.length;
    return subtotalOf(values);
  }
}

/** Refuses a sum or an average the generated indexes do not serve: of a field not declared
 * `#[sharded(aggregate)]` for this query, or of a query filtered by range on another field
 * (no index holds both fields). */
export function checkSummed(d: CollectionDescription, plan: QueryPlan, field: string): void {
  if (plan.orderBy.length > 1) {
    throw new ShardedError(
      `a sum or average of a query filtered by range on \`${plan.orderBy[1]}\`: no index holds both the filtered and the summed field; count it, or read the documents`,
    );
  }
  if ((d.aggregateFields ?? []).includes(field)) return;
  const declared = (d.aggregations ?? []).filter((a) => a.field === field);
  if (declared.length === 0) {
    throw new ShardedError(`\`${field}\` has no sum or average: declare #[sharded(aggregate)] on it`);
  }
  // An OR sums a field only when each of its queries does: each is served by its own index.
  for (const part of plan.anyOf ?? [plan.filters]) {
    if (!declared.some((a) => declaredFor(a, part))) {
      throw new ShardedError(
        `\`${field}\` is summed by some queries only (#[sharded(aggregate(...))]), not this one: add it to the list`,
      );
    }
  }
}
