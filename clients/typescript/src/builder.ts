// What a query is before it is planned, whichever SDK sends it: its filters, an OR's other
// queries, its limit, its cursor and its direction, each step checked as it is taken.

import { type CollectionDescription, ShardedError } from "./description.js";
import { type Cursor, type Filter, planOf, type QueryPlan, type WhereOp, withFilter } from "./plan.js";

/** A query's state: immutable, each step returns a new one. */
export interface QueryState {
  readonly filters: Filter[];
  /** The other queries of an OR, each its filters. */
  readonly or: Filter[][];
  readonly limit?: number;
  readonly cursor?: Cursor;
  /** The page before `cursor` (`before`), read in the other direction. */
  readonly backward: boolean;
  /** Where it reads: `""` the top-level collection, a parent's path, or `GROUP`. */
  readonly scope: string;
}

/** The scope of a collection-group query. */
export const GROUP = "**";

export function startState(scope: string): QueryState {
  return { filters: [], or: [], backward: false, scope };
}

export function withWhere(d: CollectionDescription, s: QueryState, field: string, op: WhereOp, value: unknown): QueryState {
  const whole = field === d.orderField && (op === "<" || op === "<=" || op === ">" || op === ">=");
  if (s.or.length > 0 && !whole) {
    throw new ShardedError("filter each query before joining them with `or`; after it, only a range of the order field applies to the whole");
  }
  return { ...s, filters: withFilter(d, s.filters, field, op, value) };
}

export function withLimit(s: QueryState, n: number): QueryState {
  if (!Number.isInteger(n) || n < 1) throw new ShardedError("a limit is a positive integer");
  return { ...s, limit: n };
}

export function withCursor(s: QueryState, cursor: Cursor, backward: boolean): QueryState {
  return { ...s, cursor, backward };
}

/** `s` OR-ed with `other`, a query of the same collection and scope with equality, `in` or
 * `array-contains` filters only (a range, a limit and a cursor belong to the whole). */
export function withOr(d: CollectionDescription, s: QueryState, otherD: CollectionDescription, other: QueryState): QueryState {
  if (otherD !== d) throw new ShardedError("an OR joins queries of one collection");
  if (other.scope !== s.scope) {
    throw new ShardedError(`an OR reads one scope, and its queries read \`${s.scope || "/"}\` and \`${other.scope || "/"}\``);
  }
  if (other.or.length > 0) throw new ShardedError("join queries one at a time: `a.or(b).or(c)`");
  if (other.limit !== undefined || other.cursor) {
    throw new ShardedError("a query OR-ed with another takes no limit or cursor of its own: give them to the whole");
  }
  if (other.filters.some((f) => f.op !== "==" && f.op !== "in" && f.op !== "array-contains")) {
    throw new ShardedError("a query OR-ed with another takes no range of its own: give it to the whole");
  }
  return { ...s, or: [...s.or, other.filters] };
}

export function planFor(d: CollectionDescription, s: QueryState): QueryPlan {
  return planOf(d, s.filters, s.backward, s.or);
}

/** The plan of a query read whole (no limit, no cursor): what counts and sums take. */
export function wholePlan(d: CollectionDescription, s: QueryState, what: string): QueryPlan {
  if (s.limit !== undefined || s.cursor) {
    throw new ShardedError(`${what} of the whole query: without a limit or a cursor`);
  }
  return planFor(d, s);
}

/** The document name a cursor starts after: its path in a group, its id elsewhere. */
export function cursorName(s: QueryState, cursor: Cursor): string {
  return s.scope === GROUP ? cursor.path : cursor.path.split("/").pop()!;
}
