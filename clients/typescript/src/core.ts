// What the client is without either SDK: the descriptions, the shard draw, the plans and
// merges, counters' documents, errors. The web entry point (`@sharded/firestore`) and the
// server one (`@sharded/firestore/admin`) each export it beside their collection, so a
// server project needs no `firebase` and a web one no `@google-cloud/firestore`.
export {
  type CollectionDescription,
  descriptionOf,
  type FieldOfQuery,
  descriptionsIn,
  readValues,
  ShardedError,
  type ShardedTimestamp,
  type StoredFieldDescription,
  type TypedDescription,
} from "./description.js";
export { drawShard, newValuesShare } from "./shard.js";
export { compareNames, compareValues } from "./order.js";
export { firstRound, nextRound, readRounds } from "./rounds.js";
export { type PageOf, type QueryStats } from "./page.js";
export {
  GROUP,
  planFor,
  type QueryState,
  startState,
  wholePlan,
  withCursor,
  withLimit,
  withOr,
  withWhere,
} from "./builder.js";
export { type AggregateTotal, type ChunkAggregate, numbersIn, settle, subtotalOf } from "./aggregate.js";
export {
  type Chunk,
  chunksOf,
  compareInPlan,
  type Cursor,
  cursorValues,
  type Filter,
  MAX_DISJUNCTIONS,
  MAX_NOT_IN,
  planOf,
  type QueryPlan,
  type RangeOp,
  segments,
  shardFieldName,
  splitEvenly,
  type WhereOp,
  weightOf,
  withFilter,
} from "./plan.js";
export {
  changesBetween,
  type ChunkListener,
  type LiveChange,
  listenMerged,
  type LiveMetadata,
  type LiveSnapshot,
} from "./live.js";
export { matchesFilter, matchesPlan } from "./matches.js";
export {
  afterUpdate,
  ANY_SDK_SENTINELS,
  checkDocumentId,
  checkedUpdate,
  checkWrite,
  describe,
  holdsType,
  isPermissionDenied,
  problemsOf,
  type SentinelKind,
  sentinelOf,
  type Sentinels,
  withinRange,
  withShard,
  WriteDenied,
  type WriteKind,
} from "./check.js";
export { type IndexEntry, indexServing, isServedByFile, type PlainQuery, type Serving } from "./serving.js";
export {
  checkIncrement,
  checkRecorded,
  COUNTER_COLLECTION_PREFIX,
  type CounterField,
  counterOf,
  IncrementConflict,
  incrementDigest,
  INCREMENTS_COLLECTION,
  incrementPaths,
  MARKER_AMOUNT_FIELD,
  MARKER_COMMIT_FIELD,
  MARKER_COUNTER_FIELD,
  MARKER_EXPIRY_FIELD,
  MARKER_LIFETIME_MS,
  MARKER_SHARD_FIELD,
  markerFields,
  markerPath,
  newIncrementId,
  SHARD_INCREMENT_FIELD,
  SHARD_VALUE_FIELD,
} from "./counter.js";
