// Writes as a web or mobile client would: the Firebase JS SDK (modular API), signed in as
// nobody, against the emulator, where security rules apply to it. Reads the cases as JSON on
// stdin and prints one outcome per case as JSON on stdout, so the Rust test asserts them.
//
// stdin:  {"host": "127.0.0.1:8080", "project": "p", "cases": [
//            {"op": "set" | "set_merge" | "add" | "update" | "delete" | "batch_set" |
//                   "transaction_set" | "transaction_update",
//             "path": "rooms/r1/messages/m1" (a collection path for "add"),
//             "data": {...}},
//            {"op": "batch", "data": [{"op": "set" | "set_merge", "path": ..., "data": {...}}]}
//              (several writes in one writeBatch commit, as a counter's increment is)]}
// stdout: [{"allowed": true} | {"allowed": false, "code": "permission-denied"}, ...]
//
// Values: JSON, with {"$timestamp": millis}, {"$serverTime": true} (serverTimestamp()),
// {"$increment": n} (increment(n)) and {"$delete": true} (deleteField()) for what JSON
// cannot spell. As the SDK does, a whole
// number is written as an integer and any other as a double.
import { initializeApp } from "firebase/app";
import {
  addDoc,
  collection,
  connectFirestoreEmulator,
  deleteDoc,
  deleteField,
  doc,
  getFirestore,
  increment,
  runTransaction,
  serverTimestamp,
  setDoc,
  setLogLevel,
  Timestamp,
  updateDoc,
  writeBatch,
} from "firebase/firestore";

const input = JSON.parse(await readStdin());
const [hostname, port] = input.host.split(":");
const app = initializeApp({ projectId: input.project, apiKey: "fake-api-key" });
const db = getFirestore(app);
connectFirestoreEmulator(db, hostname, Number(port));
// A denied write is an outcome here, not a warning to print.
setLogLevel("silent");

const outcomes = [];
for (const testCase of input.cases) {
  try {
    await withTimeout(run(testCase), 20_000);
    outcomes.push({ allowed: true });
  } catch (error) {
    outcomes.push({ allowed: false, code: error.code ?? String(error) });
  }
}
process.stdout.write(JSON.stringify(outcomes));
process.exit(0);

async function run({ op, path, data }) {
  if (op === "batch") {
    const batch = writeBatch(db);
    for (const write of data) {
      const options = write.op === "set_merge" ? { merge: true } : {};
      batch.set(doc(db, write.path), decode(write.data), options);
    }
    return batch.commit();
  }
  const value = decode(data ?? {});
  switch (op) {
    case "set":
      return setDoc(doc(db, path), value);
    case "set_merge":
      return setDoc(doc(db, path), value, { merge: true });
    case "add":
      return addDoc(collection(db, path), value);
    case "update":
      return updateDoc(doc(db, path), value);
    case "delete":
      return deleteDoc(doc(db, path));
    case "batch_set": {
      const batch = writeBatch(db);
      batch.set(doc(db, path), value);
      return batch.commit();
    }
    case "transaction_set":
      return runTransaction(db, async (transaction) => {
        await transaction.get(doc(db, path));
        transaction.set(doc(db, path), value);
      });
    case "transaction_update":
      return runTransaction(db, async (transaction) => {
        await transaction.get(doc(db, path));
        transaction.update(doc(db, path), value);
      });
    default:
      throw new Error(`unknown op ${op}`);
  }
}

function decode(value) {
  if (Array.isArray(value)) return value.map(decode);
  if (value === null || typeof value !== "object") return value;
  if ("$timestamp" in value) return Timestamp.fromMillis(value.$timestamp);
  if ("$serverTime" in value) return serverTimestamp();
  if ("$increment" in value) return increment(value.$increment);
  if ("$delete" in value) return deleteField();
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
}

function withTimeout(promise, ms) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}
