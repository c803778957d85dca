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
