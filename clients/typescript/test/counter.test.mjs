import { test } from "node:test";
import assert from "node:assert/strict";

import {
  checkIncrement,
  checkRecorded,
  counterOf,
  IncrementConflict,
  incrementDigest,
  descriptionsIn,
  incrementPaths,
  markerPath,
  newIncrementId,
  ShardedError,
} from "../test-dist/index.js";

const description = {
  collectionGroup: "posts",
  shardField: "shard",
  orderField: "at",
  direction: "DESCENDING",
  indexedFields: [],
  shardValues: ["0", "1", "2"],
  counterFields: [
    { field: "likes", shards: 4 },
    { field: "views", shards: 1 },
  ],
};

test("a counter is one the description declares, or an error naming those it does", () => {
  assert.deepEqual(counterOf(description, "likes"), { field: "likes", shards: 4 });
  assert.throws(() => counterOf(description, "shares"), (error) => {
    assert.ok(error instanceof ShardedError);
    assert.match(error.message, /`likes`, `views`/);
    return true;
  });
  const file = { shardedManaged: { crates: { app: { collections: [description] } } } };
  assert.equal(descriptionsIn(file)[0].counterFields.length, 2);
  const bad = { ...description, counterFields: [{ field: "likes", shards: 0 }] };
  assert.throws(() => descriptionsIn({ shardedManaged: { crates: { app: { collections: [bad] } } } }), ShardedError);
});

test("an increment's shard is drawn uniformly from the declared ones, its marker beside it", () => {
  const seen = new Map();
  for (let n = 0; n < 4000; n++) {
    const { shard, marker } = incrementPaths("posts/p1", counterOf(description, "likes"), "i1");
    assert.equal(marker, "posts/p1/_sharded_increments/i1");
    const match = /^posts\/p1\/_sharded_counter_likes\/(\d+)$/.exec(shard);
    assert.ok(match, shard);
    seen.set(match[1], (seen.get(match[1]) ?? 0) + 1);
  }
  assert.deepEqual([...seen.keys()].sort(), ["0", "1", "2", "3"]);
  for (const count of seen.values()) assert.ok(count > 800 && count < 1200, String(count));
  assert.equal(markerPath("rooms/r/notes/n", "x"), "rooms/r/notes/n/_sharded_increments/x");
});

test("an increment is checked before anything is sent", () => {
  assert.doesNotThrow(() => checkIncrement(-3, "request-17"));
  for (const by of [1.5, Number.NaN, 2 ** 60, -0, Infinity, "1", 1n]) {
    assert.throws(() => checkIncrement(by, "i"), ShardedError, String(by));
  }
  assert.throws(() => checkIncrement(-0, "i"), /not -0/);
  assert.doesNotThrow(() => checkIncrement(0, "i"));
  for (const id of ["", "a/b", ".", "..", "__x__", "x".repeat(1501)]) {
    assert.throws(() => checkIncrement(1, id), ShardedError, id);
  }
  const ids = new Set(Array.from({ length: 1000 }, newIncrementId));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9]{20}$/);
});

test("an increment id is bound to its counter and amount", async () => {
  const marker = { field: "likes", shard: "2", amount: 5, commit: "c" };
  assert.doesNotThrow(() => checkRecorded(marker, "posts/p", "r", "likes", 5));
  for (const [field, by] of [["likes", 7], ["views", 5], ["likes", -5]]) {
    assert.throws(
      () => checkRecorded(marker, "posts/p", "r", field, by),
      (error) => {
        assert.ok(error instanceof IncrementConflict && error instanceof ShardedError);
        assert.match(error.message, /applied as `likes` \+5/);
        assert.ok(error.message.includes(`\`${field}\` ${by >= 0 ? "+" : ""}${by}`), error.message);
        return true;
      },
    );
  }
  // A marker from before markers recorded their increment matches any.
  assert.doesNotThrow(() => checkRecorded({ expire_at: 1 }, "posts/p", "r", "views", 9));
  const digest = await incrementDigest("posts/p", "likes", 5, "r");
  assert.match(digest, /^[0-9a-f]{64}$/);
  assert.equal(digest, await incrementDigest("posts/p", "likes", 5, "r"));
  assert.notEqual(digest, await incrementDigest("posts/p", "likes", 6, "r"));
});

test("a live counter shows each new sum once, and stops on a shard that is not a counter's", async () => {
  const { followCounter } = await import("../test-dist/counter.js");
  let deliver;
  let fail;
  let stopped = 0;
  const listen = (values, failed) => {
    deliver = values;
    fail = failed;
    return () => stopped++;
  };
  const shown = [];
  const errors = [];
  const stop = followCounter(listen, (value) => shown.push(value), (error) => errors.push(error));
  deliver([]);
  deliver([2, undefined, 3]);
  deliver([5]);
  deliver([5, -1]);
  assert.deepEqual(shown, [0, 5, 4]);
  deliver([4, "x"]);
  assert.equal(stopped, 1);
  assert.ok(errors[0] instanceof ShardedError, String(errors[0]));
  const lost = new Error("listener lost");
  fail(lost);
  assert.equal(errors[1], lost);
  stop();
  assert.equal(stopped, 2);
  assert.deepEqual(shown, [0, 5, 4]);
});
