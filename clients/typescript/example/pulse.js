// Pulse: a feed a web team builds on the client, under the rules `cargo build` generates.
// Posts are sharded by their creation time (the server's), with a like counter; each user has
// notifications under their own document. The page posts, shows the newest posts live, walks
// every post a page at a time both ways, counts them, likes the newest post once per user with
// its count live, and shows the user's notifications live. It reads where the emulator is,
// the project and the user from its address (`?emulator=127.0.0.1:8080&project=demo&user=u1`)
// and the descriptions from `indexes.json` beside it (the app's own firestore.indexes.json).
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore, serverTimestamp } from "firebase/firestore";

import { descriptionOf, ShardedCollection } from "../src/index.ts";

const params = new URLSearchParams(location.search);
const user = params.get("user") ?? "u1";
const $ = (id) => document.getElementById(id);

const indexes = await (await fetch("./indexes.json")).json();
const db = getFirestore(initializeApp({ projectId: params.get("project"), apiKey: "demo-key" }));
const [host, port] = params.get("emulator").split(":");
connectFirestoreEmulator(db, host, Number(port));

const posts = new ShardedCollection(db, descriptionOf(indexes, "Post"));
const notifications = new ShardedCollection(db, descriptionOf(indexes, "Notification"), `users/${user}`);
const PAGE = 3;
const failed = (error) => {
  $("status").textContent = `Error: ${error.code ?? error.message ?? error}`;
};

/** A list of documents, each item carrying its path. */
function list(element, docs, text) {
  element.replaceChildren(
    ...docs.map((doc) => {
      const item = document.createElement("li");
      item.dataset.path = doc.ref.path;
      item.textContent = text(doc);
      return item;
    }),
  );
}

// Posting: the client checks the post (its server time, every field the Rust type requires)
// before it sends, and the rules hold it to the same.
$("post").addEventListener("click", async () => {
  try {
    await posts.add({
      topic: $("topic").value,
      title: $("title").value,
      author: user,
      likes: 0,
      createdAt: serverTimestamp(),
    });
    $("post-status").textContent = "posted";
    await recount();
  } catch (error) {
    $("post-status").textContent = `refused: ${error.message}`;
  }
});

// The newest posts, live, merged across the shard values.
let liked;
let stopLikes;
posts
  .query()
  .limit(5)
  .onSnapshot((snapshot) => {
    list($("newest"), snapshot.docs, (doc) => `${doc.get("title")} (${doc.get("topic")})`);
    $("status").textContent = "live";
    const newest = snapshot.docs[0];
    if (newest && newest.id !== liked) follow(newest.id);
  }, failed);

// Pages both ways: `after(next)` and `before(previous)` (the type is reversible).
let page;
async function show(query) {
  try {
    page = await query.get();
    list($("page"), page.docs, (doc) => doc.get("title"));
    $("older").disabled = !page.next;
    $("newer").disabled = !page.previous;
  } catch (error) {
    failed(error);
  }
}
$("older").addEventListener("click", () => show(posts.query().limit(PAGE).after(page.next)));
$("newer").addEventListener("click", () => show(posts.query().limit(PAGE).before(page.previous)));
await show(posts.query().limit(PAGE));

async function recount() {
  $("count").textContent = String(await posts.query().count());
}
await recount();

// The newest post's likes, live; a like counts once per user (the increment's id is theirs).
function follow(id) {
  liked = id;
  stopLikes?.();
  $("liked-post").textContent = id;
  $("like").disabled = false;
  stopLikes = posts.onCounter(id, "likes", (value) => ($("likes").textContent = String(value)), failed);
}
$("like").addEventListener("click", async () => {
  try {
    await posts.increment(liked, "likes", 1, `like-${user}`);
  } catch (error) {
    failed(error);
  }
});

notifications
  .query()
  .limit(5)
  .onSnapshot((snapshot) => list($("notifications"), snapshot.docs, (doc) => doc.get("text")), failed);
