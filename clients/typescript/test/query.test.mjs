import { test } from "node:test";
import assert from "node:assert/strict";

import { initializeApp } from "firebase/app";
import { getFirestore } from "firebase/firestore";

import { ShardedCollection, ShardedError } from "../test-dist/index.js";

const description = {
  collectionGroup: "posts",
  shardField: "shard",
  orderField: "at",
  direction: "DESCENDING",
  indexedFields: ["author"],
  shardValues: ["0", "1", "2"],
};

// No request is sent: the refusals come before anything is.
const db = getFirestore(initializeApp({ projectId: "offline" }, "query-test"));

test("a page before a cursor is refused on a type not declared reversible", () => {
  const posts = new ShardedCollection(db, description);
  const cursor = { order: 1, path: "posts/p1" };
  assert.throws(
    () => posts.query().limit(5).before(cursor),
    (error) => {
      assert.ok(error instanceof ShardedError);
      assert.match(error.message, /not declared `reversible`/);
      return true;
    },
  );
  const reversible = new ShardedCollection(db, { ...description, reversible: true });
  assert.doesNotThrow(() => reversible.query().limit(5).before(cursor));
});

test("unexpired(now) is a range on the expiry field, refused on a type without one", () => {
  const expiring = new ShardedCollection(db, {
    ...description,
    rangeFields: ["expires"],
    expiryField: "expires",
  });
  const now = new Date("2026-12-08T00:00:00Z");
  const plan = expiring.query().where("author", "==", "ann").unexpired(now).plan();
  assert.deepEqual(plan, expiring.query().where("author", "==", "ann").where("expires", ">", now).plan());
  assert.equal(plan.orderBy[1], "expires");
  assert.deepEqual(plan.filters.at(-1), { field: "expires", op: ">", value: now });
  const plain = new ShardedCollection(db, description);
  assert.throws(
    () => plain.query().unexpired(now),
    (error) => {
      assert.ok(error instanceof ShardedError);
      assert.match(error.message, /declares no expiry: add `expire_at = "field"`/);
      return true;
    },
  );
});
