// Listens to a sharded query through the client for the Rust test suite, and prints each
// snapshot as one JSON line: its documents' paths in order, and whether its docChanges(),
// applied in order to the last snapshot's paths, give this one's. Stops when stdin closes.
//
// Each snapshot line also holds its `metadata` ({fromCache, hasPendingWrites}).
//
// stdin (first line): {"host", "project", "description", "sdk": "web" | "admin",
//                      "scope": {"parent"} | {"group": true}, "where": [[field, op, value]],
//                      "limit": n | null}
// then, for the web SDK, lines {"set": {"id", "device", "tags", "seconds"}}: writes that
// document through the client's collection (a local write the listener shows first).
import { createInterface } from "node:readline";

import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore, setLogLevel, Timestamp } from "firebase/firestore";

import { ShardedCollection, shardedCollectionGroup } from "../dist/index.js";
import { adminCollectionGroup, ShardedAdminCollection } from "../dist/admin.js";

const lines = createInterface({ input: process.stdin });
const iterator = lines[Symbol.asyncIterator]();
const input = JSON.parse((await iterator.next()).value);
const [hostname, port] = input.host.split(":");
const db = getFirestore(initializeApp({ projectId: input.project, apiKey: "fake-api-key" }));
connectFirestoreEmulator(db, hostname, Number(port));
setLogLevel("silent");

const d = input.description;
let query;
let collection;
if (input.sdk === "admin") {
  process.env.FIRESTORE_EMULATOR_HOST = input.host;
  process.env.METADATA_SERVER_DETECTION = "none";
  const { Firestore } = await import("@google-cloud/firestore");
  const admin = new Firestore({ projectId: input.project });
  query = input.scope.group
    ? adminCollectionGroup(admin, d)
    : new ShardedAdminCollection(admin, d, input.scope.parent ?? undefined).query();
} else {
  collection = new ShardedCollection(db, d, input.scope.parent ?? undefined);
  query = input.scope.group ? shardedCollectionGroup(db, d) : collection.query();
}
for (const [field, op, value] of input.where ?? []) query = query.where(field, op, value);
if (input.limit) query = query.limit(input.limit);

let last = [];
const stop = query.onSnapshot(
  (snapshot) => {
    const paths = [...last];
    for (const change of snapshot.docChanges()) {
      if (change.type === "removed" || change.type === "modified") {
        if (paths[change.oldIndex] !== change.doc.ref.path) paths.splice(0, paths.length, "<inconsistent>");
        else paths.splice(change.oldIndex, 1);
      }
      if (change.type === "added" || change.type === "modified") paths.splice(change.newIndex, 0, change.doc.ref.path);
    }
    last = snapshot.docs.map((doc) => doc.ref.path);
    const consistent = paths.length === last.length && paths.every((p, i) => p === last[i]);
    process.stdout.write(JSON.stringify({ paths: last, consistent, metadata: snapshot.metadata }) + "\n");
  },
  (error) => {
    process.stdout.write(JSON.stringify({ error: String(error.code ?? error) }) + "\n");
  },
);
for await (const line of iterator) {
  const { set } = JSON.parse(line);
  if (set && collection) {
    collection
      .set(set.id, { device: set.device, tags: set.tags, at: Timestamp.fromMillis(set.seconds * 1000) })
      .catch((error) => process.stdout.write(JSON.stringify({ error: String(error.code ?? error) }) + "\n"));
  }
}
stop();
process.exit(0);
