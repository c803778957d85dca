// Validates firestore.indexes.json files with the Firebase CLI's own code, offline:
// the same `upgradeOldSpec` + `validateSpec` that `firebase deploy --only firestore:indexes`
// runs before it calls the API. Usage: node validate.js FILE...
"use strict";
const fs = require("fs");
const { FirestoreApi } = require("firebase-tools/lib/firestore/api");

const api = new FirestoreApi();
let failed = false;
for (const file of process.argv.slice(2)) {
  try {
    const raw = JSON.parse(fs.readFileSync(file, "utf8"));
    const spec = api.upgradeOldSpec({ indexes: raw.indexes, fieldOverrides: raw.fieldOverrides });
    api.validateSpec(spec);
    console.log(`valid: ${file} (${spec.indexes.length} indexes, ${spec.fieldOverrides.length} field overrides)`);
  } catch (error) {
    failed = true;
    console.log(`invalid: ${file}: ${error.message}`);
  }
}
process.exit(failed ? 1 : 0);
