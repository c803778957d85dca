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
  type Page,
  type QueryStats,
  ShardedCollection,
  shardedCollectionGroup,
  type ShardedChange,
  ShardedQuery,
  type ShardedSnapshot,
} from "./collection.js";
export { firstRound, nextRound, readRounds } from "./rounds.js";
export {
  chunksOf,
  type Cursor,
  type Filter,
  MAX_DISJUNCTIONS,
  type RangeOp,
  segments,
  shardFieldName,
  splitEvenly,
  type WhereOp,
  withFilter,
  withShard,
} from "./plan.js";
export { changesBetween, type ChunkListener, type LiveChange, listenMerged, type LiveSnapshot } from "./live.js";
