// Drives the client against the emulator for the Rust test suite's equivalence tests: writes
// the documents it is given through the client (each with a shard drawn), then runs each query
// and prints what it read, as JSON, for the Rust side to compare with its own reads.
//
// stdin:  {"host", "project", "description", "sdk": "web" | "admin" (the Firebase JS SDK, or
//          the Node server SDK, for writes and queries), "writes": [{"parent", "id", "data",
//          "options"?: {"merge": true} | {"mergeFields": [...]}}],
//          "queries": [{"scope": {"parent"} | {"group": true}, "where": [[field, op, value]],
//                       "or"?: [[[field, op, value]], ...] (queries OR-ed with it),
//                       "pageSize": n, "aggregate"?: field}]}
// stdout: {"queries": [{"pages": [[path, ...], ...], "backPages": [...], "count": n,
//                       "sum"?: "x", "average"?: "x" | null}]} (numbers as text)
//         (backPages: from the last page back to the first, by each page's `previous`)
// Values: JSON, with {"$timestamp": [seconds, nanos]} for a timestamp.
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore, setLogLevel, Timestamp } from "firebase/firestore";

import { ShardedCollection, shardedCollectionGroup } from "../dist/index.js";
import { adminCollectionGroup, ShardedAdminCollection } from "../dist/admin.js";

const input = JSON.parse(await readStdin());
const [hostname, port] = input.host.split(":");
const app = initializeApp({ projectId: input.project, apiKey: "fake-api-key" });
const db = getFirestore(app);
connectFirestoreEmulator(db, hostname, Number(port));
setLogLevel("silent");

const d = input.description;
const collections = new Map();
const collectionIn = (parent) => {
  const key = parent ?? "";
  if (!collections.has(key)) collections.set(key, new ShardedCollection(db, d, parent ?? undefined));
  return collections.get(key);
};

let admin;
let QueryTimestamp = Timestamp;
if (input.sdk === "admin") {
  process.env.FIRESTORE_EMULATOR_HOST = input.host;
  process.env.METADATA_SERVER_DETECTION = "none";
  const server = await import("@google-cloud/firestore");
  admin = new server.Firestore({ projectId: input.project });
  QueryTimestamp = server.Timestamp;
}
const adminCollections = new Map();
const writerIn = (parent) => {
  if (!admin) return collectionIn(parent);
  const key = parent ?? "";
  if (!adminCollections.has(key)) adminCollections.set(key, new ShardedAdminCollection(admin, d, parent ?? undefined));
  return adminCollections.get(key);
};

// Writes in parallel batches of 50, through the client's `set` (with `options` for a merge),
// one request each.
for (let i = 0; i < input.writes.length; i += 50) {
  await Promise.all(
    input.writes
      .slice(i, i + 50)
      .map((w) => writerIn(w.parent).set(w.id, decode(w.data, QueryTimestamp), w.options ?? undefined)),
  );
}

const queryOf = (scope) => {
  if (admin) {
    return scope.group ? adminCollectionGroup(admin, d) : new ShardedAdminCollection(admin, d, scope.parent ?? undefined).query();
  }
  return scope.group ? shardedCollectionGroup(db, d) : collectionIn(scope.parent).query();
};

const results = [];
for (const q of input.queries) {
  let query = queryOf(q.scope);
  const filtered = (query, where) =>
    where.reduce((q, [field, op, value]) => q.where(field, op, decode(value, QueryTimestamp)), query);
  query = filtered(query, q.where ?? []);
  for (const where of q.or ?? []) query = query.or(filtered(queryOf(q.scope), where));
  const count = await query.count();
  const pages = [];
  let paged = query.limit(q.pageSize);
  let page;
  for (;;) {
    page = await paged.get();
    pages.push(page.docs.map((doc) => doc.ref.path));
    if (!page.next) break;
    paged = query.limit(q.pageSize).after(page.next);
  }
  // Back from the last page to the first, by each page's `previous`.
  const backPages = [];
  while (page.previous) {
    page = await query.limit(q.pageSize).before(page.previous).get();
    backPages.push(page.docs.map((doc) => doc.ref.path));
  }
  const totals = q.aggregate ? await query.aggregate(q.aggregate) : undefined;
  // Numbers as their shortest text, which Rust's `str::parse` rounds exactly (serde_json's
  // default float parsing may be off in the last bit).
  const text = (x) => (x === null ? null : String(x));
  results.push({ pages, backPages, count, ...(totals && { sum: text(totals.sum), average: text(totals.average) }) });
}
process.stdout.write(JSON.stringify({ queries: results }));
process.exit(0);

// A value for the SDK at hand: each SDK takes its own Timestamp class.
function decode(value, TimestampOf = Timestamp) {
  if (Array.isArray(value)) return value.map((v) => decode(v, TimestampOf));
  if (value === null || typeof value !== "object") return value;
  if ("$timestamp" in value) return new TimestampOf(value.$timestamp[0], value.$timestamp[1]);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v, TimestampOf)]));
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}
