// Sharded timestamps for Firestore's JavaScript SDKs, from the descriptions the Rust build
// writes: see the README. The web entry point: the Firebase JS SDK's collection, and the
// SDK-free core.
export * from "./core.js";
export {
  type Page,
  ShardedCollection,
  shardedCollectionGroup,
  type ShardedChange,
  ShardedQuery,
  type ShardedSnapshot,
} from "./collection.js";
