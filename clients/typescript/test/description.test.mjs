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

test("ranges, `!=` and `not-in` on a declared field: what Firestore and the indexes take", async () => {
  const { withFilter, planOf, cursorValues, compareInPlan } = await import("../test-dist/index.js");
  const d = {
    ...base,
    indexedFields: ["device"],
    arrayFields: ["tags"],
    rangeFields: ["level"],
    ranges: [{ field: "price", compared: ["device"] }],
  };
  const f = (filters, field, op, value) => withFilter(d, filters, field, op, value);
  // Several filters on one field apply together; the query orders by it after the order field.
  const between = f(f([], "level", ">", 1), "level", "<=", 5);
  const plan = planOf(d, between);
  assert.deepEqual(plan.orderBy, ["at", "level"]);
  assert.equal(plan.descending, true);
  assert.equal(plan.shardByEquality, false);
  assert.deepEqual(planOf(d, between, true).descending, false);
  assert.throws(() => f([], "device", ">", 1), /#\[sharded\(range\)\]/);
  assert.throws(() => f([], "at", "!=", 1), /ranges .* only/);
  assert.throws(() => f(between, "price", ">", 1), /range filters on `level`, `price`: .*#\[sharded\(ranges\(\.\.\.\)\)\]/);
  assert.throws(() => f(f([], "device", "==", "x"), "device", ">", 1), /#\[sharded\(range\)\]/);
  assert.throws(() => f(f([], "level", "!=", 1), "level", "not-in", [2]), /one `!=` or `not-in`/);
  assert.throws(() => f(f([], "device", "in", ["a", "b"]), "level", "not-in", [2]), /no `not-in`/);
  assert.throws(() => f([], "level", "not-in", Array(11).fill(1)), /1 to 10/);
  assert.throws(() => f([], "level", "not-in", []), /1 to 10/);
  // `!=` stands beside an `in`; a `not-in` reads one shard value per query, by `==`.
  const notIn = planOf(d, f([], "level", "not-in", [1, 2]));
  assert.equal(notIn.shardByEquality, true);
  assert.deepEqual(notIn.chunks, [{ shards: ["0"] }, { shards: ["1"] }, { shards: ["2"] }]);
  assert.equal(planOf(d, f(f([], "device", "in", ["a"]), "level", "!=", 3)).shardByEquality, false);
  // A range declared for `device` queries only.
  assert.deepEqual(planOf(d, f(f([], "device", "==", "x"), "price", ">", 1)).orderBy, ["at", "price"]);
  assert.throws(() => planOf(d, f([], "price", ">", 1)), /some queries only/);
  // Cursors carry the range field's value; one without it is refused.
  assert.deepEqual(cursorValues(plan, { order: 5, then: [2], path: "c/x" }), [5, 2]);
  assert.throws(() => cursorValues(plan, { order: 5, path: "c/x" }), /no value of `level`/);
  // The merge orders by the order field, then the range field, then the name; descending here.
  assert.ok(compareInPlan(plan, [5, 1], "c/a", [5, 2], "c/a") > 0);
  assert.ok(compareInPlan(plan, [5, 1], "c/a", [5, 1], "c/b") > 0);
  assert.ok(compareInPlan(plan, [6, 9], "c/a", [5, 1], "c/b") < 0);
});

test("filters on a declared set of range fields order by each, by path, as the Rust plan does", async () => {
  const { withFilter, planOf, cursorValues, compareInPlan } = await import("../test-dist/index.js");
  const { cursorAt } = await import("../test-dist/plan.js");
  const d = {
    ...base,
    indexedFields: ["device"],
    rangeFields: ["level", "price", "weight"],
    rangeSets: [["level", "price"]],
  };
  const f = (filters, field, op, value) => withFilter(d, filters, field, op, value);
  // Filtered in either order, the query orders by (at, level, price), then the name.
  const both = f(f([], "price", "<", 9), "level", ">=", 2);
  const plan = planOf(d, both);
  assert.deepEqual(plan.orderBy, ["at", "level", "price"]);
  assert.deepEqual(planOf(d, f(f([], "level", ">=", 2), "price", "<", 9)).orderBy, plan.orderBy);
  // A pair not declared together, and a second `!=` kind on another field, are refused.
  assert.throws(() => f(both, "weight", ">", 1), /range filters on `level`, `price`, `weight`/);
  assert.throws(() => f(f([], "level", "!=", 1), "price", "not-in", [2]), /one `!=` or `not-in`/);
  // Cursors carry both fields' values, in the plan's order; one short of them is refused.
  const cursor = cursorAt([5, 2, 8], "c/x");
  assert.deepEqual(cursor.then, [2, 8]);
  assert.deepEqual(cursorValues(plan, cursor), [5, 2, 8]);
  assert.throws(() => cursorValues(plan, { order: 5, then: [2], path: "c/x" }), /no value of `price`/);
  // The merge compares the order field, then each range field, then the name; descending.
  assert.ok(compareInPlan(plan, [5, 2, 1], "c/a", [5, 2, 3], "c/a") > 0);
  assert.ok(compareInPlan(plan, [5, 3, 1], "c/a", [5, 2, 9], "c/a") < 0);
  assert.ok(compareInPlan(plan, [5, 2, 1], "c/a", [5, 2, 1], "c/b") > 0);
});

test("a set's fields order as the description lists them, past U+FFFF too, where UTF-16 order differs", async () => {
  const { withFilter, planOf } = await import("../test-dist/index.js");
  // The Rust derive orders a set by code points: U+FF21 before U+1F600. As UTF-16 code units
  // the emoji (0xD83D 0xDE00) would come first, and the query would need another index.
  const [wide, emoji] = ["\uFF21", "\u{1F600}"];
  assert.ok(emoji < wide, "JavaScript's own order is the other one");
  const d = { ...base, rangeFields: [wide, emoji], rangeSets: [[wide, emoji]] };
  const f = (filters, field, op, value) => withFilter(d, filters, field, op, value);
  for (const filters of [f(f([], emoji, "<", 9), wide, ">", 1), f(f([], wide, ">", 1), emoji, "<", 9)]) {
    assert.deepEqual(planOf(d, filters).orderBy, ["at", wide, emoji]);
  }
});

test("an `in` query's pairs of (shard value, `in` value) are cut as the Rust fan-out cuts them", async () => {
  const { chunksOf, weightOf, withFilter } = await import("../test-dist/index.js");
  for (const n of [1, 2, 3, 6, 29, 30, 31, 40, 61, 100]) {
    const d = { ...base, indexedFields: ["device"], shardValues: Array.from({ length: n }, (_, i) => String(i)) };
    for (let k = 1; k <= 30; k++) {
      const values = Array.from({ length: k }, (_, i) => `v${i}`);
      const chunks = chunksOf(d, withFilter(d, [], "device", "in", values));
      const seen = new Set();
      for (const chunk of chunks) {
        assert.ok(weightOf(chunk) <= 30 && chunk.shards.length > 0 && chunk.inValues.length > 0);
        for (const shard of chunk.shards) for (const v of chunk.inValues) seen.add(`${shard}/${v}`);
      }
      assert.equal(seen.size, n * k, `n ${n} k ${k}: every pair`);
      assert.equal(chunks.reduce((a, c) => a + weightOf(c), 0), n * k, `n ${n} k ${k}: once`);
    }
  }
  // 16 values over 3 shard values: two groups of 8 values by all 3 shard values (2 queries),
  // not 16 values by one shard value each (3 queries).
  const three = { ...base, indexedFields: ["device"] };
  const sixteen = chunksOf(three, withFilter(three, [], "device", "in", Array.from({ length: 16 }, (_, i) => i)));
  assert.deepEqual(sixteen.map((c) => [c.shards.length, c.inValues.length]), [[3, 8], [3, 8]]);
  // Values Firestore holds equal are asked for once.
  assert.deepEqual(withFilter(three, [], "device", "in", [1, 1.0, 0, -0, "a", "a"])[0].values, [1, 0, "a"]);
});

test("an OR: every chunk asks for the whole of it; what Firestore or the indexes refuse", async () => {
  const { planFor, startState, withOr, withWhere, weightOf, withLimit } = await import("../test-dist/index.js");
  const d = {
    ...base,
    shardValues: Array.from({ length: 40 }, (_, i) => String(i)),
    indexedFields: ["device"],
    arrayFields: ["tags"],
    rangeFields: ["level"],
  };
  const start = startState("");
  const w = (s, field, op, value) => withWhere(d, s, field, op, value);
  const one = w(start, "device", "==", "d1");
  const tagged = w(start, "tags", "array-contains", "t1");
  const joined = withOr(d, one, d, tagged);
  const plan = planFor(d, joined);
  assert.deepEqual(plan.anyOf, [one.filters, tagged.filters]);
  assert.deepEqual(plan.filters, []);
  // Two disjunctions per shard value: chunks of at most 15 values, 30 disjunctions each.
  assert.deepEqual(plan.chunks.map((c) => c.shards.length), [14, 13, 13]);
  assert.ok(plan.chunks.every((c) => weightOf(c) <= 30));
  // An `in` counts its values.
  const some = withOr(d, w(start, "device", "in", ["a", "b", "c"]), d, tagged);
  assert.ok(planFor(d, some).chunks.every((c) => c.disjunctions === 4 && c.shards.length <= 7));
  // A range of the order field applies to the whole.
  const ranged = w(joined, "at", ">=", 5);
  assert.deepEqual(planFor(d, ranged).filters, [{ field: "at", op: ">=", value: 5 }]);
  assert.throws(() => w(joined, "device", "==", "d2"), /before joining them/);
  assert.throws(() => withOr(d, one, d, w(start, "at", ">", 1)), /no range of its own/);
  assert.throws(() => withOr(d, one, d, withLimit(tagged, 3)), /no limit or cursor/);
  assert.throws(() => withOr(d, one, d, joined), /one at a time/);
  assert.throws(() => withOr(d, one, d, { ...tagged, scope: "sites/s1" }), /one scope/);
  assert.throws(() => withOr(d, one, { ...d }, tagged), /one collection/);
  assert.throws(() => planFor(d, withOr(d, start, d, tagged)), /whole collection/);
  assert.throws(() => planFor(d, withOr(d, w(start, "level", ">", 1), d, tagged)), /does not go with an OR/);
  const many = Array.from({ length: 30 }, (_, i) => i);
  assert.throws(() => planFor(d, withOr(d, w(start, "device", "in", many), d, tagged)), /31 disjunctions/);
});
