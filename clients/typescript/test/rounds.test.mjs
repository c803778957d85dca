import { test } from "node:test";
import assert from "node:assert/strict";

import { firstRound, nextRound, splitEvenly } from "../test-dist/index.js";

// A seeded generator, so that a failure names its case.
function rng(seed) {
  let state = seed >>> 0;
  return (below) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % below;
  };
}

test("rounds of shares return exactly the first documents of the merge, in at most four rounds", () => {
  const random = rng(7);
  for (let trial = 0; trial < 5000; trial++) {
    const n = 31 + random(370);
    const total = random(300);
    const wanted = 1 + random(60);
    const values = Array.from({ length: n }, (_, i) => i);
    const chunks = splitEvenly(values, 30);
    const chunkOf = new Map();
    chunks.forEach((chunk, i) => chunk.forEach((v) => chunkOf.set(v, i)));
    // Document d (its own order) stored under a random value: each chunk holds its documents
    // in order.
    const perChunk = chunks.map(() => []);
    for (let d = 0; d < total; d++) perChunk[chunkOf.get(random(n))].push(d);
    const sizes = chunks.map((c) => c.length);
    const fetched = chunks.map(() => []);
    const ranOut = chunks.map(() => false);
    let asks = firstRound(wanted, sizes).map((ask, chunk) => [chunk, ask]);
    let rounds = 0;
    let read = 0;
    while (asks.length > 0) {
      rounds++;
      for (const [chunk, ask] of asks) {
        assert.ok(ask >= 1);
        const more = perChunk[chunk].slice(fetched[chunk].length, fetched[chunk].length + ask);
        read += more.length;
        fetched[chunk].push(...more);
        ranOut[chunk] = more.length < ask;
      }
      asks = nextRound(wanted, rounds, fetched, ranOut, sizes, (a, b) => a - b);
    }
    const merged = fetched.flat().sort((a, b) => a - b).slice(0, wanted);
    const expected = Array.from({ length: Math.min(total, wanted) }, (_, i) => i);
    assert.deepEqual(merged, expected, `n ${n} total ${total} wanted ${wanted}`);
    assert.ok(rounds <= 4, `${rounds} rounds`);
    assert.ok(read <= total);
  }
});
