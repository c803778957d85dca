import { test } from "node:test";
import assert from "node:assert/strict";

import { listenMerged, matchesFilter, matchesPlan } from "../test-dist/index.js";

// Fake chunk listeners: each chunk's callback is called by the test, as an SDK would.
function harness({ inSync = false, recheck } = {}) {
  const callbacks = [];
  let sync;
  const snapshots = [];
  const source = {
    chunks: [0, 1],
    listen: (i, onDocs) => {
      callbacks[i] = onDocs;
      return () => {};
    },
    compare: (a, b) => a.at - b.at || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
    path: (doc) => doc.path,
    same: (a, b) => a.v === b.v,
    version: (doc) => String(doc.v).padStart(4, "0"),
    ...(inSync && {
      inSync: (callback) => {
        sync = callback;
        return () => {};
      },
    }),
    ...(recheck && { recheck }),
  };
  const metadata = [];
  listenMerged(source, (snapshot) => {
    snapshots.push(snapshot.docs.map((d) => d.path));
    metadata.push(snapshot.metadata);
  });
  return { chunk: (i, docs, meta) => callbacks[i](docs, meta), sync: () => sync(), snapshots, metadata };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
const doc = (path, at, v = 1) => ({ path, at, v });

test("in sync: a snapshot only at the points every listener has seen, so a move shows once", async () => {
  const h = harness({ inSync: true });
  h.chunk(0, [doc("a", 1), doc("b", 2)]);
  h.chunk(1, []);
  assert.deepEqual(h.snapshots, []);
  h.sync();
  assert.deepEqual(h.snapshots, [["a", "b"]]);
  // b moves from chunk 0 to chunk 1: chunk 1 tells first, then chunk 0, then the point.
  h.chunk(1, [doc("b", 2, 2)]);
  h.chunk(0, [doc("a", 1)]);
  h.sync();
  assert.deepEqual(h.snapshots, [["a", "b"], ["a", "b"]]);
});

test("own streams: a document two chunks hold is shown once, in its latest version", async () => {
  const h = harness({ recheck: async () => undefined });
  h.chunk(0, [doc("a", 1), doc("b", 2, 1)]);
  h.chunk(1, []);
  await tick();
  h.chunk(1, [doc("b", 2, 2)]);
  await tick();
  assert.deepEqual(h.snapshots.at(-1), ["a", "b"]);
  h.chunk(0, [doc("a", 1)]);
  await tick();
  assert.ok(h.snapshots.every((paths) => paths.join() === "a,b"), JSON.stringify(h.snapshots));
});

test("own streams: a document that left one chunk before the next tells is kept while it matches", async () => {
  let asked = 0;
  let exists = true;
  const h = harness({
    recheck: async (d) => {
      asked += 1;
      return exists ? { ...d, v: 2 } : undefined;
    },
  });
  h.chunk(0, [doc("a", 1), doc("b", 2)]);
  h.chunk(1, []);
  await tick();
  h.chunk(0, [doc("a", 1)]); // b left chunk 0; chunk 1 has not told
  await tick();
  assert.ok(asked >= 1);
  assert.ok(h.snapshots.every((paths) => paths.join() === "a,b"), JSON.stringify(h.snapshots));
  h.chunk(1, [doc("b", 2, 2)]); // it arrives
  await tick();
  assert.deepEqual(h.snapshots.at(-1), ["a", "b"]);
  // Deleted: it leaves, read again it is gone, and it goes, once.
  exists = false;
  h.chunk(1, []);
  await tick();
  await tick();
  assert.deepEqual(h.snapshots.at(-1), ["a"]);
  const before = asked;
  await tick();
  assert.equal(asked, before, "a departed document is not read again");
});

test("a document matches a plan as the server filters it", () => {
  assert.ok(matchesFilter({ field: "n", op: "==", value: 1 }, 1));
  assert.ok(!matchesFilter({ field: "n", op: "==", value: 1 }, undefined));
  assert.ok(matchesFilter({ field: "n", op: "in", values: [1, 2] }, 2));
  assert.ok(matchesFilter({ field: "t", op: "array-contains", value: "x" }, ["y", "x"]));
  assert.ok(matchesFilter({ field: "n", op: ">", value: 1 }, 2));
  assert.ok(!matchesFilter({ field: "n", op: ">", value: 1 }, "2"), "no range across types");
  assert.ok(matchesFilter({ field: "n", op: "!=", value: 1 }, 2));
  assert.ok(!matchesFilter({ field: "n", op: "!=", value: 1 }, undefined));
  assert.ok(!matchesFilter({ field: "n", op: "not-in", values: [0, 1] }, 1));
  const plan = {
    chunks: [],
    shardByEquality: false,
    filters: [{ field: "device", op: "==", value: "d1" }],
    anyOf: [[{ field: "tags", op: "array-contains", value: "t" }], [{ field: "n", op: "==", value: 3 }]],
    orderBy: ["at"],
    descending: true,
  };
  const value = (data) => (path) => data[path];
  assert.ok(matchesPlan(plan, value({ at: 1, device: "d1", n: 3 })));
  assert.ok(!matchesPlan(plan, value({ at: 1, device: "d1", n: 4 })));
  assert.ok(!matchesPlan(plan, value({ device: "d1", n: 3 })), "no order field: not in an ordered query");
});

// As the Firebase SDK gives `SnapshotMetadata` per listener: the merged snapshot is from the
// cache, or has pending writes, where any chunk's is; a change of the metadata alone is a
// snapshot of its own (the JS SDK listens with `includeMetadataChanges`), the same metadata
// and documents again is none; a listener without metadata (the server SDK) is neither.
test("a snapshot's metadata is every chunk's, merged: true where any chunk's is", async () => {
  const meta = (fromCache, hasPendingWrites) => ({ fromCache, hasPendingWrites });
  const h = harness({ inSync: true });
  h.chunk(0, [doc("a", 1)], meta(true, false));
  h.chunk(1, [], meta(false, false));
  h.sync();
  assert.deepEqual(h.metadata, [meta(true, false)]);
  h.chunk(0, [doc("a", 1)], meta(false, false));
  h.sync();
  assert.deepEqual(h.metadata.at(-1), meta(false, false), "back online: a snapshot for the metadata alone");
  assert.deepEqual(h.snapshots.at(-1), ["a"]);
  h.chunk(1, [doc("b", 2)], meta(false, true));
  h.sync();
  assert.deepEqual(h.metadata.at(-1), meta(false, true), "a local write, saving");
  h.chunk(1, [doc("b", 2)], meta(false, false));
  h.sync();
  assert.deepEqual(h.metadata.at(-1), meta(false, false), "saved");
  const count = h.metadata.length;
  h.chunk(1, [doc("b", 2)], meta(false, false));
  h.sync();
  assert.equal(h.metadata.length, count, "nothing new: no snapshot");
  const server = harness({});
  server.chunk(0, [doc("a", 1)]);
  server.chunk(1, []);
  await tick();
  assert.deepEqual(server.metadata, [meta(false, false)]);
});
