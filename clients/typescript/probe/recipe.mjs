// The recipe's own Node.js code (Firestore's "sharded timestamps" solution page,
// shardedTimestamps.js: `shardChunks`, `createQuery` and its three queries), run as written
// against the emulator with the Node server SDK, for the Rust test suite: it must read what
// the Rust library and the TypeScript client wrote. `fs`, `shards`, `MAX_IN_VALUES` and the
// three queries' limit are set here; the functions are the page's.
//
// stdin: {"host", "project", "shards": [...], "limit": n}
// stdout: {"commonStock": [id, ...], "exchange1": [...], "usd": [...]}
import { Firestore } from "@google-cloud/firestore";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
process.env.FIRESTORE_EMULATOR_HOST = input.host;
// No credentials are looked up on the emulator; nor should the metadata server be.
process.env.METADATA_SERVER_DETECTION = "none";
const fs = new Firestore({ projectId: input.project });
const shards = input.shards;
const MAX_IN_VALUES = 30;

function shardChunks() {
  const chunks = [];
  let start = 0;
  while (start < shards.length) {
    const elements = Math.min(MAX_IN_VALUES, shards.length - start);
    const end = start + elements;
    chunks.push(shards.slice(start, end));
    start = end;
  }
  return chunks;
}

function createQuery(fieldName, fieldOperator, fieldValue, limit = 5) {
  // For each shard value, map it to a new query which adds an additional
  // where clause specifying the shard value.
  return Promise.all(shardChunks().map(shardChunk => {
        return fs.collection('instruments')
            .where('shard', 'in', shardChunk)  // new shard condition
            .where(fieldName, fieldOperator, fieldValue)
            .orderBy('timestamp', 'desc')
            .limit(limit)
            .get();
      }))
      // Now that we have a promise of multiple possible query results, we need
      // to merge the results from all of the queries into a single result set.
      .then((snapshots) => {
        // Create a new container for 'all' results
        const docs = [];
        snapshots.forEach((querySnapshot) => {
          querySnapshot.forEach((doc) => {
            // append each document to the new all container
            docs.push(doc);
          });
        });
        if (snapshots.length === 1) {
          // if only a single query was returned skip manual sorting as it is
          // taken care of by the backend.
          return docs;
        } else {
          // When multiple query results are returned we need to sort the
          // results after they have been concatenated.
          //
          // since we're wanting the `limit` newest values, sort the array
          // descending and take the first `limit` values. By returning negated
          // values we can easily get a descending value.
          docs.sort((a, b) => {
            const aT = a.data().timestamp;
            const bT = b.data().timestamp;
            const secondsDiff = aT.seconds - bT.seconds;
            if (secondsDiff === 0) {
              return -(aT.nanoseconds - bT.nanoseconds);
            } else {
              return -secondsDiff;
            }
          });
          return docs.slice(0, limit);
        }
      });
}

function queryCommonStock() {
  return createQuery('instrumentType', '==', 'commonstock', input.limit);
}

function queryExchange1Instruments() {
  return createQuery('exchange', '==', 'EXCHG1', input.limit);
}

function queryUSDInstruments() {
  return createQuery('price.currency', '==', 'USD', input.limit);
}

const [commonStock, exchange1, usd] = await Promise.all([
  queryCommonStock(),
  queryExchange1Instruments(),
  queryUSDInstruments(),
]);
const ids = (docs) => docs.map((doc) => doc.id);
process.stdout.write(JSON.stringify({ commonStock: ids(commonStock), exchange1: ids(exchange1), usd: ids(usd) }));
process.exit(0);
