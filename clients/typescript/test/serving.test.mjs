import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { descriptionsIn, indexServing, isServedByFile, planOf, withFilter } from "../test-dist/index.js";

// The examples' file, as `cargo build` writes it.
const file = JSON.parse(readFileSync(new URL("../../../examples/firestore.indexes.json", import.meta.url), "utf8"));
const [instruments, messages] = descriptionsIn(file);

test("plain queries on a sharded collection that production refuses, and why", () => {
  const newest = { collectionGroup: "instruments", orderBy: [["timestamp", "desc"]] };
  const served = indexServing(file, newest);
  assert.equal(served.served, false);
  assert.match(served.reason, /disables the single-field index of `timestamp`/);
  const byExchange = {
    collectionGroup: "instruments",
    where: [["exchange", "==", "XNAS"]],
    orderBy: [["timestamp", "desc"]],
  };
  const refused = indexServing(file, byExchange);
  assert.equal(refused.served, false);
  assert.equal(refused.needs, "exchange ASCENDING, timestamp DESCENDING");
  // What single-field indexes serve stays served: an equality, or one other field's order.
  assert.ok(isServedByFile(file, { collectionGroup: "instruments", where: [["symbol", "==", "AAPL"]] }));
  assert.ok(isServedByFile(file, { collectionGroup: "instruments", orderBy: [["symbol", "asc"]] }));
  assert.ok(!isServedByFile(file, { collectionGroup: "instruments", where: [["shard", "==", "x"]] }), "the shard field is exempted too");
  // A group scope has no single-field index by default.
  assert.ok(!isServedByFile(file, { collectionGroup: "messages", scope: "COLLECTION_GROUP", orderBy: [["text", "asc"]] }));
});

test("every chunk query the client plans is served by a composite index of the file", () => {
  const chunkQuery = (d, filters, scope = "COLLECTION") => {
    const plan = planOf(d, filters);
    const direction = plan.descending ? "desc" : "asc";
    return plan.chunks.map((chunk) => ({
      collectionGroup: d.collectionGroup,
      scope,
      where: [
        [d.shardField, plan.shardByEquality ? "==" : "in", chunk.shards],
        ...plan.filters.map((f) => [f.field, f.op, f.value ?? f.values]),
      ],
      orderBy: [...plan.orderBy.map((field) => [field, direction]), ["__name__", direction]],
    }));
  };
  const cases = [
    [instruments, []],
    [instruments, withFilter(instruments, [], "exchange", "==", "XNAS")],
    [instruments, withFilter(instruments, [], "price.currency", "in", ["USD", "EUR"])],
    [
      instruments,
      withFilter(instruments, withFilter(instruments, [], "exchange", "==", "XNAS"), "instrumentType", "==", "etf"),
    ],
    [messages, withFilter(messages, [], "author", "==", "ann")],
  ];
  for (const [d, filters] of cases) {
    for (const query of chunkQuery(d, filters)) {
      const serving = indexServing(file, query);
      assert.equal(serving.served, true, `${JSON.stringify(query)}: ${JSON.stringify(serving)}`);
      assert.equal(serving.by, "composite");
    }
  }
  for (const query of chunkQuery(messages, [], "COLLECTION_GROUP")) {
    assert.equal(indexServing(file, query).served, true, JSON.stringify(query));
  }
});
