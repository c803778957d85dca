// A write checked before it is sent, as the Rust library checks its own and the generated
// security rules hold every client's: the order field (the server's time where the type is
// `server_timestamp`), every field the Rust struct requires, and each field of a known type of
// that type, from the description. A document that passes reads back in the Rust library; one
// that would not is a `ShardedError` naming the field, and nothing is sent.

import { type CollectionDescription, type StoredFieldDescription, ShardedError } from "./description.js";
import { checkUpdate, drawnInto, segments } from "./plan.js";

/** What the SDK in use writes besides plain values. */
export interface Sentinels {
  /** `serverTimestamp()`. */
  isServerTimestamp(value: unknown): boolean;
  /** `deleteField()`. */
  isDelete(value: unknown): boolean;
  /** Any other sentinel (`increment`, `arrayUnion`, ...): the server computes the value. */
  isSentinel(value: unknown): boolean;
}

/** The sentinels a write may hold, by what they do to a field. */
export type SentinelKind = "serverTimestamp" | "delete" | "increment" | "arrayUnion" | "arrayRemove";

/** Which sentinel `value` is, of either SDK, and an increment's amount: the web SDK's
 * `FieldValue` names its method in `_methodName` ("increment", "arrayUnion", "deleteField",
 * ...) and holds an increment's amount in `_operand`; the server SDK's names it in
 * `methodName` ("FieldValue.increment", ...) and holds it in `operand` (measured on firebase
 * 12 and @google-cloud/firestore 8: `test/check.test.mjs`). `undefined` for a plain value,
 * or a sentinel neither names. */
export function sentinelOf(value: unknown): { kind: SentinelKind; amount?: unknown } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as { _methodName?: unknown; methodName?: unknown; _operand?: unknown; operand?: unknown };
  const method = typeof v._methodName === "string" ? v._methodName : typeof v.methodName === "string" ? v.methodName : undefined;
  if (method === undefined) return undefined;
  const kind = SENTINEL_METHODS[method.replace(/^FieldValue\./, "")];
  if (kind === undefined) return undefined;
  return kind === "increment" ? { kind, amount: "_operand" in v ? v._operand : v.operand } : { kind };
}

const SENTINEL_METHODS: Record<string, SentinelKind> = {
  serverTimestamp: "serverTimestamp",
  deleteField: "delete",
  delete: "delete",
  increment: "increment",
  arrayUnion: "arrayUnion",
  arrayRemove: "arrayRemove",
};

/** Either SDK's sentinels told apart by their shape ([`sentinelOf`]): for checks in the core,
 * which imports neither SDK (`withShard`). */
export const ANY_SDK_SENTINELS: Sentinels = {
  isServerTimestamp: (value) => sentinelOf(value)?.kind === "serverTimestamp",
  isDelete: (value) => sentinelOf(value)?.kind === "delete",
  isSentinel: (value) => sentinelOf(value) !== undefined,
};

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
 * double; a timestamp or a `Date`, which they store as one). It does not look at an integer
 * type's range: [`withinRange`] does. */
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

/** Whether the integer `value` fits `field`'s Rust integer type (any does, where the type is
 * 64 bits wide or not an integer). */
export function withinRange(field: StoredFieldDescription | undefined, value: number): boolean {
  const range = field?.integerRange;
  return range === undefined || (value >= range[0] && value <= range[1]);
}

/** Checks `data`, written as `kind`, against the description `d`: the first problem
 * [`problemsOf`] finds is a `ShardedError`, and nothing is sent. */
export function checkWrite(d: CollectionDescription, data: Record<string, unknown>, kind: WriteKind, sdk: Sentinels): void {
  const [first] = problemsOf(d, data, kind, sdk);
  if (first !== undefined) throw new ShardedError(first);
}

/**
 * Every way `data`, written as `kind` (or, as `"stored"`, a document as it is stored after a
 * write), falls short of what the Rust struct reads and the generated rules hold a write to:
 * the order field, every required field, each field's type and an integer type's range, and
 * each sentinel against the field it writes (`increment` on numbers only, within an integer
 * type's range; `serverTimestamp()` on timestamps; `arrayUnion`/`arrayRemove` on arrays;
 * `deleteField()` on optional fields). Empty when it reads back in the Rust library.
 */
export function problemsOf(
  d: CollectionDescription,
  data: Record<string, unknown>,
  kind: WriteKind | "stored",
  sdk: Sentinels,
): string[] {
  const problems: string[] = [];
  const order = valueAt(data, d.orderField);
  if (d.serverTimestamp && kind !== "stored") {
    if (kind === "whole" && !(order.present && sdk.isServerTimestamp(order.value))) {
      problems.push(
        `\`${d.orderField}\` is the server's time on \`${d.collectionGroup}\` (server_timestamp): write serverTimestamp(), not ${order.present ? describe(order.value) : "nothing"}`,
      );
    }
    if (kind === "fields" && order.present) {
      problems.push(
        `\`${d.orderField}\` is the server's time of the document's creation on \`${d.collectionGroup}\` (server_timestamp): an update keeps it, leave it out`,
      );
    }
  } else if (kind !== "fields" && !order.present) {
    problems.push(`the document has no \`${d.orderField}\`, the order field every sharded query orders by`);
  }
  const orderField = (d.fields ?? []).find((field) => field.path === d.orderField);
  if (order.present && (!d.serverTimestamp || kind === "stored")) {
    const type = orderTypeOf(d);
    const problem = problemOfValue({ path: d.orderField, type, required: true, integerRange: orderField?.integerRange }, order.value, sdk, "the order field");
    if (problem) problems.push(problem);
  }
  for (const field of d.fields ?? []) {
    if (field.path === d.orderField) continue;
    const { present, value } = valueAt(data, field.path);
    if (!present) {
      if (kind !== "fields" && field.required) {
        problems.push(
          `the document has no \`${field.path}\`, which the Rust type requires: a document without it fails every strict read (\`missing field\`)`,
        );
      }
      continue;
    }
    const problem = problemOfValue(field, value, sdk);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** What is wrong with writing `value` (a plain value or a sentinel) to `field`, if anything. */
function problemOfValue(
  field: StoredFieldDescription,
  value: unknown,
  sdk: Sentinels,
  role?: string,
): string | undefined {
  const name = role ? `\`${field.path}\` (${role})` : `\`${field.path}\``;
  const type = field.type;
  const sentinel = sentinelOf(value);
  if (sdk.isDelete(value) || sentinel?.kind === "delete") {
    return field.required ? `${name} is required by the Rust type: it cannot be deleted` : undefined;
  }
  if (sentinel !== undefined || sdk.isSentinel(value)) {
    if (type === undefined || type === "other") return undefined;
    const kind = sentinel?.kind ?? (sdk.isServerTimestamp(value) ? "serverTimestamp" : undefined);
    const writes: Partial<Record<SentinelKind, StoredFieldDescription["type"][]>> = {
      serverTimestamp: ["timestamp"],
      increment: ["integer", "number"],
      arrayUnion: ["list"],
      arrayRemove: ["list"],
    };
    const takes = kind === undefined ? undefined : writes[kind];
    if (takes !== undefined && !takes.includes(type)) {
      return `${name} holds ${ARTICLE[type]} in the Rust type: ${SENTINEL_TEXT[kind!]} cannot write it`;
    }
    if (kind === "increment" && type === "integer") {
      const by = sentinel?.amount;
      if (typeof by !== "number" || !Number.isSafeInteger(by) || Object.is(by, -0)) {
        return `${name} holds an integer in the Rust type: increment(${describeAmount(by)}) would store a double`;
      }
      const range = field.integerRange;
      if (range !== undefined && Math.abs(by) > range[1]) {
        return `${name} holds an integer from ${range[0]} to ${range[1]} in the Rust type: increment(${by}) cannot fit it`;
      }
    }
    return undefined;
  }
  if (value === null && !field.required) return undefined;
  if (type === undefined) return undefined;
  if (!holdsType(type, value)) return `${name} holds ${ARTICLE[type] ?? "another type"} in the Rust type, not ${describe(value)}`;
  if (type === "integer" && !withinRange(field, value as number)) {
    const [min, max] = field.integerRange!;
    return `${name} holds an integer from ${min} to ${max} in the Rust type, not ${describe(value)}`;
  }
  return undefined;
}

const SENTINEL_TEXT: Record<SentinelKind, string> = {
  serverTimestamp: "serverTimestamp(), a timestamp,",
  delete: "deleteField()",
  increment: "increment(), a number,",
  arrayUnion: "arrayUnion(), an array,",
  arrayRemove: "arrayRemove(), an array,",
};

function describeAmount(by: unknown): string {
  if (Object.is(by, -0)) return "-0";
  return typeof by === "number" ? String(by) : describe(by);
}

function orderTypeOf(d: CollectionDescription): StoredFieldDescription["type"] | undefined {
  const stored = (d.fields ?? []).find((field) => field.path === d.orderField)?.type;
  return stored ?? (d.orderType as StoredFieldDescription["type"] | undefined);
}

/** `value` as an error names it. */
export function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (Object.is(value, -0)) return "-0 (stored as a double)";
  if (typeof value === "number") return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (isTimestamp(value)) return "a timestamp";
  if (typeof value === "object") return "a map";
  if (typeof value === "bigint") return `the bigint ${value}n`;
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "boolean") return `the boolean ${value}`;
  return `a ${typeof value}`;
}

/**
 * `data` with a shard drawn for it: what `batch.set` and `transaction.set` take for a whole
 * document. It is checked first as the collections check their own writes ([`checkWrite`],
 * a whole document; either SDK's sentinels told by their shape, or `sdk`'s), so that a write
 * built for a batch is held to the same contract: a `ShardedError` names the first problem,
 * and nothing is built.
 */
export function withShard<T extends Record<string, unknown>>(
  d: CollectionDescription,
  data: T,
  sdk: Sentinels = ANY_SDK_SENTINELS,
): T {
  checkWrite(d, data, "whole", sdk);
  return drawnInto(d, data);
}

/**
 * `data` checked as an update of some fields (`batch.update`, `transaction.update`): the
 * shard field left out, the order field of a `server_timestamp` type left alone, a required
 * field not deleted, each field and sentinel of its type. Returns `data`.
 */
export function checkedUpdate<T extends Record<string, unknown>>(
  d: CollectionDescription,
  data: T,
  sdk: Sentinels = ANY_SDK_SENTINELS,
): T {
  checkUpdate(d, data);
  checkWrite(d, data, "fields", sdk);
  return data;
}

/**
 * A write the security rules refused (`PERMISSION_DENIED`), with what the client finds wrong
 * with it: each way the written document (for an update, the stored document with the update
 * applied, where it can be read) falls short of the contract the generated rules hold it to
 * ([`problemsOf`]), or, when it meets it, that the refusal is the rules' own conditions (who
 * may write). `code` stays the SDK's, so code that tests it goes on working; `cause` is the
 * SDK's error.
 */
export class WriteDenied extends ShardedError {
  override name = "WriteDenied";
  readonly code = "permission-denied";

  constructor(
    /** The document's path. */
    readonly path: string,
    /** What is wrong with the write; empty when it meets the generated rules' contract. */
    readonly findings: string[],
    /** What else may be refused, where the client cannot tell (an increment's marker expiry
     * from this device's clock). */
    readonly hints: string[],
    override readonly cause: unknown,
  ) {
    super(
      `the security rules refused the write of \`${path}\` (PERMISSION_DENIED): ` +
        (findings.length > 0
          ? findings.join("; ")
          : `it meets what the generated rules hold a write to (the shard, the order field, each required field and type)${hints.length > 0 ? `, unless ${hints.join("; or ")}` : ""}, so it is your rules' own conditions (who may write) that refused it`),
    );
  }
}

/** Whether `error` is the SDK's `PERMISSION_DENIED`. */
export function isPermissionDenied(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "permission-denied" || code === 7;
}

/**
 * A stored document after `update` (an update's fields, dotted paths included, sentinels
 * standing for what they write): what the rules see as `request.resource.data`, to find what
 * an update left a document without.
 */
export function afterUpdate(
  stored: Record<string, unknown>,
  update: Record<string, unknown>,
  sdk: Sentinels,
): Record<string, unknown> {
  const after: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(update)) {
    const [top, ...rest] = key.split(".");
    if (rest.length > 0) {
      const inner = after[top!];
      after[top!] = typeof inner === "object" && inner !== null && !Array.isArray(inner) ? inner : {};
      continue;
    }
    const sentinel = sentinelOf(value);
    if (sdk.isDelete(value) || sentinel?.kind === "delete") delete after[key];
    else if (sentinel?.kind === "serverTimestamp" || sdk.isServerTimestamp(value)) after[key] = new Date();
    else if (sentinel?.kind === "increment") after[key] = typeof after[key] === "number" ? after[key] : 0;
    else if (sentinel?.kind === "arrayUnion" || sentinel?.kind === "arrayRemove") {
      after[key] = Array.isArray(after[key]) ? after[key] : [];
    } else after[key] = value;
  }
  return after;
}
