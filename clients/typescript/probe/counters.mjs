// Drives the client's counters against the emulator for the Rust test suite: applies each
// increment twice (the second, the same increment sent again, must resolve and count
// nothing), then reads each counter and whether each increment is applied, for the Rust side
// to compare with its own reads.
//
// stdin:  {"host", "project", "description", "sdk": "web" | "admin", "parent": "u/u1" | null,
//          "increments": [{"id", "field", "by", "incrementId"}],
//          "reads": [{"id", "field"}], "applied": [{"id", "incrementId"}],
//          "conflicts": [{"id", "field", "by", "incrementId"}] (ids applied with another payload),
//          "reach"?: {"ids": [id, ...], "field", "live", "keep", "drop"}}
// stdout: {"values": [n, ...], "applied": [bool, ...], "conflicts": [error name, ...],
//          "reach"?: {"many": [n, ...], "live": [n, ...], "kept": n, "dropped": n}}
// `reach`: `counters(ids, field)`; `onCounter(live, field)` while `live` is incremented by 5
// twice (the values it showed); `delete(keep)` and `delete(drop, {counters: true})`, then
// each one's counter.
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore, setLogLevel } from "firebase/firestore";

import { ShardedCollection } from "../dist/index.js";
import { ShardedAdminCollection } from "../dist/admin.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const parent = input.parent ?? undefined;

let collection;
if (input.sdk === "admin") {
  process.env.FIRESTORE_EMULATOR_HOST = input.host;
  process.env.METADATA_SERVER_DETECTION = "none";
  const server = await import("@google-cloud/firestore");
  collection = new ShardedAdminCollection(new server.Firestore({ projectId: input.project }), input.description, parent);
} else {
  const [hostname, port] = input.host.split(":");
  const db = getFirestore(initializeApp({ projectId: input.project, apiKey: "fake-api-key" }));
  connectFirestoreEmulator(db, hostname, Number(port));
  // A refused resend is an outcome here, not a warning to print.
  setLogLevel("silent");
  collection = new ShardedCollection(db, input.description, parent);
}

for (const { id, field, by, incrementId } of input.increments) {
  for (let time = 0; time < 2; time++) {
    const applied = await collection.increment(id, field, by, incrementId);
    if (applied !== incrementId) throw new Error(`increment ${incrementId} resolved to ${applied}`);
  }
}
const conflicts = [];
for (const { id, field, by, incrementId } of input.conflicts ?? []) {
  try {
    await collection.increment(id, field, by, incrementId);
    conflicts.push("applied");
  } catch (error) {
    conflicts.push(error.name ?? String(error));
  }
}
const values = [];
for (const { id, field } of input.reads) values.push(await collection.counter(id, field));
const applied = [];
for (const { id, incrementId } of input.applied) applied.push(await collection.wasApplied(id, incrementId));
let reach;
if (input.reach) {
  const { ids, field, live, keep, drop } = input.reach;
  const many = await collection.counters(ids, field);
  const start = await collection.counter(live, field);
  const shown = [];
  let reached;
  let first;
  const done = new Promise((resolve) => (reached = resolve));
  const listening = new Promise((resolve) => (first = resolve));
  const stop = collection.onCounter(
    live,
    field,
    (value) => {
      shown.push(value);
      first();
      if (value === start + 10) reached();
    },
    (error) => {
      shown.push(String(error));
      first();
      reached();
    },
  );
  await listening;
  await collection.increment(live, field, 5);
  await collection.increment(live, field, 5);
  await done;
  stop();
  await collection.delete(keep);
  await collection.delete(drop, { counters: true });
  reach = { many, live: shown, kept: await collection.counter(keep, field), dropped: await collection.counter(drop, field) };
}
process.stdout.write(JSON.stringify({ values, applied, conflicts, ...(reach && { reach }) }));
process.exit(0);
