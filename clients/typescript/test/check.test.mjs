import { test } from "node:test";
import assert from "node:assert/strict";

import { initializeApp } from "firebase/app";
import { deleteField, FieldValue, getFirestore, increment, serverTimestamp, Timestamp } from "firebase/firestore";

import { checkDocumentId, checkWrite, ShardedCollection, ShardedError } from "../test-dist/index.js";

// A feed's posts: the server stamps `createdAt`, `topic` is queried, `likes` is a counter the
// Rust struct holds as an `i64`, `title` is an `Option<String>`, `meta` a struct of the user's.
const posts = {
  collectionGroup: "posts",
  shardField: "shard",
  orderField: "createdAt",
  direction: "DESCENDING",
  orderType: "timestamp",
  serverTimestamp: true,
  indexedFields: ["topic"],
  shardValues: ["0", "1", "2"],
  fields: [
    { path: "topic", type: "string", required: true },
    { path: "createdAt", type: "timestamp", required: true },
    { path: "likes", type: "integer", required: true },
    { path: "title", type: "string" },
    { path: "meta", required: true },
  ],
};
const web = {
  isServerTimestamp: (v) => v instanceof FieldValue && v.isEqual(serverTimestamp()),
  isDelete: (v) => v instanceof FieldValue && v.isEqual(deleteField()),
  isSentinel: (v) => v instanceof FieldValue,
};
const db = getFirestore(initializeApp({ projectId: "offline" }, "check-test"));
const good = () => ({ topic: "rust", likes: 0, meta: { by: "ann" }, createdAt: serverTimestamp() });

function refused(what, data, kind, field) {
  assert.throws(
    () => checkWrite(posts, data, kind, web),
    (error) => {
      assert.ok(error instanceof ShardedError, what);
      assert.ok(error.message.includes(`\`${field}\``), `${what}: ${error.message}`);
      return true;
    },
    what,
  );
}

test("a whole document holds what the Rust struct requires, each of its type", () => {
  assert.doesNotThrow(() => checkWrite(posts, good(), "whole", web));
  assert.doesNotThrow(() => checkWrite(posts, { ...good(), title: null }, "whole", web), "an Option may be null");
  refused("a client-side time", { ...good(), createdAt: Timestamp.now() }, "whole", "createdAt");
  refused("no order field", (({ createdAt, ...rest }) => rest)(good()), "whole", "createdAt");
  refused("no indexed field", (({ topic, ...rest }) => rest)(good()), "whole", "topic");
  refused("no counter field", (({ likes, ...rest }) => rest)(good()), "whole", "likes");
  refused("a field of a type the struct cannot read", { ...good(), likes: 1.5 }, "whole", "likes");
  refused("-0, stored as a double", { ...good(), likes: -0 }, "whole", "likes");
  refused("a string where a string is not", { ...good(), topic: 7 }, "whole", "topic");
  refused("a field of unknown type missing", (({ meta, ...rest }) => rest)(good()), "whole", "meta");
});

test("an update's fields are of their types, no required one deleted, the server's time left alone", () => {
  assert.doesNotThrow(() => checkWrite(posts, { title: "hi", likes: increment(1) }, "fields", web));
  assert.doesNotThrow(() => checkWrite(posts, { title: deleteField() }, "fields", web));
  refused("a required field deleted", { topic: deleteField() }, "fields", "topic");
  refused("the server's time set", { createdAt: serverTimestamp() }, "fields", "createdAt");
  refused("a wrong type", { title: 3 }, "fields", "title");
});

test("the collection's writes are checked before anything is sent", async () => {
  const collection = new ShardedCollection(db, posts);
  assert.throws(() => collection.add({ topic: "rust", likes: 0, createdAt: serverTimestamp() }), ShardedError);
  await assert.rejects(collection.set("p1", { ...good(), createdAt: new Date() }), ShardedError);
  assert.throws(() => collection.update("p1", { likes: "many" }), ShardedError);
});

// The id rule of the Rust library (`check_document_id`), in both modes: the servers refuse
// every other `__…__` id as reserved (measured on the emulator, Native and Datastore mode).
test("ids are checked as Rust checks them: only canonical non-zero numeric ids of the reserved form", async () => {
  for (const id of ["a", "__id5__", "__id-3__", "__id9223372036854775807__", "__id-9223372036854775808__", "é", "_x_", "__"]) {
    assert.doesNotThrow(() => checkDocumentId(id), id);
  }
  for (const id of ["", ".", "..", "a/b", "x".repeat(1501), "__id0__", "__id-0__", "__id07__", "__id+5__", "__id__", "__x__",
    "__id9223372036854775808__", "__id-9223372036854775809__"]) {
    assert.throws(() => checkDocumentId(id), ShardedError, id);
  }
  const collection = new ShardedCollection(db, posts);
  await assert.rejects(collection.set("__id07__", good()), ShardedError);
  assert.throws(() => collection.update("__id0__", { likes: 1 }), ShardedError);
});
