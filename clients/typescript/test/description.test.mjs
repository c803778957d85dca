import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  descriptionOf,
  descriptionsIn,
  drawShard,
  newValuesShare,
  readValues,
  segments,
  ShardedError,
  splitEvenly,
  withShard,
} from "../test-dist/index.js";

const examples = readFileSync(new URL("../../../examples/firestore.indexes.json", import.meta.url), "utf8");

test("the descriptions are read from the index file the Rust build writes", () => {
  const all = descriptionsIn(examples);
  assert.deepEqual(all.map((d) => d.collectionGroup).sort(), ["instruments", "messages"]);
  const messages = descriptionOf(examples, "Message");
  assert.deepEqual(messages.parentCollections, ["rooms"]);
  assert.equal(messages.groupQueries, true);
  assert.equal(descriptionOf(examples, "instruments").orderType, "timestamp");
  assert.throws(() => descriptionOf(examples, "Nope"), ShardedError);
  assert.throws(() => descriptionsIn("{}"), /shardedManaged/);
});

test("field paths split into their unquoted names", () => {
  assert.deepEqual(segments("price.currency"), ["price", "currency"]);
  assert.deepEqual(segments("`x.y`.z"), ["x.y", "z"]);
  assert.deepEqual(segments("`a\\`b`"), ["a`b"]);
});

test("shard values split into the fewest even chunks of at most 30", () => {
  const values = Array.from({ length: 61 }, (_, i) => String(i));
  assert.deepEqual(splitEvenly(values, 30).map((c) => c.length), [21, 20, 20]);
  assert.deepEqual(splitEvenly(values.slice(0, 40), 30).map((c) => c.length), [20, 20]);
  assert.deepEqual(splitEvenly(values.slice(0, 3), 30).map((c) => c.length), [3]);
  assert.deepEqual(splitEvenly(values, 30).flat(), values);
});

const base = {
  collectionGroup: "c",
  shardField: "shard",
  orderField: "at",
  direction: "DESCENDING",
  indexedFields: [],
  shardValues: ["0", "1", "2"],
};

test("a write draws every current value, uniformly", () => {
  const seen = new Map();
  for (let i = 0; i < 3000; i++) {
    const value = drawShard(base);
    seen.set(value, (seen.get(value) ?? 0) + 1);
  }
  assert.deepEqual([...seen.keys()].sort(), ["0", "1", "2"]);
  for (const n of seen.values()) assert.ok(n > 800 && n < 1200, `${n}`);
  assert.equal(withShard(base, { at: 1 }).at, 1);
  assert.ok(["0", "1", "2"].includes(withShard(base, { at: 1 }).shard));
  assert.throws(() => withShard(base, { shard: "0" }), ShardedError);
});

test("while resharding, new values ramp 500/50/5 to their even share, from `since`", () => {
  const grow = { ...base, shardValues: ["0", "1", "2", "3", "4", "5"], previousShardValues: ["0", "1", "2"] };
  const minute = 60_000;
  assert.equal(newValuesShare(grow, 0), 1 / 3);
  assert.equal(newValuesShare(grow, 5 * minute), 1 / 2);
  const wide = { ...base, shardValues: Array.from({ length: 30 }, (_, i) => String(i)), previousShardValues: ["0", "1", "2"] };
  for (const [at, share] of [[0, 1 / 3], [5, 1 / 2], [10, 3 / 4], [15, 0.9], [60, 0.9]]) {
    assert.ok(Math.abs(newValuesShare(wide, at * minute) - share) < 1e-12, `${at}: ${newValuesShare(wide, at * minute)}`);
  }
  // Before `since`, the previous set only: what a process still on the old type reads.
  const since = { ...grow, reshardSince: 2_000_000_000 };
  for (let i = 0; i < 200; i++) {
    assert.ok(["0", "1", "2"].includes(drawShard(since, 1_999_999_000_000)));
  }
  // Reads cover both sets; retired values are neither read nor drawn.
  assert.deepEqual(readValues({ ...grow, previousShardValues: ["0", "9"] }), ["0", "1", "2", "3", "4", "5", "9"]);
});

test("filters the indexes would not serve are refused before anything is sent", async () => {
  const { withFilter } = await import("../test-dist/index.js");
  const d = { ...base, indexedFields: ["device", "site"], fieldSets: [["device", "kind"]], arrayFields: ["tags"] };
  assert.equal(withFilter(d, [], "device", "==", "x").length, 1);
  assert.throws(() => withFilter(d, [], "symbol", "==", "x"), /no equality query/);
  assert.throws(() => withFilter(d, [], "tags", "==", "x"), /no equality query/);
  assert.throws(() => withFilter(d, [], "device", "array-contains", "x"), /no array-contains/);
  assert.throws(() => withFilter(d, [], "device", "in", Array(31).fill("x")), /1 to 30/);
  // Two equalities need their set; `device` and `site` were declared one by one.
  assert.equal(withFilter(d, withFilter(d, [], "device", "==", 1), "kind", "==", 2).length, 2);
  assert.throws(() => withFilter(d, withFilter(d, [], "device", "==", 1), "site", "==", 2), /index\(device, site\)/);
  assert.throws(() => withFilter(d, withFilter(d, [], "tags", "array-contains", 1), "device", "==", 2), /array-contains/);
  // Ranges on the order field, one bound of each side.
  const ranged = withFilter(d, withFilter(d, [], "at", ">=", 1), "at", "<", 5);
  assert.equal(ranged.length, 2);
  assert.throws(() => withFilter(d, ranged, "at", ">", 0), /lower bound/);
  assert.throws(() => withFilter(d, [], "device", "<", 0), /order field/);
});
