// Distributed counters (`#[sharded(counter(..))]` in Rust): a counter of document `d` is its
// shard documents `d/_sharded_counter_<field>/0..n-1`, each holding a part of the value in
// `value`. An increment is one commit of two writes: the addition to one shard document drawn
// at random, naming the increment in `increment`, and the creation of its marker
// `d/_sharded_increments/<id>`. Sent again after it landed, the commit is refused whole (the
// marker exists: ALREADY_EXISTS, or PERMISSION_DENIED under the generated rules), so an
// increment counts once; the value is the sum of the shard documents. As the Rust library does.

import { type CollectionDescription, ShardedError } from "./description.js";

/** A counter as the description declares it. */
export interface CounterField {
  field: string;
  shards: number;
}

/** The start of a counter's shard collection id; the field follows. */
export const COUNTER_COLLECTION_PREFIX = "_sharded_counter_";
/** The collection id of increment markers, under the counted document. */
export const INCREMENTS_COLLECTION = "_sharded_increments";
/** A shard document's part of the value. */
export const SHARD_VALUE_FIELD = "value";
/** A shard document's field naming the marker the same commit creates. */
export const SHARD_INCREMENT_FIELD = "increment";
/** A marker's expiry, its TTL field. */
export const MARKER_EXPIRY_FIELD = "expire_at";
/** How long a marker is kept: the window in which an increment applied again counts nothing. */
export const MARKER_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** The counter `field` of the description, or a ShardedError naming the declared ones. */
export function counterOf(d: CollectionDescription, field: string): CounterField {
  const counter = (d.counterFields ?? []).find((c) => c.field === field);
  if (!counter) {
    const declared = (d.counterFields ?? []).map((c) => `\`${c.field}\``).join(", ") || "none";
    throw new ShardedError(
      `\`${field}\` is not a counter of \`${d.collectionGroup}\` (declared: ${declared}); declare it with #[sharded(counter(shards = n))]`,
    );
  }
  return counter;
}

/** Checks an increment before anything is sent: a safe integer, and an id Firestore takes. */
export function checkIncrement(by: number, id: string): void {
  if (!Number.isSafeInteger(by)) {
    throw new ShardedError(`an increment adds an integer, not ${by}`);
  }
  const bytes = new TextEncoder().encode(id).length;
  if (
    id.length === 0 ||
    id.includes("/") ||
    id === "." ||
    id === ".." ||
    /^__.*__$/.test(id) ||
    bytes > 1500
  ) {
    throw new ShardedError(`\`${id}\` is not a valid document id for an increment`);
  }
}

const ID_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A new increment id: 20 letters and digits, drawn as Firestore draws document ids. */
export function newIncrementId(): string {
  const bytes = new Uint8Array(40);
  let id = "";
  while (id.length < 20) {
    globalThis.crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      // Bytes past the last whole multiple of 62 are skipped, so that each letter is as likely.
      if (byte < 248 && id.length < 20) id += ID_CHARACTERS[byte % 62];
    }
  }
  return id;
}

/** Where an increment of `counter` on the document `document` (a path) writes: a shard
 * document drawn uniformly, and the marker. */
export function incrementPaths(
  document: string,
  counter: CounterField,
  id: string,
): { shard: string; marker: string } {
  const shard = Math.floor(Math.random() * counter.shards);
  return {
    shard: `${document}/${COUNTER_COLLECTION_PREFIX}${counter.field}/${shard}`,
    marker: markerPath(document, id),
  };
}

/** The marker of the increment `id` on the document `document`. */
export function markerPath(document: string, id: string): string {
  return `${document}/${INCREMENTS_COLLECTION}/${id}`;
}

/** The collection of a counter's shard documents under `document`. */
export function shardCollectionPath(document: string, counter: CounterField): string {
  return `${document}/${COUNTER_COLLECTION_PREFIX}${counter.field}`;
}

/** When a marker made now expires. */
export function markerExpiry(): number {
  return Date.now() + MARKER_LIFETIME_MS;
}

/** Whether a commit's failure may be its marker's precondition (the increment had landed):
 * ALREADY_EXISTS, or PERMISSION_DENIED from the generated rules. The marker tells. */
export function mayBeMarkerRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    code === "already-exists" || code === "permission-denied" || code === 6 || code === 7
  );
}
