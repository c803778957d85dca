import { test } from "node:test";
import assert from "node:assert/strict";

import { initializeApp } from "firebase/app";
import {
  arrayRemove,
  arrayUnion,
  deleteField,
  FieldValue,
  getFirestore,
  increment,
  serverTimestamp,
  Timestamp,
} from "firebase/firestore";
import { FieldValue as ServerFieldValue } from "@google-cloud/firestore";

import {
  afterUpdate,
  checkDocumentId,
  checkIncrement,
  checkWrite,
  counterOf,
  describe,
  problemsOf,
  sentinelOf,
  ShardedCollection,
  ShardedError,
  withShard,
  WriteDenied,
} from "../test-dist/index.js";

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
    { path: "stock", type: "integer", integerRange: [-2147483648, 2147483647] },
    { path: "tags", type: "list" },
    { path: "seenAt", type: "timestamp" },
  ],
  counterFields: [
    { field: "likes", shards: 4 },
    { field: "stock", shards: 2 },
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

// What each SDK's sentinels look like at run time, which `sentinelOf` reads: measured here on
// the pinned firebase and @google-cloud/firestore, so that a release that renames them fails
// this test rather than letting a sentinel through unchecked.
test("both SDKs' sentinels are told apart, with an increment's amount", () => {
  for (const [sdk, values] of [
    ["web", [increment(5), serverTimestamp(), arrayUnion(1), arrayRemove(1), deleteField()]],
    ["server", [ServerFieldValue.increment(5), ServerFieldValue.serverTimestamp(), ServerFieldValue.arrayUnion(1),
      ServerFieldValue.arrayRemove(1), ServerFieldValue.delete()]],
  ]) {
    assert.deepEqual(
      values.map((value) => sentinelOf(value)),
      [{ kind: "increment", amount: 5 }, { kind: "serverTimestamp" }, { kind: "arrayUnion" }, { kind: "arrayRemove" }, { kind: "delete" }],
      sdk,
    );
  }
  for (const plain of [5, "increment", null, undefined, { methodName: 3 }, new Date(), [1]]) {
    assert.equal(sentinelOf(plain), undefined, String(plain));
  }
});

test("a sentinel is checked against the field it writes, as Rust reads the result", () => {
  for (const [what, data, field] of [
    ["increment on a string", { topic: increment(1) }, "topic"],
    ["increment on a timestamp", { seenAt: increment(1) }, "seenAt"],
    ["a fractional increment on an integer", { likes: increment(1.5) }, "likes"],
    ["-0 as an increment on an integer", { likes: increment(-0) }, "likes"],
    ["an increment past an i32", { stock: increment(2 ** 31) }, "stock"],
    ["serverTimestamp on a string", { title: serverTimestamp() }, "title"],
    ["serverTimestamp on an integer", { likes: serverTimestamp() }, "likes"],
    ["arrayUnion on an integer", { likes: arrayUnion(1) }, "likes"],
    ["arrayRemove on a string", { topic: arrayRemove("x") }, "topic"],
    ["a required field deleted", { topic: deleteField() }, "topic"],
    ["an integer past an i32", { stock: 2 ** 31 }, "stock"],
  ]) {
    refused(what, data, "fields", field);
    assert.equal(problemsOf(posts, data, "fields", web).length, 1, what);
  }
  for (const data of [
    { likes: increment(-3) },
    { stock: increment(2147483647) },
    { stock: increment(-2147483647) },
    { stock: -2147483648 },
    { tags: arrayUnion("a") },
    { tags: arrayRemove("a") },
    { seenAt: serverTimestamp() },
    { title: deleteField() },
    { meta: increment(1) },
  ]) {
    assert.doesNotThrow(() => checkWrite(posts, data, "fields", web), JSON.stringify(Object.keys(data)));
  }
  // The server SDK's sentinels alike.
  assert.throws(() => checkWrite(posts, { topic: ServerFieldValue.increment(1) }, "fields", web), ShardedError);
});

test("a write built for a batch with withShard is checked as a whole document", () => {
  const built = withShard(posts, good());
  assert.ok(posts.shardValues.includes(built.shard));
  assert.throws(() => withShard(posts, (({ topic, ...rest }) => rest)(good())), /`topic`/);
  assert.throws(() => withShard(posts, { ...good(), likes: "many" }), /`likes`/);
  assert.throws(() => withShard(posts, { ...good(), topic: increment(1) }), /`topic`/);
});

test("errors name values as they are", () => {
  assert.equal(describe(undefined), "undefined");
  assert.equal(describe(null), "null");
  assert.equal(describe("x"), 'the string "x"');
  assert.equal(describe(1.5), "the number 1.5");
  assert.equal(describe(Timestamp.now()), "a timestamp");
  assert.equal(describe(10n), "the bigint 10n");
  const message = (() => {
    try {
      checkWrite(posts, { ...good(), topic: undefined }, "whole", web);
    } catch (error) {
      return error.message;
    }
  })();
  assert.ok(message.includes("not undefined") && !message.includes("undefined undefined"), message);
});

test("an increment is checked against the counter's Rust type, and a counter is named as one", async () => {
  assert.doesNotThrow(() => checkIncrement(2147483647, "a", counterOf(posts, "stock")));
  assert.throws(() => checkIncrement(2147483648, "a", counterOf(posts, "stock")), /cannot fit its Rust type/);
  assert.throws(() => checkIncrement(-2147483648, "a", counterOf(posts, "stock")), /cannot fit its Rust type/);
  assert.doesNotThrow(() => checkIncrement(2 ** 40, "a", counterOf(posts, "likes")));
  assert.doesNotThrow(() => checkIncrement(1, "__id5__", counterOf(posts, "likes")));
  assert.throws(() => checkIncrement(1, "__x__", counterOf(posts, "likes")), ShardedError);
  const collection = new ShardedCollection(db, posts);
  await assert.rejects(collection.increment("p1", "stock", 2 ** 31), /cannot fit/);
  await assert.rejects(collection.wasApplied("p1", "i1", "title", 1), /`title` is not a counter/);
});

test("a refused write says what the client finds wrong with it, or that it meets the contract", () => {
  const stored = { topic: "rust", likes: 2, createdAt: Timestamp.now(), shard: "1" };
  const after = afterUpdate(stored, { title: "new", likes: increment(1), "meta.by": "ann" }, web);
  assert.deepEqual(Object.keys(after).sort(), ["createdAt", "likes", "meta", "shard", "title", "topic"]);
  const findings = problemsOf(posts, afterUpdate(stored, { title: "new" }, web), "stored", web);
  assert.equal(findings.length, 1);
  assert.ok(findings[0].includes("`meta`"), findings[0]);
  const denied = new WriteDenied("posts/p1", findings, [], new Error("false for 'update'"));
  assert.ok(denied instanceof ShardedError && denied.code === "permission-denied");
  assert.ok(denied.message.includes("`meta`") && denied.message.includes("posts/p1"), denied.message);
  const met = new WriteDenied("posts/p2", [], [], undefined);
  assert.ok(met.message.includes("your rules' own conditions"), met.message);
});
