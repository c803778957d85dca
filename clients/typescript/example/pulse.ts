// Pulse: a feed a web team builds on the client, under the rules `cargo build` generates.
// Posts are sharded by their creation time (the server's), with a like counter; each user has
// notifications under their own document. The page posts, edits a post's topic, shows the
// newest posts live (saying when they come from the cache or hold a write not yet saved),
// walks every post a page at a time both ways, counts them, likes the newest post once per
// user with its count live, and shows the user's notifications live. It reads where the
// emulator is, the project and the user from its address
// (`?emulator=127.0.0.1:8080&project=demo&user=u1`).
//
// Its models are the ones `cargo build` writes beside the index file (`firestore.sharded.ts`,
// here the Pulse types' own): the collections take their fields from them, so a misspelt
// field in `add`, `update`, `where`, `increment` or `data()` does not compile.
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore, serverTimestamp } from "firebase/firestore";

import { type Page, ShardedCollection, type ShardedSnapshot } from "../src/index.ts";
import { Notification, Post } from "./firestore.sharded.ts";

const params = new URLSearchParams(location.search);
const user = params.get("user") ?? "u1";
const $ = <E extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as E;
const input = (id: string) => $<HTMLInputElement>(id).value;

const db = getFirestore(initializeApp({ projectId: params.get("project") ?? "demo", apiKey: "demo-key" }));
const [host, port] = (params.get("emulator") ?? "127.0.0.1:8080").split(":");
connectFirestoreEmulator(db, host!, Number(port));

const posts = new ShardedCollection(db, Post);
const notifications = new ShardedCollection(db, Notification, `users/${user}`);
const PAGE = 3;
const failed = (error: { code?: string; message?: string }) => {
  $("status").textContent = `Error: ${error.code ?? error.message ?? error}`;
};

/** A list of documents, each item carrying its path. */
function list<D extends { ref: { path: string } }>(element: HTMLElement, docs: D[], text: (doc: D) => string) {
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
      topic: input("topic"),
      title: input("title"),
      author: user,
      likes: 0,
      createdAt: serverTimestamp(),
    });
    $("post-status").textContent = "posted";
    await recount();
  } catch (error) {
    $("post-status").textContent = `refused: ${(error as Error).message}`;
  }
});

// Editing a post's topic: a refusal of the rules says what is wrong with the post as it
// would be stored (a legacy post without a field the Rust type requires), or that the post
// meets the contract and it is the rules' own conditions that refused.
$("edit").addEventListener("click", async () => {
  try {
    await posts.update(input("edit-id"), { topic: input("edit-topic") });
    $("edit-status").textContent = "edited";
  } catch (error) {
    $("edit-status").textContent = `refused: ${(error as Error).message}`;
  }
});

// The newest posts, live, merged across the shard values; where they come from.
let liked: string | undefined;
let stopLikes: (() => void) | undefined;
posts
  .query()
  .limit(5)
  .onSnapshot((snapshot: ShardedSnapshot<Post>) => {
    list($("newest"), snapshot.docs, (doc) => {
      const post = doc.data();
      return `${post.title} (${post.topic})`;
    });
    const { fromCache, hasPendingWrites } = snapshot.metadata;
    $("status").textContent = fromCache ? "offline" : hasPendingWrites ? "saving" : "live";
    const newest = snapshot.docs[0];
    if (newest && newest.id !== liked) follow(newest.id);
  }, failed);

// Pages both ways: `after(next)` and `before(previous)` (the type is reversible).
let page: Page<Post> | undefined;
async function show(query: ReturnType<typeof posts.query>) {
  try {
    page = await query.get();
    list($("page"), page.docs, (doc) => doc.data().title);
    $<HTMLButtonElement>("older").disabled = !page.next;
    $<HTMLButtonElement>("newer").disabled = !page.previous;
  } catch (error) {
    failed(error as Error);
  }
}
$("older").addEventListener("click", () => page?.next && show(posts.query().limit(PAGE).after(page.next)));
$("newer").addEventListener("click", () => page?.previous && show(posts.query().limit(PAGE).before(page.previous)));
await show(posts.query().limit(PAGE));

async function recount() {
  $("count").textContent = String(await posts.query().count());
}
await recount();

// The newest post's likes, live; a like counts once per user (the increment's id is theirs).
function follow(id: string) {
  liked = id;
  stopLikes?.();
  $("liked-post").textContent = id;
  $<HTMLButtonElement>("like").disabled = false;
  stopLikes = posts.onCounter(id, "likes", (value) => ($("likes").textContent = String(value)), failed);
}
$("like").addEventListener("click", async () => {
  try {
    await posts.increment(liked!, "likes", 1, `like-${user}`);
  } catch (error) {
    failed(error as Error);
  }
});

notifications
  .query()
  .limit(5)
  .onSnapshot((snapshot) => list($("notifications"), snapshot.docs, (doc) => doc.data().text), failed);
