// Whether the indexes of a `firestore.indexes.json` serve a plain Firestore query, by
// Firestore's rules, as the Rust library's `IndexNeed::is_served_by_file` tells for composite
// indexes, and with the single-field indexes the file leaves (or exempts): the emulator runs
// any query without an index, so this is what tells a web team, before production does, that a
// query `firebase deploy` will not serve. A sharded collection's order field and shard field
// have their single-field indexes disabled (the recipe's exemptions), so a plain
// `orderBy(orderField)` on one is refused in production with FAILED_PRECONDITION ("The query
// requires an index"); run it through the client's sharded query instead.

import { ShardedError } from "./description.js";
import { segments } from "./plan.js";

/** A plain query on one collection (or a collection group), as written with an SDK. */
export interface PlainQuery {
  /** The collection id (a group's id for a collection-group query). */
  collectionGroup: string;
  /** `"COLLECTION"` (the default) or `"COLLECTION_GROUP"`. */
  scope?: "COLLECTION" | "COLLECTION_GROUP";
  /** Its filters, as `where(field, op, value)` takes them. */
  where?: [string, string, unknown][];
  /** Its explicit orders. */
  orderBy?: [string, "asc" | "desc"][];
}

/** How a file serves a query: by a composite index of it, by single-field indexes, or not,
 * with the index it would need. */
export type Serving =
  | { served: true; by: "single-field" }
  | { served: true; by: "composite"; index: IndexEntry }
  | { served: false; needs: string; reason: string };

/** A composite index entry of `firestore.indexes.json`. */
export interface IndexEntry {
  collectionGroup: string;
  queryScope?: string;
  fields: { fieldPath: string; order?: string; arrayConfig?: string; vectorConfig?: unknown }[];
}

interface FieldOverride {
  collectionGroup: string;
  fieldPath: string;
  indexes?: { order?: string; arrayConfig?: string; queryScope?: string }[];
}

const EQUALITY = ["==", "in"];
const CONTAINS = ["array-contains", "array-contains-any"];
const INEQUALITY = ["<", "<=", ">", ">=", "!=", "not-in"];

/** The field path as the file spells it: each segment that needs it backtick-quoted. */
function normal(path: string): string {
  return segments(path)
    .map((s) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? s : `\`${s.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}\``))
    .join(".");
}

/** Whether the single-field index of `field` in `mode` and `scope` exists: by default an
 * ascending, a descending and an array index in collection scope; a field override lists
 * exactly the ones there are (`"indexes": []`, none). */
function singleField(file: { fieldOverrides?: FieldOverride[] }, group: string, field: string, mode: string, scope: string): boolean {
  const override = (file.fieldOverrides ?? []).find((o) => o.collectionGroup === group && normal(o.fieldPath) === field);
  if (!override) return scope === "COLLECTION";
  return (override.indexes ?? []).some(
    (index) => (index.order ?? index.arrayConfig) === mode && (index.queryScope ?? "COLLECTION") === scope,
  );
}

/** How the index file `file` (its JSON, parsed) serves `query`. */
export function indexServing(file: unknown, query: PlainQuery): Serving {
  if (typeof file !== "object" || file === null) throw new ShardedError("not an index file");
  const f = file as { indexes?: IndexEntry[]; fieldOverrides?: FieldOverride[] };
  const scope = query.scope ?? "COLLECTION";
  const group = query.collectionGroup;
  const equalities = new Set<string>();
  let contains: string | undefined;
  const inequalities: string[] = [];
  for (const [field, op] of query.where ?? []) {
    const path = normal(field);
    if (EQUALITY.includes(op)) equalities.add(path);
    else if (CONTAINS.includes(op)) contains = path;
    else if (INEQUALITY.includes(op)) {
      if (!inequalities.includes(path)) inequalities.push(path);
    } else throw new ShardedError(`\`${op}\` is not a filter Firestore takes`);
  }
  // Firestore orders by the explicit orders, then each inequality field not among them (by
  // path), in the direction of the last order; `__name__` last.
  const orders: [string, string][] = (query.orderBy ?? [])
    .map(([field, direction]) => [normal(field), direction === "desc" ? "DESCENDING" : "ASCENDING"] as [string, string])
    .filter(([field]) => field !== "__name__");
  const last = orders.at(-1)?.[1] ?? "ASCENDING";
  for (const field of [...inequalities].sort()) {
    if (!orders.some(([f]) => f === field)) orders.push([field, last]);
  }
  for (const field of equalities) if (orders.some(([f]) => f === field)) equalities.delete(field);
  const describe = () =>
    [
      ...[...equalities].map((e) => `${e} ASCENDING`),
      ...(contains ? [`${contains} CONTAINS`] : []),
      ...orders.map(([field, direction]) => `${field} ${direction}`),
    ].join(", ");

  // Single-field indexes: equalities (and one array field) merged, without an order; or one
  // field ordered (its ranges too), with nothing else.
  const single =
    (orders.length === 0 &&
      [...equalities].every((e) => singleField(f, group, e, "ASCENDING", scope)) &&
      (contains === undefined || singleField(f, group, contains, "CONTAINS", scope))) ||
    (orders.length === 1 &&
      equalities.size === 0 &&
      contains === undefined &&
      singleField(f, group, orders[0]![0], orders[0]![1], scope));
  if (single) return { served: true, by: "single-field" };

  for (const index of f.indexes ?? []) {
    if (index.collectionGroup !== group || (index.queryScope ?? "COLLECTION") !== scope) continue;
    const fields = index.fields.map((field) => ({
      path: normal(field.fieldPath),
      mode: field.order ?? field.arrayConfig ?? "VECTOR",
    }));
    const tail = fields.at(-1);
    if (tail && tail.path === "__name__" && tail.mode === last) fields.pop();
    const compared = equalities.size + (contains ? 1 : 0);
    if (fields.length !== compared + orders.length) continue;
    const leading = fields.slice(0, compared);
    const ordered = fields.slice(compared);
    const leadingOrdered = leading.filter((x) => x.mode === "ASCENDING" || x.mode === "DESCENDING").map((x) => x.path);
    const leadingContains = leading.filter((x) => x.mode === "CONTAINS").map((x) => x.path);
    if (leading.some((x) => x.mode === "VECTOR")) continue;
    const sameSet = leadingOrdered.length === equalities.size && leadingOrdered.every((p) => equalities.has(p));
    const sameContains = contains === undefined ? leadingContains.length === 0 : leadingContains.join() === contains;
    const sameOrders = ordered.every((x, i) => x.path === orders[i]![0] && x.mode === orders[i]![1]);
    if (sameSet && sameContains && sameOrders) return { served: true, by: "composite", index };
  }
  const exempted = orders.length === 1 && equalities.size === 0 && contains === undefined;
  return {
    served: false,
    needs: describe(),
    reason: exempted
      ? `the file disables the single-field index of \`${orders[0]![0]}\` on \`${group}\` (a sharded collection's order or shard field): production refuses the query with FAILED_PRECONDITION; query it through the sharded client`
      : `no index of the file on \`${group}\` (${scope}) is (${describe()}): production refuses the query with FAILED_PRECONDITION ("The query requires an index"); a sharded collection's indexes put the shard field first, so query it through the sharded client`,
  };
}

/** Whether the index file `file` serves `query` (see [`indexServing`]). */
export function isServedByFile(file: unknown, query: PlainQuery): boolean {
  return indexServing(file, query).served;
}
