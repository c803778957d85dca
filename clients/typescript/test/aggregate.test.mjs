import { test } from "node:test";
import assert from "node:assert/strict";

import { numbersIn, planOf, settle, splitEvenly } from "../test-dist/index.js";
import { checkSummed } from "../test-dist/aggregate.js";

// A seeded generator, so that a failure names its case.
function rng(seed) {
  let state = seed >>> 0;
  return (below) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % below;
  };
}

/** What Firestore answers for documents' values of a field: the count of documents that have
 * it (numbers or not), the sum of the numbers, their average (null without one). */
function answerOf(values) {
  const present = values.filter((v) => v !== undefined);
  const numbers = present.filter((v) => typeof v === "number");
  const sum = numbers.reduce((a, b) => a + b, 0);
  return { count: present.length, sum, avg: numbers.length ? sum / numbers.length : null };
}

test("how many numbers an answer averaged over, where it fixes it (the Rust cases)", () => {
  assert.equal(numbersIn({ count: 4, sum: 0, avg: null }), 0);
  assert.equal(numbersIn({ count: 1, sum: 0, avg: 0 }), 1);
  assert.equal(numbersIn({ count: 4, sum: 0, avg: 0 }), undefined);
  assert.equal(numbersIn({ count: 4, sum: 9, avg: 3 }), 3);
  assert.equal(numbersIn({ count: 3, sum: NaN, avg: NaN }), 3);
  assert.equal(numbersIn({ count: 2, sum: 7, avg: 3.4 }), undefined);
});

test("a zero average leaves its chunk open, settled by its values: 5, -5 and two nulls with 6 elsewhere average 2", async () => {
  const data = { a: [5, null], b: [-5, null], c: [6] };
  const reads = [];
  const total = await settle(
    [{ shards: ["a", "b"] }, { shards: ["c"] }],
    true,
    async ({ shards }) => answerOf(shards.flatMap((s) => data[s])),
    async ({ shards }) => {
      reads.push(shards);
      return shards.flatMap((s) => data[s]);
    },
  );
  assert.equal(total.sum, 6);
  assert.equal(total.average, 2);
  // Each shard value asked alone fixed its count: nothing read.
  assert.deepEqual(reads, []);
  assert.equal(total.stats.rounds, 2);
});

test("sums and averages across chunks equal those of the unsharded query, for any data", async () => {
  const random = rng(11);
  for (let trial = 0; trial < 3000; trial++) {
    const values = Array.from({ length: 1 + random(70) }, (_, i) => String(i));
    const chunks = splitEvenly(values, 1 + random(30)).map((shards) => ({ shards }));
    const perValue = new Map(values.map((v) => [v, []]));
    const all = [];
    for (let d = random(40); d > 0; d--) {
      const kind = random(10);
      // Integers (zeros and opposites often), a null, a string, a missing field.
      const value = kind < 6 ? random(7) - 3 : kind === 6 ? null : kind === 7 ? "x" : kind === 8 ? undefined : -(random(3));
      perValue.get(values[random(values.length)]).push(value);
      all.push(value);
    }
    let read = 0;
    const total = await settle(
      chunks,
      true,
      async ({ shards }) => answerOf(shards.flatMap((s) => perValue.get(s))),
      async ({ shards }) => {
        const out = shards.flatMap((s) => perValue.get(s)).filter((v) => v !== undefined);
        read += out.length;
        return out;
      },
    );
    const truth = answerOf(all);
    assert.equal(total.sum, truth.sum, `trial ${trial}`);
    assert.equal(total.average, truth.avg, `trial ${trial}: ${JSON.stringify([...perValue])}`);
    assert.equal(total.stats.documentsRead, read);
    const sumOnly = await settle(chunks, false, async ({ shards }) => answerOf(shards.flatMap((s) => perValue.get(s))), async () => {
      throw new Error("a sum alone reads no values");
    });
    assert.equal(sumOnly.sum, truth.sum);
  }
});

test("sums need their declaration, and no range on another field", () => {
  const d = {
    collectionGroup: "c",
    shardField: "shard",
    orderField: "at",
    direction: "ASCENDING",
    indexedFields: ["device"],
    rangeFields: ["level"],
    shardValues: ["0", "1"],
    aggregateFields: ["price"],
    aggregations: [{ field: "qty", compared: ["device"] }],
  };
  const eq = [{ field: "device", op: "==", value: "x" }];
  checkSummed(d, planOf(d, []), "price");
  checkSummed(d, planOf(d, eq), "qty");
  checkSummed(d, planOf(d, [{ field: "device", op: "in", values: ["x", "y"] }]), "qty");
  assert.throws(() => checkSummed(d, planOf(d, []), "qty"), /some queries only/);
  assert.throws(() => checkSummed(d, planOf(d, []), "nope"), /#\[sharded\(aggregate\)\]/);
  assert.throws(() => checkSummed(d, planOf(d, [{ field: "level", op: ">", value: 1 }]), "price"), /range on `level`/);
  // A range of the order field keeps the index: (shard, order field, summed field).
  checkSummed(d, planOf(d, [{ field: "at", op: ">", value: 1 }]), "price");
});

test("an OR sums a field only when each of its queries does", async () => {
  const { planFor, startState, withOr, withWhere } = await import("../test-dist/index.js");
  const d = {
    collectionGroup: "c",
    shardField: "shard",
    orderField: "at",
    direction: "ASCENDING",
    indexedFields: ["device", "site"],
    shardValues: ["0", "1"],
    aggregateFields: ["price"],
    aggregations: [
      { field: "qty", compared: ["device"] },
      { field: "qty", compared: ["site"] },
      { field: "cost", compared: ["device"] },
    ],
  };
  const start = startState("");
  const or = withOr(d, withWhere(d, start, "device", "==", "a"), d, withWhere(d, start, "site", "==", "b"));
  checkSummed(d, planFor(d, or), "price");
  checkSummed(d, planFor(d, or), "qty");
  assert.throws(() => checkSummed(d, planFor(d, or), "cost"), /some queries only/);
});
