// What a sharded query is, whichever SDK sends it: its filters (checked against what the
// collection declares, so that the generated indexes serve it), its chunks of shard values,
// and the order its merge sorts in.

import { type CollectionDescription, type FieldOfQuery, readValues, ShardedError } from "./description.js";
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
  /** On a query with range filters on other fields (`rangeFields`, or a `rangeSets` set),
   * those fields' values of the last document, in the plan's order: the query orders by them
   * after the order field. */
  then?: unknown[];
  /** Its path (`rooms/r1/messages/m1`). */
  path: string;
}

/** One filter of a query. */
export type Filter =
  | { field: string; op: "==" | "array-contains" | RangeOp | "!="; value: unknown }
  | { field: string; op: "in" | "not-in"; values: unknown[] };

/** The bounds of a range. */
export type RangeOp = "<" | "<=" | ">" | ">=";

/** What `where` takes. */
export type WhereOp = "==" | "in" | "array-contains" | RangeOp | "!=" | "not-in";

const RANGE_OPS: readonly string[] = ["<", "<=", ">", ">="];

/** Firestore's most values in one `not-in`. */
export const MAX_NOT_IN = 10;

/** A range, `!=` or `not-in` filter on a field other than the order field: the query orders
 * by that field after the order field. */
function isFieldRange(d: CollectionDescription, f: Filter): boolean {
  return f.field !== d.orderField && (RANGE_OPS.includes(f.op) || f.op === "!=" || f.op === "not-in");
}

/** The fields with range filters declared, for every query or for some. */
function rangeFieldPaths(d: CollectionDescription): string[] {
  const paths = [...(d.rangeFields ?? [])];
  for (const range of d.ranges ?? []) if (!paths.includes(range.field)) paths.push(range.field);
  return paths;
}

/** `filters` and one more: an equality (`==`), `in` or `array-contains` filter on a declared
 * field, a bound of a range on the order field (the Rust `range(since..until)`, which every
 * index serves: it ends with the order field), or a range, `!=` or `not-in` filter on a field
 * declared `#[sharded(range)]` (the Rust `filter(...)`). The Rust library's refusals for what
 * the generated indexes or Firestore would not serve. */
export function withFilter(
  d: CollectionDescription,
  filters: Filter[],
  field: string,
  op: WhereOp,
  value: unknown,
): Filter[] {
  let filter: Filter;
  if (field === d.orderField && (op === "!=" || op === "not-in")) {
    throw new ShardedError(`the order field \`${field}\` takes ranges (\`<\`, \`<=\`, \`>\`, \`>=\`) only`);
  }
  if (RANGE_OPS.includes(op) && field === d.orderField) {
    const lower = op === ">" || op === ">=";
    const same = filters.filter(
      (f) => f.field === d.orderField && RANGE_OPS.includes(f.op) && (f.op === ">" || f.op === ">=") === lower,
    );
    if (same.length > 0) {
      throw new ShardedError(`the range already has its ${lower ? "lower" : "upper"} bound`);
    }
    filter = { field, op: op as RangeOp, value };
  } else if (RANGE_OPS.includes(op) || op === "!=" || op === "not-in") {
    if (!rangeFieldPaths(d).includes(field)) {
      throw new ShardedError(
        `\`${field}\` has no range, \`!=\` or \`not-in\` filter: declare #[sharded(range)] on it (ranges of the order field \`${d.orderField}\` need nothing)`,
      );
    }
    if (op === "not-in") {
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_NOT_IN) {
        throw new ShardedError(`\`not-in\` takes 1 to ${MAX_NOT_IN} values`);
      }
      filter = { field, op, values: value };
    } else {
      filter = { field, op: op as RangeOp | "!=", value };
    }
  } else {
    const indexed = [...d.indexedFields, ...(d.fieldSets ?? []).flat()];
    if ((op === "==" || op === "in") && !indexed.includes(field)) {
      throw new ShardedError(
        `\`${field}\` has no equality query: declare #[sharded(index)] on it (its index serves it); declared: ${indexed.join(", ") || "none"}`,
      );
    }
    if (op === "array-contains" && !(d.arrayFields ?? []).includes(field)) {
      throw new ShardedError(`\`${field}\` has no array-contains query: declare #[sharded(contains)] on it`);
    }
    if (op === "in") {
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_DISJUNCTIONS) {
        throw new ShardedError(`\`in\` takes 1 to ${MAX_DISJUNCTIONS} values`);
      }
      // Each value once, as Firestore compares them (`1` and `1.0`, `-0` and `0`): two chunk
      // queries asking for equal values would each return their documents.
      const distinct = value.filter((v, i) => value.findIndex((w) => compareValues(v, w) === 0) === i);
      filter = { field, op, values: distinct };
    } else {
      filter = { field, op: op as "==" | "array-contains", value };
    }
  }
  const out = [...filters, filter];
  checkTogether(d, out);
  return out;
}

/** The fields a query compares (`==`, `in`, `array-contains`): what names its index. */
function comparedFields(filters: Filter[]): string[] {
  return filters.filter((f) => f.op === "==" || f.op === "in" || f.op === "array-contains").map((f) => f.field);
}

/** What Firestore or the generated indexes refuse of filters together, as the Rust plan does. */
function checkTogether(d: CollectionDescription, filters: Filter[]): void {
  if (filters.filter((f) => f.op === "in").length > 1) {
    throw new ShardedError("one `in` filter per query");
  }
  const equalities = filters.filter((f) => f.op === "==" || f.op === "in").map((f) => f.field);
  const arrays = filters.filter((f) => f.op === "array-contains");
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
  const paths = rangedPaths(d, filters);
  if (paths.length === 0) return;
  const named = paths.map((p) => `\`${p}\``).join(", ");
  if (paths.length > 1) {
    if (declaredSet(d, paths) === undefined) {
      throw new ShardedError(
        `range filters on ${named}: each orders the query by its field, so filtering on them together needs an index of its own, planned for the sets declared with #[sharded(ranges(...))] on the struct; declare this one, or filter on one field`,
      );
    }
  }
  const compared = paths.find((p) => comparedFields(filters).includes(p));
  if (compared !== undefined) {
    throw new ShardedError(`the query compares \`${compared}\` for equality already; a range on it is that value or nothing`);
  }
  const ranged = filters.filter((f) => isFieldRange(d, f));
  const notEquals = ranged.filter((f) => f.op === "!=").length;
  const notIns = ranged.filter((f) => f.op === "not-in");
  if (notEquals + notIns.length > 1) {
    throw new ShardedError(
      `${notEquals} \`!=\` and ${notIns.length} \`not-in\` filters on ${named}: Firestore takes one \`!=\` or \`not-in\` per query; merge them into one \`not-in\``,
    );
  }
  if (notIns.length === 1 && filters.some((f) => f.op === "in")) {
    throw new ShardedError(`Firestore takes no \`not-in\` (on \`${notIns[0]!.field}\`) beside an \`in\``);
  }
}

/** The fields range filters are on, each once, in the order the chunk queries order by them
 * after the order field: a declared set's order, which the Rust derive wrote in the
 * description (the order of its indexes), so both SDKs send what one index serves. */
function rangedPaths(d: CollectionDescription, filters: Filter[]): string[] {
  const paths: string[] = [];
  for (const f of filters) if (isFieldRange(d, f) && !paths.includes(f.field)) paths.push(f.field);
  const set = declaredSet(d, paths);
  return set !== undefined ? [...set] : paths.sort(comparePaths);
}

/** The set declared with `#[sharded(ranges(...))]` that holds exactly `paths`, if any. */
function declaredSet(d: CollectionDescription, paths: string[]): string[] | undefined {
  return (d.rangeSets ?? []).find((set) => set.length === paths.length && paths.every((p) => set.includes(p)));
}

/** Field paths by their unquoted segments, one after another, each by its Unicode code points
 * (the Rust `path_order`; JavaScript's `<` compares UTF-16 code units, which put a character
 * past U+FFFF before one in U+E000..U+FFFF). */
function comparePaths(a: string, b: string): number {
  const [x, y] = [segments(a), segments(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = compareCodePoints(x[i]!, y[i]!);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

function compareCodePoints(a: string, b: string): number {
  const [x, y] = [Array.from(a), Array.from(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

/** Whether a declaration for some queries (`range(all, x)`, `aggregate(all, x)`) covers the
 * query of `filters`: the same compared fields, and an `array-contains` where it says so. */
export function declaredFor(declared: FieldOfQuery, filters: Filter[]): boolean {
  const compared = comparedFields(filters);
  const wanted = declared.compared ?? [];
  const contains = filters.some((f) => f.op === "array-contains");
  return (
    (declared.contains ?? false) === contains &&
    compared.length === wanted.length &&
    compared.every((field) => wanted.includes(field))
  );
}

/** A query as its chunk queries send it, whichever SDK sends them: plain data. */
export interface QueryPlan {
  /** What each chunk query reads. */
  chunks: Chunk[];
  /** Each chunk compares the shard field with `==` (one value each): Firestore takes no
   * `not-in` beside the shard field's `in`. */
  shardByEquality: boolean;
  /** The filters every document matches (AND). */
  filters: Filter[];
  /** An OR's queries, each its filters (AND): a document matches one or more. */
  anyOf?: Filter[][];
  /** The fields the chunk queries order by, before the document name: the order field, then
   * a range-filtered field. */
  orderBy: string[];
  /** Whether the chunk queries order descending (the type's direction, turned for `before`). */
  descending: boolean;
}

/** The plan of the query of `filters` (OR-ed with the queries of `or`, each its compared
 * filters), read forward or (`backward`) the other way; checks what depends on the whole
 * query (a range declared for some queries only, an OR's parts). */
export function planOf(d: CollectionDescription, filters: Filter[], backward = false, or: Filter[][] = []): QueryPlan {
  const ranged = rangedPaths(d, filters);
  if (ranged.length > 0 && or.length > 0) {
    throw new ShardedError(
      `a range filter on \`${ranged[0]}\` does not go with an OR: Firestore would order each query by it; filter each query apart`,
    );
  }
  for (const field of ranged) {
    if ((d.rangeFields ?? []).includes(field)) continue;
    const declared = (d.ranges ?? []).filter((r) => r.field === field);
    if (!declared.some((r) => declaredFor(r, filters))) {
      throw new ShardedError(
        `\`${field}\` has range filters declared for some queries only (#[sharded(range(...))]), not this one: add it to the list`,
      );
    }
  }
  const direction = {
    orderBy: [d.orderField, ...ranged],
    descending: (d.direction === "DESCENDING") !== backward,
  };
  if (or.length > 0) {
    const compared = (f: Filter) => f.op === "==" || f.op === "in" || f.op === "array-contains";
    const anyOf = [filters.filter(compared), ...or];
    if (anyOf.some((part) => part.length === 0)) {
      throw new ShardedError("a query without filters matches every document, so an OR with it is the whole collection: query it alone");
    }
    // Every chunk asks for the whole OR, so that a document matching several of its queries
    // is read by its shard value's chunk only.
    const disjunctionsOf = (part: Filter[]) => {
      const any = part.find((f) => f.op === "in");
      return any && "values" in any ? any.values.length : 1;
    };
    const disjunctions = anyOf.reduce((n, part) => n + disjunctionsOf(part), 0);
    if (disjunctions > MAX_DISJUNCTIONS) {
      throw new ShardedError(`${disjunctions} disjunctions in one query; Firestore allows ${MAX_DISJUNCTIONS}`);
    }
    const chunks = splitEvenly(readValues(d), Math.floor(MAX_DISJUNCTIONS / disjunctions)).map((shards) => ({ shards, disjunctions }));
    return { chunks, shardByEquality: false, filters: filters.filter((f) => !compared(f)), anyOf, ...direction };
  }
  const notIn = filters.some((f) => f.op === "not-in");
  return {
    chunks: notIn ? readValues(d).map((value) => ({ shards: [value] })) : chunksOf(d, filters),
    shardByEquality: notIn,
    filters,
    ...direction,
  };
}

/** The values a chunk query starts after, before the document name: the cursor's, one per
 * field the plan orders by. */
export function cursorValues(plan: QueryPlan, cursor: Cursor): unknown[] {
  if (plan.orderBy.length === 1) return [cursor.order];
  const then = cursor.then ?? [];
  if (then.length !== plan.orderBy.length - 1) {
    throw new ShardedError(
      `the cursor holds no value of \`${plan.orderBy.slice(1 + then.length).join("`, `") || plan.orderBy[1]}\`, which this query orders by: use a cursor of a page of this query`,
    );
  }
  return [cursor.order, ...then];
}

/** The cursor after (or before) a document whose values of the plan's order fields are
 * `values`. */
export function cursorAt(values: unknown[], path: string): Cursor {
  return values.length > 1 ? { order: values[0], then: values.slice(1), path } : { order: values[0], path };
}

/** One chunk query's share of the fan-out: some of the shard values read and, for an `in`
 * query, some of its values. */
export interface Chunk {
  shards: string[];
  /** The `in` values this chunk asks for; absent without `in`. */
  inValues?: unknown[];
  /** An OR's disjunctions, which every chunk asks for whole (an `in` counts its values). */
  disjunctions?: number;
}

/** What a chunk query compares a filter's field with: the chunk's share of an `in`'s values,
 * a `not-in`'s values, or the filter's value. */
export function operandOf(filter: Filter, chunk: Chunk): unknown {
  if (filter.op === "in") return chunk.inValues ?? filter.values;
  return "values" in filter ? filter.values : filter.value;
}

/** How many (shard value, `in` value) pairs a chunk covers: its share of the results is
 * taken in proportion (writes draw shard values uniformly). */
export function weightOf(chunk: Chunk): number {
  return chunk.shards.length * (chunk.inValues?.length ?? chunk.disjunctions ?? 1);
}

/** The chunks of shard values one round queries (the Rust `fan_out`): with an `in` of `k`
 * values, the (shard value, `in` value) pairs cut into the fewest rectangles of at most 30,
 * from groups of `in` values and groups of shard values of near-equal sizes. */
export function chunksOf(d: CollectionDescription, filters: Filter[]): Chunk[] {
  const shards = readValues(d);
  const inFilter = filters.find((f) => f.op === "in");
  if (inFilter?.op !== "in") return splitEvenly(shards, MAX_DISJUNCTIONS).map((run) => ({ shards: run }));
  const k = inFilter.values.length;
  const queries = (perGroup: number) =>
    Math.ceil(k / perGroup) * Math.ceil(shards.length / Math.floor(MAX_DISJUNCTIONS / perGroup));
  let perGroup = 1;
  for (let candidate = 2; candidate <= Math.min(k, MAX_DISJUNCTIONS); candidate++) {
    if (queries(candidate) < queries(perGroup)) perGroup = candidate;
  }
  const shardGroups = splitEvenly(shards, Math.floor(MAX_DISJUNCTIONS / perGroup));
  return splitEvenly(inFilter.values, perGroup).flatMap((values) =>
    shardGroups.map((run) => ({ shards: run, inValues: values })),
  );
}

/** The merge's order of two documents of `plan`, by their values of its order fields, then
 * their paths, in the direction the chunk queries read. */
export function compareInPlan(
  plan: QueryPlan,
  aValues: unknown[],
  aPath: string,
  bValues: unknown[],
  bPath: string,
): number {
  let order = 0;
  for (let i = 0; i < aValues.length && order === 0; i++) order = compareValues(aValues[i], bValues[i]);
  order ||= compareNames(aPath, bPath);
  return plan.descending ? -order : order;
}

/** The stored shard field name (the description's path, unquoted). */
export function shardFieldName(d: CollectionDescription): string {
  return segments(d.shardField)[0]!;
}

/** `data` with a shard drawn for it, unchecked: what the collections send once they have
 * checked the write (`withShard` checks it). */
export function drawnInto<T extends Record<string, unknown>>(d: CollectionDescription, data: T): T {
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

/**
 * What a merge (`set(id, data, {merge: true})` or `{mergeFields}`) writes, given the stored
 * document's shard field (`stored`, undefined when there is no document): `data` as it is
 * when the stored shard is one queries read (a merge keeps it), otherwise `data` with a
 * shard drawn, and `shardPath` (the SDK's path of the shard field) added to `mergeFields`.
 */
export function mergeWrite<D extends Record<string, unknown>, P>(
  d: CollectionDescription,
  data: D,
  options: { merge?: boolean; mergeFields?: (string | P)[] },
  stored: unknown,
  shardPath: P,
): [D, { merge?: boolean; mergeFields?: (string | P)[] }] {
  checkUpdate(d, data);
  if (typeof stored === "string" && readValues(d).includes(stored)) return [data, options];
  const drawn = drawnInto(d, data);
  return [drawn, options.mergeFields ? { mergeFields: [...options.mergeFields, shardPath] } : options];
}

/** Refuses an update that names the shard field: an update keeps the stored shard. */
export function checkUpdate(d: CollectionDescription, data: object): void {
  const name = shardFieldName(d);
  if (Object.keys(data).some((key) => key === name || key.startsWith(`${name}.`))) {
    throw new ShardedError(`an update keeps the shard: leave \`${name}\` out`);
  }
}
