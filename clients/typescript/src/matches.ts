// Whether a document matches a query's plan, evaluated here as the server evaluates it: what a
// live query asks of a document that left one chunk's snapshot before the chunk it moved to
// showed it (read again, it is kept while it still matches).

import { compareValues, rank } from "./order.js";
import { type Filter, type QueryPlan } from "./plan.js";

/** Whether the document whose value of a field path `value(path)` gives (`undefined` where it
 * lacks the field) matches `plan`: it holds the fields the query orders by, matches every
 * filter, and one of an OR's queries. */
export function matchesPlan(plan: QueryPlan, value: (path: string) => unknown): boolean {
  if (plan.orderBy.some((path) => value(path) === undefined)) return false;
  if (!plan.filters.every((filter) => matchesFilter(filter, value(filter.field)))) return false;
  return (
    plan.anyOf === undefined ||
    plan.anyOf.some((filters) => filters.every((filter) => matchesFilter(filter, value(filter.field))))
  );
}

function equal(a: unknown, b: unknown): boolean {
  return a !== undefined && compareValues(a, b) === 0;
}

/** Whether a field's value (`undefined`: missing) matches one filter. */
export function matchesFilter(filter: Filter, value: unknown): boolean {
  if (value === undefined) return false;
  switch (filter.op) {
    case "==":
      return equal(value, filter.value);
    case "in":
      return filter.values.some((v) => equal(value, v));
    case "array-contains":
      return Array.isArray(value) && value.some((element) => equal(element, filter.value));
    case "!=":
      return value !== null && !equal(value, filter.value);
    case "not-in":
      return value !== null && !filter.values.some((v) => equal(value, v));
    default: {
      // An inequality compares values of one type only.
      if (rank(value) !== rank(filter.value)) return false;
      if (typeof value === "number" && Number.isNaN(value)) return false;
      const order = compareValues(value, filter.value);
      switch (filter.op) {
        case "<":
          return order < 0;
        case "<=":
          return order <= 0;
        case ">":
          return order > 0;
        default:
          return order >= 0;
      }
    }
  }
}
