// What the models `cargo build` writes (`firestore.sharded.ts`) make the compiler refuse: each
// `@ts-expect-error` line is a misuse that must not compile (tsc fails if one does), and the
// lines around them are what must.
import { type Firestore, serverTimestamp } from "firebase/firestore";

import { descriptionOf, ShardedCollection, shardedCollectionGroup } from "../../src/index.ts";
import { Notification, Post } from "../../example/firestore.sharded.ts";

declare const db: Firestore;
const posts = new ShardedCollection(db, Post);

// Queries filter on the fields the Rust type declares queries on.
posts.query().where("topic", "==", "rust");
posts.query().where("createdAt", ">", new Date());
// @ts-expect-error: a misspelt field
posts.query().where("topc", "==", "rust");
// @ts-expect-error: a field with no query declared on it
posts.query().where("title", "==", "x");

// Counters by name.
void posts.increment("p1", "likes", 1);
void posts.counter("p1", "likes");
posts.onCounter("p1", "likes", () => {});
// @ts-expect-error: a misspelt counter
void posts.increment("p1", "like", 1);
// @ts-expect-error: a field that is no counter
void posts.counter("p1", "topic");

// Writes hold the struct's fields, of their types.
void posts.add({ topic: "a", title: "b", author: "c", likes: 0, createdAt: serverTimestamp() });
// @ts-expect-error: a misspelt field
void posts.add({ topic: "a", titel: "b", author: "c", likes: 0, createdAt: serverTimestamp() });
// @ts-expect-error: a field of another type
void posts.add({ topic: 1, title: "b", author: "c", likes: 0, createdAt: serverTimestamp() });
// @ts-expect-error: a required field missing
void posts.add({ topic: "a", author: "c", likes: 0, createdAt: serverTimestamp() });
void posts.update("p1", { topic: "web" });
// @ts-expect-error: a misspelt field
void posts.update("p1", { topik: "web" });

// Documents read as the struct.
const page = await posts.query().limit(3).get();
const title: string = page.docs[0]!.data().title;
const at: number = page.docs[0]!.data().createdAt.toMillis();
// @ts-expect-error: a misspelt field
void page.docs[0]!.data().titel;
posts.query().onSnapshot((snapshot) => {
  const topic: string = snapshot.docs[0]!.data().topic;
  const saving: boolean = snapshot.metadata.hasPendingWrites;
  void [topic, saving];
});

// Under a parent, and with no counter.
const notes = new ShardedCollection(db, Notification, "users/u1");
notes.query().where("at", "<", new Date());
// @ts-expect-error: Notification has no counter
void notes.increment("n1", "likes", 1);

// An untyped description (read at run time) takes any field, as before.
const loose = new ShardedCollection(db, descriptionOf({}, "Post"));
loose.query().where("anything", "==", 1);
void loose.increment("p1", "whatever", 1);
void shardedCollectionGroup(db, descriptionOf({}, "Post")).where("x", "==", 1);

void [title, at];
