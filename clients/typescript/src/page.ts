// A page cut from the merge of the chunk queries, with its cursors both ways, whichever SDK
// read it.

import { type Cursor, cursorAt } from "./plan.js";

/** What a read sent and what the server returned (Firestore bills a read per document, and
 * at least one per query). */
export interface QueryStats {
  /** Chunk queries sent, concurrently. */
  queries: number;
  /** Documents the chunk queries returned, before the merge kept the page. */
  documentsRead: number;
  /** Rounds of concurrent queries: 1, unless some chunks were asked again (at most 4). */
  rounds: number;
}

/** One page of a query, merged across the shard values. */
export interface PageOf<D> {
  docs: D[];
  /** Where the next page starts; absent when this one is the last. */
  next?: Cursor;
  /** Where the page before ends (`before(previous)`); absent on the first page. */
  previous?: Cursor;
  /** What the page cost. */
  stats: QueryStats;
}

/**
 * The page of `n` from `merged` (in reading order, one more than the page when a further
 * page exists), in the query's order. `values(doc)` are a document's values of the fields the
 * query orders by; `started` says the read started at a cursor; `backward`, that it read the
 * page before one.
 */
export function pageOf<D>(
  merged: D[],
  n: number,
  started: boolean,
  backward: boolean,
  values: (doc: D) => unknown[],
  path: (doc: D) => string,
  stats: QueryStats,
): PageOf<D> {
  const more = merged.length > n;
  const docs = merged.slice(0, n);
  if (backward) docs.reverse();
  const at = (doc: D | undefined): Cursor | undefined => doc && cursorAt(values(doc), path(doc));
  // Forward: a next page when more followed; a previous one when this page started after a
  // cursor. Backward: the other way round.
  const next = (backward ? started : more) ? at(docs.at(-1)) : undefined;
  const previous = (backward ? more : started) ? at(docs[0]) : undefined;
  return { docs, stats, ...(next && { next }), ...(previous && { previous }) };
}
