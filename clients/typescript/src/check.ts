// A write checked before it is sent, as the Rust library checks its own and the generated
// security rules hold every client's: the order field (the server's time where the type is
// `server_timestamp`), every field the Rust struct requires, and each field of a known type of
// that type, from the description. A document that passes reads back in the Rust library; one
// that would not is a `ShardedError` naming the field, and nothing is sent.

import { type CollectionDescription, type StoredFieldDescription, ShardedError } from "./description.js";
import { segments } from "./plan.js";

/** What the SDK in use writes besides plain values. */
export interface Sentinels {
  /** `serverTimestamp()`. */
  isServerTimestamp(value: unknown): boolean;
  /** `deleteField()`. */
  isDelete(value: unknown): boolean;
  /** Any other sentinel (`increment`, `arrayUnion`, ...): the server computes the value. */
  isSentinel(value: unknown): boolean;
}

/** A whole document (`add`, `set`, a merge that creates it), or some of its fields (`update`, a
 * merge of an existing document). */
export type WriteKind = "whole" | "fields";

function isTimestamp(value: unknown): boolean {
  if (value instanceof Date) return true;
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.toMillis === "function" && typeof v.toDate === "function";
}

/** Whether `value` is stored as `type` (an integer that is not `-0`, which the SDKs store as a
 * double; a timestamp or a `Date`, which they store as one). */
export function holdsType(type: StoredFieldDescription["type"], value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value) && !Object.is(value, -0);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "timestamp":
      return isTimestamp(value);
    case "list":
      return Array.isArray(value);
    case "map":
      return typeof value === "object" && value !== null && !Array.isArray(value) && !isTimestamp(value);
    default:
      return true;
  }
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "a boolean",
  timestamp: "a timestamp",
  list: "an array",
  map: "a map",
};

/** The top-level value `data` holds for the stored field path `path` (an update may name a
 * nested path with dots; a whole document holds objects). */
function valueAt(data: Record<string, unknown>, path: string): { present: boolean; value: unknown } {
  const name = segments(path).join(".");
  if (name in data) return { present: true, value: data[name] };
  return { present: false, value: undefined };
}

/**
 * Checks a document id as the Rust library checks it (`check_document_id`), before anything
 * is sent: not empty, at most 1,500 bytes, no `/`, not `.` or `..`, and not of the reserved
 * form `__…__`, except a legacy numeric id `__id<N>__` with N a non-zero 64-bit integer
 * written without `+` or leading zeros (the one form Firestore and Datastore take).
 */
export function checkDocumentId(id: string): void {
  const refuse = (reason: string) => {
    throw new ShardedError(`\`${id}\` is no document id: ${reason}`);
  };
  if (typeof id !== "string" || id.length === 0) refuse("a document id cannot be empty");
  if (new TextEncoder().encode(id).length > 1500) refuse("a document id is at most 1,500 bytes");
  if (id.includes("/")) refuse("a document id cannot contain `/`");
  if (id === "." || id === "..") refuse("a document id cannot be `.` or `..`");
  if (id.length >= 4 && id.startsWith("__") && id.endsWith("__") && !isNumericId(id)) {
    refuse("ids of the form `__…__` are reserved, but for `__id<N>__` with N a non-zero 64-bit integer without leading zeros");
  }
}

/** Whether `id` is `__id<N>__` in the one form the servers take. */
function isNumericId(id: string): boolean {
  const digits = /^__id(-?[1-9][0-9]*)__$/.exec(id)?.[1];
  if (digits === undefined) return false;
  const n = BigInt(digits);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

/** Checks `data`, written as `kind`, against the description `d`. */
export function checkWrite(d: CollectionDescription, data: Record<string, unknown>, kind: WriteKind, sdk: Sentinels): void {
  const order = valueAt(data, d.orderField);
  if (d.serverTimestamp) {
    if (kind === "whole" && !(order.present && sdk.isServerTimestamp(order.value))) {
      throw new ShardedError(
        `\`${d.orderField}\` is the server's time on \`${d.collectionGroup}\` (server_timestamp): write serverTimestamp(), not ${order.present ? "a value of the client's" : "nothing"}`,
      );
    }
    if (kind === "fields" && order.present) {
      throw new ShardedError(
        `\`${d.orderField}\` is the server's time of the document's creation on \`${d.collectionGroup}\` (server_timestamp): an update keeps it, leave it out`,
      );
    }
  } else if (kind === "whole" && !order.present) {
    throw new ShardedError(`the document has no \`${d.orderField}\`, the order field every sharded query orders by`);
  }
  if (order.present && !d.serverTimestamp && !sdk.isSentinel(order.value)) {
    const type = orderTypeOf(d);
    if (type && !holdsType(type, order.value)) {
      throw new ShardedError(`\`${d.orderField}\` (the order field) holds ${ARTICLE[type]}, not ${describe(order.value)}`);
    }
  }
  for (const field of d.fields ?? []) {
    if (field.path === d.orderField) continue;
    const { present, value } = valueAt(data, field.path);
    if (!present) {
      if (kind === "whole" && field.required) {
        throw new ShardedError(
          `the document has no \`${field.path}\`, which the Rust type requires: a document without it fails every strict read (\`missing field\`)`,
        );
      }
      continue;
    }
    if (sdk.isDelete(value)) {
      if (field.required) throw new ShardedError(`\`${field.path}\` is required by the Rust type: it cannot be deleted`);
      continue;
    }
    if (sdk.isSentinel(value) || field.type === undefined) continue;
    if (value === null && !field.required) continue;
    if (!holdsType(field.type, value)) {
      throw new ShardedError(`\`${field.path}\` holds ${ARTICLE[field.type]} in the Rust type, not ${describe(value)}`);
    }
  }
}

function orderTypeOf(d: CollectionDescription): StoredFieldDescription["type"] | undefined {
  const stored = (d.fields ?? []).find((field) => field.path === d.orderField)?.type;
  return stored ?? (d.orderType as StoredFieldDescription["type"] | undefined);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (Object.is(value, -0)) return "-0 (stored as a double)";
  if (typeof value === "number") return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (typeof value === "object") return "a map";
  return `the ${typeof value} ${JSON.stringify(value)}`;
}
