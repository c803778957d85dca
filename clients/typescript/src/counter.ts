// Distributed counters (`#[sharded(counter(..))]` in Rust): a counter of document `d` is its
// shard documents `d/_sharded_counter_<field>/0..n-1`, each holding a part of the value in
// `value`. An increment is one commit of two writes: the addition to one shard document drawn
// at random, naming the increment in `increment`, and the creation of its marker
// `d/_sharded_increments/<id>`, which records the counter, the shard, the amount and a digest
// of the commit. Sent again after it landed, the commit is refused whole (the marker exists:
// ALREADY_EXISTS, or PERMISSION_DENIED under the generated rules), so an increment counts
// once; the same id with another counter or amount is an IncrementConflict; the value is the
// sum of the shard documents. As the Rust library does.

import { checkDocumentId, describe } from "./check.js";
import { type CollectionDescription, ShardedError } from "./description.js";

/** A counter as the description declares it. */
export interface CounterField {
  field: string;
  shards: number;
  /** The range of the field's Rust integer type, where it is narrower than 64 bits. */
  integerRange?: [number, number];
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
/** A marker's field naming its counter. */
export const MARKER_COUNTER_FIELD = "field";
/** A marker's field naming the shard document its addition went to. */
export const MARKER_SHARD_FIELD = "shard";
/** A marker's field holding the amount added. */
export const MARKER_AMOUNT_FIELD = "amount";
/** A marker's field holding a digest of the commit it landed in. */
export const MARKER_COMMIT_FIELD = "commit";
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
  const integerRange = (d.fields ?? []).find((stored) => stored.path === field)?.integerRange;
  return integerRange ? { ...counter, integerRange } : counter;
}

/** Checks an increment before anything is sent, as the Rust library's `Increment` does: a
 * safe integer (not `-0`, which the SDKs store as a double that the Rust library then cannot
 * read as a count), at most the largest value of the counter's Rust type either way (where
 * `counter` says it: an `i32` counter takes at most 2147483647), and an id that is a document
 * id. */
export function checkIncrement(by: number, id: string, counter?: CounterField): void {
  if (typeof by !== "number" || !Number.isSafeInteger(by) || Object.is(by, -0)) {
    throw new ShardedError(`an increment adds an integer, not ${Object.is(by, -0) ? "-0" : describe(by)}`);
  }
  const range = counter?.integerRange;
  if (range !== undefined && Math.abs(by) > range[1]) {
    throw new ShardedError(
      `an increment of ${by} to the counter \`${counter!.field}\` cannot fit its Rust type (${range[0]} to ${range[1]}): an amount is at most ${range[1]} either way`,
    );
  }
  try {
    checkDocumentId(id);
  } catch (error) {
    throw new ShardedError(`\`${id}\` is not a valid id for an increment: ${(error as Error).message}`);
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
 * document drawn uniformly (`shardId`, its id), and the marker. */
export function incrementPaths(
  document: string,
  counter: CounterField,
  id: string,
): { shard: string; shardId: string; marker: string } {
  const shardId = String(Math.floor(Math.random() * counter.shards));
  return {
    shard: `${document}/${COUNTER_COLLECTION_PREFIX}${counter.field}/${shardId}`,
    shardId,
    marker: markerPath(document, id),
  };
}

/** What an increment's marker holds, but its expiry (a timestamp of the SDK in use): the
 * counter, the shard, the amount and the commit's digest. */
export async function markerFields(
  document: string,
  counter: CounterField,
  shardId: string,
  by: number,
  id: string,
): Promise<Record<string, string | number>> {
  return {
    [MARKER_COUNTER_FIELD]: counter.field,
    [MARKER_SHARD_FIELD]: shardId,
    [MARKER_AMOUNT_FIELD]: by,
    [MARKER_COMMIT_FIELD]: await incrementDigest(document, counter.field, by, id),
  };
}

/** The digest of a commit of one increment: SHA-256, in hex, of its document, counter, amount
 * and id. A marker of it records it; only the counter and the amount are compared when the
 * same id is applied again. */
export async function incrementDigest(document: string, field: string, by: number, id: string): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(["increment", document, field, by, id]));
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Whether a marker's data records the increment of `by` to `field` (a marker written before
 * markers recorded their increment matches any), or else the error to throw: the id names
 * another increment of the document. */
export function checkRecorded(
  marker: Record<string, unknown>,
  document: string,
  id: string,
  field: string,
  by: number,
): void {
  const recordedField = marker[MARKER_COUNTER_FIELD];
  const recordedAmount = marker[MARKER_AMOUNT_FIELD];
  if (recordedField === undefined || recordedAmount === undefined) return;
  if (recordedField === field && Number(recordedAmount) === by) return;
  const show = (f: unknown, n: unknown) => `\`${String(f)}\` ${Number(n) >= 0 ? "+" : ""}${String(n)}`;
  throw new IncrementConflict(
    `increment \`${id}\` of \`${document}\` was applied as ${show(recordedField, recordedAmount)}; it cannot be ${show(field, by)} under the same id (nothing was written)`,
  );
}

/** The same increment id applied with another counter or amount: an id names one increment,
 * bound to what it adds (the Rust library's `Error::IncrementConflict`). Nothing was written. */
export class IncrementConflict extends ShardedError {
  override name = "IncrementConflict";
}

/** The marker of the increment `id` on the document `document`. */
export function markerPath(document: string, id: string): string {
  return `${document}/${INCREMENTS_COLLECTION}/${id}`;
}

/** The collection of a counter's shard documents under `document`. */
export function shardCollectionPath(document: string, counter: CounterField): string {
  return `${document}/${COUNTER_COLLECTION_PREFIX}${counter.field}`;
}

/** When a marker made now expires: by this machine's clock, corrected by `clockOffsetMs` (the
 * server's time minus this machine's, where the SDK tells it: the server SDK's read and write
 * times). The generated rules take an expiry within an hour of the request's own time plus the
 * lifetime, so a web client whose clock is more than an hour off is refused there, rather
 * than writing a marker that expires early. */
export function markerExpiry(clockOffsetMs = 0): number {
  return Date.now() + clockOffsetMs + MARKER_LIFETIME_MS;
}

/** Whether a commit's failure may be its marker's precondition (the increment had landed):
 * ALREADY_EXISTS, or PERMISSION_DENIED from the generated rules. The marker tells. */
export function mayBeMarkerRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    code === "already-exists" || code === "permission-denied" || code === 6 || code === 7
  );
}

/** The value of a counter whose shard documents hold `values` (a missing one counts 0): their
 * sum. A value that is not an integer (written by hand) is a `ShardedError`, as the Rust
 * library's read refuses it. */
export function sumOfShards(values: unknown[]): number {
  let total = 0;
  for (const value of values) {
    if (value === undefined || value === null) continue;
    if (typeof value !== "number" || !Number.isInteger(value)) {
      throw new ShardedError(`a counter's shard holds ${String(value)}, not an integer`);
    }
    total += value;
  }
  return total;
}

/**
 * A live counter from its SDK's listener over the shard documents: `listen` starts that
 * listener, handing each snapshot's shard values to `values` and its failure to `failed`, and
 * returns how to stop it. `next` gets the sum when it changed (the first value at once); shard
 * values that are not a counter's stop the listener and go to `error`. Returns how to stop.
 */
export function followCounter(
  listen: (values: (shardValues: unknown[]) => void, failed: (error: Error) => void) => () => void,
  next: (value: number) => void,
  error?: (error: Error) => void,
): () => void {
  let shown: number | undefined;
  const stop = listen(
    (shardValues) => {
      let value: number;
      try {
        value = sumOfShards(shardValues);
      } catch (failure) {
        stop();
        error?.(failure as Error);
        return;
      }
      if (value === shown) return;
      shown = value;
      next(value);
    },
    (failure) => error?.(failure),
  );
  return stop;
}
