// Times one page of a query through the client, for the benchmarks binary: `warmup` runs,
// then `runs` timed ones (in this process, from the call to the page), and what each page
// read. stdin: {"host", "project", "description", "where", "limit", "runs", "warmup"};
// stdout: {"millis": [...], "queries": n, "documentsRead": n}.
import { performance } from "node:perf_hooks";

import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore, setLogLevel } from "firebase/firestore";

import { ShardedCollection } from "../dist/index.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const [hostname, port] = input.host.split(":");
const db = getFirestore(initializeApp({ projectId: input.project, apiKey: "fake-api-key" }));
connectFirestoreEmulator(db, hostname, Number(port));
setLogLevel("silent");

let query = new ShardedCollection(db, input.description).query();
for (const [field, op, value] of input.where) query = query.where(field, op, value);
query = query.limit(input.limit);
const millis = [];
let stats;
for (let run = 0; run < input.warmup + input.runs; run++) {
  const start = performance.now();
  const page = await query.get();
  const elapsed = performance.now() - start;
  if (run >= input.warmup) millis.push(elapsed);
  stats = page.stats;
}
process.stdout.write(JSON.stringify({ millis, ...stats }));
process.exit(0);
