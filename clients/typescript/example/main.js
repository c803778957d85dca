// The newest items of a sharded collection, live: one query over every shard value through
// the client, as a web app would show them. The page reads where the emulator is and which
// project from its address (`?emulator=127.0.0.1:8080&project=demo&limit=20`), and the
// collection's description from `description.json` beside it (in an app: the `shardedManaged`
// entry of the firestore.indexes.json its Rust build writes, read with `descriptionOf`).
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";

import { ShardedCollection } from "../src/index.ts";

const params = new URLSearchParams(location.search);
const status = document.getElementById("status");
const list = document.getElementById("items");

const description = await (await fetch("./description.json")).json();
const db = getFirestore(initializeApp({ projectId: params.get("project"), apiKey: "demo-key" }));
const [host, port] = params.get("emulator").split(":");
connectFirestoreEmulator(db, host, Number(port));

new ShardedCollection(db, description)
  .query()
  .limit(Number(params.get("limit") ?? 20))
  .onSnapshot(
    (snapshot) => {
      list.replaceChildren(
        ...snapshot.docs.map((doc) => {
          const item = document.createElement("li");
          item.dataset.path = doc.ref.path;
          const at = doc.get(description.orderField);
          item.textContent = `${doc.id}: ${at?.toDate?.().toISOString() ?? at}`;
          return item;
        }),
      );
      status.textContent = `${snapshot.size} newest`;
    },
    (error) => {
      status.textContent = `Error: ${error.code ?? error}`;
    },
  );
