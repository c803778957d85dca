// A live query over the chunks of shard values: one listener per chunk, merged into one stream
// of snapshots with the SDK's `docChanges()`, whichever SDK listens.

import { ShardedError } from "./description.js";

/** One change between two snapshots of a live query, as the SDKs' `docChanges()` give it:
 * applied in order, they turn the last snapshot's documents into this one's. */
export interface LiveChange<D> {
  type: "added" | "removed" | "modified";
  doc: D;
  /** Where the document was before this change; -1 for an added one. */
  oldIndex: number;
  /** Where it is after this change; -1 for a removed one. */
  newIndex: number;
}

/** What a live query delivers: every matching document, merged, and what changed. */
export interface LiveSnapshot<D> {
  docs: D[];
  size: number;
  empty: boolean;
  docChanges(): LiveChange<D>[];
}

/** How one SDK listens to one chunk, and tells documents apart. */
export interface ChunkListener<D> {
  /** The chunk queries, one listener each. */
  chunks: readonly unknown[];
  /** Starts listening to chunk `i`; returns how to stop. */
  listen(i: number, onDocs: (docs: D[]) => void, onError: (error: Error) => void): () => void;
  compare(a: D, b: D): number;
  path(doc: D): string;
  /** Whether two snapshots of one document hold the same data. */
  same(a: D, b: D): boolean;
  limit?: number;
}

/**
 * Listens to every chunk and merges them. The first snapshot comes once every chunk has
 * answered; the chunks' answers raised in one turn of the event loop are delivered as one
 * snapshot. An error on any chunk stops every listener and reaches `error`.
 */
export function listenMerged<D>(
  source: ChunkListener<D>,
  next: (snapshot: LiveSnapshot<D>) => void,
  error?: (error: Error) => void,
): () => void {
  const latest: (D[] | undefined)[] = source.chunks.map(() => undefined);
  let shown: D[] | undefined;
  let scheduled = false;
  let stopped = false;
  const stops: (() => void)[] = [];
  const stop = () => {
    stopped = true;
    for (const s of stops) s();
  };
  const emit = () => {
    scheduled = false;
    if (stopped || latest.some((docs) => docs === undefined)) return;
    let merged = latest.flatMap((docs) => docs!).sort((a, b) => source.compare(a, b));
    if (source.limit !== undefined) merged = merged.slice(0, source.limit);
    const changes = changesBetween(shown ?? [], merged, source);
    if (shown !== undefined && changes.length === 0) return;
    shown = merged;
    next({ docs: merged, size: merged.length, empty: merged.length === 0, docChanges: () => changes });
  };
  source.chunks.forEach((_, i) => {
    stops.push(
      source.listen(
        i,
        (docs) => {
          latest[i] = docs;
          if (!scheduled) {
            scheduled = true;
            queueMicrotask(emit);
          }
        },
        (failure) => {
          if (stopped) return;
          stop();
          error?.(failure);
        },
      ),
    );
  });
  return stop;
}

/** The changes, in the SDKs' order (removals first, then additions and moves in the new
 * order), that turn `before` into `after`. */
export function changesBetween<D>(
  before: D[],
  after: D[],
  by: { path(doc: D): string; same(a: D, b: D): boolean },
): LiveChange<D>[] {
  const changes: LiveChange<D>[] = [];
  const current = before.map((doc) => by.path(doc));
  const wanted = new Set(after.map((doc) => by.path(doc)));
  for (const doc of before) {
    if (wanted.has(by.path(doc))) continue;
    const oldIndex = current.indexOf(by.path(doc));
    current.splice(oldIndex, 1);
    changes.push({ type: "removed", doc, oldIndex, newIndex: -1 });
  }
  const old = new Map(before.map((doc) => [by.path(doc), doc]));
  after.forEach((doc, newIndex) => {
    const was = old.get(by.path(doc));
    if (!was) {
      current.splice(newIndex, 0, by.path(doc));
      changes.push({ type: "added", doc, oldIndex: -1, newIndex });
      return;
    }
    const oldIndex = current.indexOf(by.path(doc));
    if (oldIndex !== newIndex || !by.same(was, doc)) {
      current.splice(oldIndex, 1);
      current.splice(newIndex, 0, by.path(doc));
      changes.push({ type: "modified", doc, oldIndex, newIndex });
    }
  });
  return changes;
}

/** A live query starts at the top. */
export function checkLive(cursor: unknown): void {
  if (cursor !== undefined) throw new ShardedError("a live query starts at the top: no cursor");
}
