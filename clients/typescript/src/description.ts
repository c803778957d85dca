// The collection descriptions the Rust build writes: `firestore.indexes.json`'s
// `shardedManaged` key holds one per sharded collection, under the crate that declares it.

/** One sharded collection, as `sharded-build` records it (the Rust `CollectionDescriptionBuf`). */
export interface CollectionDescription {
  /** The collection id. */
  collectionGroup: string;
  /** The shard field's path: its stored name, backtick-quoted where Firestore needs it. */
  shardField: string;
  /** The field path queries order by. */
  orderField: string;
  direction: "ASCENDING" | "DESCENDING";
  /** What the order field is stored as; absent when its Rust type does not say. */
  orderType?: "timestamp" | "integer" | "number" | "string" | "boolean" | "list" | "map" | "other";
  reversible?: boolean;
  /** The server fills the order field on create (`serverTimestamp()`). */
  serverTimestamp?: boolean;
  indexedFields: string[];
  fieldSets?: string[][];
  /** Numeric fields every query sums and averages. */
  aggregateFields?: string[];
  /** Sums and averages declared for some queries only: each field with each query. */
  aggregations?: FieldOfQuery[];
  /** Fields with range, `!=` and `not-in` filters in every query. */
  rangeFields?: string[];
  /** Range filters declared for some queries only: each field with each query. */
  ranges?: FieldOfQuery[];
  /** Range fields filtered together in one query (`ranges(a, b)`), each set by path: a
   * query filtering on all of a set's fields orders by each after the order field. */
  rangeSets?: string[][];
  arrayFields?: string[];
  /** Vector fields with nearest-neighbour search, each with its vectors' dimension. */
  vectorFields?: { field: string; dimension: number }[];
  /** The values writes draw. */
  shardValues: string[];
  /** While resharding, the set the collection moves from: queries read it too. */
  previousShardValues?: string[];
  /** Values no document holds any more: never read, never drawn. */
  retiredShardValues?: string[];
  /** While resharding, when writes began moving to new values, in seconds since the epoch. */
  reshardSince?: number;
  /** The parent documents' collection ids, outermost first. */
  parentCollections?: string[];
  /** Queries across every parent are declared. */
  groupQueries?: boolean;
  /** Distributed counters: each field, and how many shard documents it spreads over. */
  counterFields?: { field: string; shards: number }[];
  /** Every top-level field the Rust struct stores by name: what a write must hold so that
   * the Rust library reads the document back. */
  fields?: StoredFieldDescription[];
  /** The Rust types that shard the collection. */
  types?: string[];
  /** The timestamp field documents expire at (`expire_at`): Firestore's TTL policy deletes
   * them within about a day after, and `unexpired(now)` hides them meanwhile. */
  expiryField?: string;
}

/**
 * A description typed with its Rust type, as `firestore.sharded.ts` (which `cargo build`
 * writes beside the index file) declares each: `T` the stored fields, `C` the counter fields,
 * `F` the fields its queries filter on. `new ShardedCollection(db, Post)` takes its types from
 * it: a field the Rust type does not have does not compile. An untyped description (from
 * `descriptionOf`) is one of `DocumentData` and any field.
 */
export interface TypedDescription<T, C extends string = string, F extends string = string> extends CollectionDescription {
  /** Types only: never set. */
  readonly __types?: { doc: T; counters: C; fields: F };
}

/** A stored timestamp as either SDK reads it (the web SDK's `Timestamp`, the server SDK's). */
export interface ShardedTimestamp {
  readonly seconds: number;
  readonly nanoseconds: number;
  toMillis(): number;
  toDate(): Date;
}

/** A field the Rust struct stores: its path, the type its Rust type is stored as (absent when
 * the type does not say: a struct of the user's, an alias), and whether every document must
 * hold it (not an `Option`, no `#[serde(default)]`). */
export interface StoredFieldDescription {
  path: string;
  type?: "timestamp" | "integer" | "number" | "string" | "boolean" | "list" | "map" | "other";
  required?: boolean;
  /** For an integer type narrower than 64 bits (`i32`, `u8`, ...), the least and greatest
   * value it holds: an integer outside them fails the Rust read. */
  integerRange?: [number, number];
}

/** A field declared for some queries only (`#[sharded(range(all, x))]`,
 * `#[sharded(aggregate(all, x))]`): the field, and the query by the fields it compares. */
export interface FieldOfQuery {
  field: string;
  /** The fields the query compares (`==` or `in`); none for `all()`. */
  compared?: string[];
  /** The query is an array field's `array-contains`. */
  contains?: boolean;
}

/** Every description in an index file's text or parsed JSON. */
export function descriptionsIn(indexesFile: string | object): CollectionDescription[] {
  const file = typeof indexesFile === "string" ? JSON.parse(indexesFile) : indexesFile;
  const crates = (file as { shardedManaged?: { crates?: Record<string, { collections?: unknown[] }> } })
    .shardedManaged?.crates;
  if (!crates) {
    throw new ShardedError("the file has no `shardedManaged.crates`: build it with sharded-build");
  }
  const out: CollectionDescription[] = [];
  for (const entry of Object.values(crates)) {
    for (const collection of entry.collections ?? []) {
      out.push(checked(collection));
    }
  }
  return out;
}

/**
 * The description of the collection of the Rust type `type` (`"Message"`), or of the
 * collection id `type` when no type has that name.
 */
export function descriptionOf(indexesFile: string | object, type: string): CollectionDescription {
  const all = descriptionsIn(indexesFile);
  const found =
    all.find((d) => d.types?.includes(type)) ?? all.find((d) => d.collectionGroup === type);
  if (!found) {
    const known = all.map((d) => (d.types ?? [d.collectionGroup]).join(", ")).join("; ");
    throw new ShardedError(`no sharded type or collection \`${type}\` in the file (it has: ${known})`);
  }
  return found;
}

/** The values queries read: the current ones, then previous ones that are not current. */
export function readValues(d: CollectionDescription): string[] {
  const values = [...d.shardValues];
  for (const value of d.previousShardValues ?? []) {
    if (!values.includes(value)) values.push(value);
  }
  return values;
}

/** An error this client raises before anything is sent. */
export class ShardedError extends Error {
  override name = "ShardedError";
}

function checked(value: unknown): CollectionDescription {
  const d = value as CollectionDescription;
  const strings = (xs: unknown) => Array.isArray(xs) && xs.every((x) => typeof x === "string");
  if (
    typeof d !== "object" ||
    d === null ||
    typeof d.collectionGroup !== "string" ||
    typeof d.shardField !== "string" ||
    typeof d.orderField !== "string" ||
    (d.direction !== "ASCENDING" && d.direction !== "DESCENDING") ||
    !strings(d.shardValues) ||
    d.shardValues.length === 0
  ) {
    throw new ShardedError(`not a collection description: ${JSON.stringify(value)}`);
  }
  for (const counter of d.counterFields ?? []) {
    if (
      typeof counter?.field !== "string" ||
      !Number.isInteger(counter.shards) ||
      counter.shards < 1 ||
      counter.shards > 1000
    ) {
      throw new ShardedError(`not a counter of \`${d.collectionGroup}\`: ${JSON.stringify(counter)}`);
    }
  }
  return d;
}
