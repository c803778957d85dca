// What a sharded query is, whichever SDK sends it: its filters (checked against what the
// collection declares, so that the generated indexes serve it), its chunks of shard values,
// and the order its merge sorts in.

import { type CollectionDescription, readValues, ShardedError } from "./description.js";
import { compareNames, compareValues } from "./order.js";
import { drawShard } from "./shard.js";

/** Firestore's most disjunctions in one query: shard values times `in` values. */
export const MAX_DISJUNCTIONS = 30;

/** The names a field path stands for, unquoted: `` `x.y`.z `` is `x.y`, then `z`. */
export function segments(path: string): string[] {
  const out: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === "`") quoted = !quoted;
    else if (ch === "\\" && quoted && i + 1 < path.length) current += path[++i];
    else if (ch === "." && !quoted) {
      out.push(current);
      current = "";
    } else current += ch;
  }
  out.push(current);
  return out;
}

/** Splits `items` into the fewest runs of at most `max`, as evenly as the Rust library does. */
export function splitEvenly<T>(items: T[], max: number): T[][] {
  if (items.length === 0) return [];
  const runs = Math.ceil(items.length / max);
  const size = Math.floor(items.length / runs);
  const extra = items.length % runs;
  const out: T[][] = [];
  let at = 0;
  for (let i = 0; i < runs; i++) {
    const len = size + (i < extra ? 1 : 0);
    out.push(items.slice(at, at + len));
    at += len;
  }
  return out;
}

/** Where the next page starts: after this document. */
export interface Cursor {
  /** The order field's value of the last document. */
  order: unknown;
  /** Its path (`rooms/r1/messages/m1`). */
  path: string;
}

/** One filter of a query. */
export type Filter =
  | { field: string; op: "=="; value: unknown }
  | { field: string; op: "in"; values: unknown[] }
  | { field: string; op: "array-contains"; value: unknown }
  | { field: string; op: RangeOp; value: unknown };

/** The bounds of a range on the order field. */
export type RangeOp = "<" | "<=" | ">" | ">=";

/** What `where` takes. */
export type WhereOp = "==" | "in" | "array-contains" | RangeOp;

const RANGE_OPS: readonly string[] = ["<", "<=", ">", ">="];

/** `filters` and an equality (`==`), `in` or `array-contains` filter on a declared field, or
 * a bound of a range on the order field (the Rust `range(since..until)`, which every index
 * serves: it ends with the order field); the Rust library's refusals for what the generated
 * indexes would not serve. */
export function withFilter(
  d: CollectionDescription,
  filters: Filter[],
  field: string,
  op: WhereOp,
  value: unknown,
): Filter[] {
  if (RANGE_OPS.includes(op)) {
    if (field !== d.orderField) {
      throw new ShardedError(
        `a range on \`${field}\`: this client takes ranges on the order field \`${d.orderField}\` only`,
      );
    }
    const lower = op === ">" || op === ">=";
    const same = filters.filter((f) => RANGE_OPS.includes(f.op) && (f.op === ">" || f.op === ">=") === lower);
    if (same.length > 0) {
      throw new ShardedError(`the range already has its ${lower ? "lower" : "upper"} bound`);
    }
    return [...filters, { field, op: op as RangeOp, value }];
  }
  const indexed = [...d.indexedFields, ...(d.fieldSets ?? []).flat()];
  if ((op === "==" || op === "in") && !indexed.includes(field)) {
    throw new ShardedError(
      `\`${field}\` has no equality query: declare #[sharded(index)] on it (its index serves it); declared: ${indexed.join(", ") || "none"}`,
    );
  }
  if (op === "array-contains" && !(d.arrayFields ?? []).includes(field)) {
    throw new ShardedError(`\`${field}\` has no array-contains query: declare #[sharded(contains)] on it`);
  }
  let filter: Filter;
  if (op === "in") {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_DISJUNCTIONS) {
      throw new ShardedError(`\`in\` takes 1 to ${MAX_DISJUNCTIONS} values`);
    }
    filter = { field, op, values: value };
  } else {
    filter = { field, op, value };
  }
  const out = [...filters, filter];
  if (out.filter((f) => f.op === "in").length > 1) {
    throw new ShardedError("one `in` filter per query");
  }
  const equalities = out
    .filter((f) => f.op !== "array-contains" && !RANGE_OPS.includes(f.op))
    .map((f) => f.field);
  const arrays = out.filter((f) => f.op === "array-contains");
  if (arrays.length > 1 || (arrays.length === 1 && equalities.length > 0)) {
    throw new ShardedError("an array-contains query takes no other filter: its index is (shard, array, order)");
  }
  if (equalities.length > 1) {
    const served = (d.fieldSets ?? []).some(
      (set) => set.length === equalities.length && equalities.every((f) => set.includes(f)),
    );
    if (!served) {
      throw new ShardedError(
        `no index serves equality on ${equalities.join(" and ")}: declare #[sharded(index(${equalities.join(", ")}))] on the struct`,
      );
    }
  }
  return out;
}

/** The chunks of shard values one round queries: each at most 30 disjunctions with the `in`. */
export function chunksOf(d: CollectionDescription, filters: Filter[]): string[][] {
  const inFilter = filters.find((f) => f.op === "in");
  const values = inFilter?.op === "in" ? inFilter.values.length : 1;
  return splitEvenly(readValues(d), Math.max(1, Math.floor(MAX_DISJUNCTIONS / values)));
}

/** The merge's order of two documents, by their order values and paths. */
export function compareInOrder(
  d: CollectionDescription,
  aValue: unknown,
  aPath: string,
  bValue: unknown,
  bPath: string,
): number {
  const order = compareValues(aValue, bValue) || compareNames(aPath, bPath);
  return d.direction === "DESCENDING" ? -order : order;
}

/** The stored shard field name (the description's path, unquoted). */
export function shardFieldName(d: CollectionDescription): string {
  return segments(d.shardField)[0]!;
}

/** `data` with a shard drawn for it: what `batch.set` and `transaction.set` take. */
export function withShard<T extends Record<string, unknown>>(d: CollectionDescription, data: T): T {
  const name = shardFieldName(d);
  if (name in data) {
    throw new ShardedError(
      `the document sets the shard field \`${name}\`: the shard is drawn for every write, leave it out`,
    );
  }
  return { ...data, [name]: drawShard(d) };
}

/** Refuses a parent path (`"rooms/r1"`) that is not where the collection lives: its collection
 * ids must be the description's `parentCollections`, each with a document id. */
export function checkParent(d: CollectionDescription, parent: string | undefined): void {
  const parents = d.parentCollections ?? [];
  const segments = parent ? parent.split("/") : [];
  if (
    segments.length !== parents.length * 2 ||
    segments.some((s, i) => s === "" || (i % 2 === 0 && s !== parents[i / 2]))
  ) {
    const expected = parents.map((p) => `${p}/{id}`).join("/") || "no parent";
    throw new ShardedError(`\`${d.collectionGroup}\` lives under ${expected}, not under \`${parent ?? ""}\``);
  }
}

/** Refuses an update that names the shard field: an update keeps the stored shard. */
export function checkUpdate(d: CollectionDescription, data: object): void {
  const name = shardFieldName(d);
  if (Object.keys(data).some((key) => key === name || key.startsWith(`${name}.`))) {
    throw new ShardedError(`an update keeps the shard: leave \`${name}\` out`);
  }
}
