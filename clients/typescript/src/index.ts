// Sharded timestamps for Firestore's JavaScript SDKs, from the descriptions the Rust build
// writes: see the README.
export {
  type CollectionDescription,
  descriptionOf,
  descriptionsIn,
  readValues,
  ShardedError,
} from "./description.js";
export { drawShard, newValuesShare } from "./shard.js";
export { compareNames, compareValues } from "./order.js";
export {
  changesBetween,
  firstRound,
  nextRound,
  type Cursor,
  MAX_DISJUNCTIONS,
  type Page,
  type QueryStats,
  segments,
  ShardedCollection,
  shardedCollectionGroup,
  type ShardedChange,
  ShardedQuery,
  type ShardedSnapshot,
  shardFieldName,
  splitEvenly,
  withShard,
} from "./collection.js";
