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

/** Where a snapshot's documents come from, as the Firebase SDK's `SnapshotMetadata` says it. */
export interface LiveMetadata {
  /** Some chunk's documents came from the local cache (offline, or not yet answered by the
   * server since a listener started): the snapshot may not be the server's latest. */
  fromCache: boolean;
  /** Some chunk holds a local write the server has not acknowledged yet ("saving"). */
  hasPendingWrites: boolean;
}

/** What a live query delivers: every matching document, merged, what changed, and where it
 * came from. */
export interface LiveSnapshot<D> {
  docs: D[];
  size: number;
  empty: boolean;
  docChanges(): LiveChange<D>[];
  /** Merged across the chunks' listeners: true where any chunk's is. The server SDK has no
   * cache or local writes: both false. */
  metadata: LiveMetadata;
}

/** No cache, no local writes: what a listener without metadata (the server SDK) reports. */
const SERVER_METADATA: LiveMetadata = { fromCache: false, hasPendingWrites: false };

/** How one SDK listens to one chunk, and tells documents apart. */
export interface ChunkListener<D> {
  /** The chunk queries, one listener each. */
  chunks: readonly unknown[];
  /** Starts listening to chunk `i`; returns how to stop. `metadata` is the SDK's, where it
   * has one (the JS SDK listens with `includeMetadataChanges`, so that a change of it alone is
   * told too). */
  listen(i: number, onDocs: (docs: D[], metadata?: LiveMetadata) => void, onError: (error: Error) => void): () => void;
  compare(a: D, b: D): number;
  path(doc: D): string;
  /** Whether two snapshots of one document hold the same data. */
  same(a: D, b: D): boolean;
  limit?: number;
  /** Calls `callback` each time every listener has seen the same moment of the database (the
   * JS SDK's `onSnapshotsInSync`, whose listeners share one stream); returns how to stop.
   * With it, snapshots are emitted at those points only. */
  inSync?(callback: () => void): () => void;
  /** A document's update time, as a string that sorts as the times do: of two snapshots of
   * one document in two chunks' answers, the later is shown. */
  version?(doc: D): string;
  /** The document as it is now, where it still matches the query; `undefined` where it does
   * not, or is gone (one read). Asked of a document that left the chunks' answers while no
   * chunk shows it: where the chunks' listeners are streams of their own, the chunk it moved
   * to may not have told yet. */
  recheck?(doc: D): Promise<D | undefined>;
}

/** How long a document kept while it moves waits for the chunk it moved to before it is read
 * again. */
const RECHECK_MS = 1000;

/**
 * Listens to every chunk and merges them. The first snapshot comes once every chunk has
 * answered. Where the SDK says when every listener is in sync (one stream), a snapshot is
 * emitted at those points only, so a document moving between chunks is in it once. Otherwise
 * (a stream per chunk) the chunks' answers raised in one turn of the event loop are emitted
 * together, a document two chunks hold is shown in its latest version, and one that left
 * every chunk is read again and kept while it still matches, until the chunk it moved to
 * shows it. An error on any chunk stops every listener and reaches `error`.
 */
export function listenMerged<D>(
  source: ChunkListener<D>,
  next: (snapshot: LiveSnapshot<D>) => void,
  error?: (error: Error) => void,
): () => void {
  const latest: (D[] | undefined)[] = source.chunks.map(() => undefined);
  const latestMetadata: LiveMetadata[] = source.chunks.map(() => SERVER_METADATA);
  let shown: D[] | undefined;
  let shownMetadata: LiveMetadata | undefined;
  let scheduled = false;
  let stopped = false;
  /** Documents that left every chunk and still match, by path, while read again. */
  const moving = new Map<string, D>();
  const rechecking = new Set<string>();
  /** Documents read again and found gone (or no longer matching): not read again while the
   * last snapshot shown still holds them. */
  const departed = new Set<string>();
  const stops: (() => void)[] = [];
  const stop = () => {
    stopped = true;
    for (const s of stops) s();
  };
  const fail = (failure: Error) => {
    if (stopped) return;
    stop();
    error?.(failure);
  };
  /** Every chunk's documents, each once (its latest version where two chunks hold it). */
  const union = (): Map<string, D> => {
    const byPath = new Map<string, D>();
    for (const docs of latest) {
      for (const doc of docs!) {
        const path = source.path(doc);
        const known = byPath.get(path);
        if (!known || (source.version && source.version(doc) > source.version(known))) byPath.set(path, doc);
      }
    }
    return byPath;
  };
  const recheck = (doc: D) => {
    const path = source.path(doc);
    if (!source.recheck || rechecking.has(path)) return;
    rechecking.add(path);
    source.recheck(doc).then(
      (now) => {
        rechecking.delete(path);
        if (stopped || !moving.has(path)) return;
        if (now === undefined) {
          moving.delete(path);
          departed.add(path);
        } else {
          moving.set(path, now);
          setTimeout(() => moving.has(path) && recheck(now), RECHECK_MS);
        }
        emit();
      },
      (failure: Error) => fail(failure),
    );
  };
  const emit = () => {
    scheduled = false;
    if (stopped || latest.some((docs) => docs === undefined)) return;
    const present = union();
    for (const path of [...moving.keys()]) if (present.has(path)) moving.delete(path);
    for (const path of [...departed]) if (present.has(path)) departed.delete(path);
    // A document shown before and in no chunk now: gone, or moving to a chunk that has not
    // told yet. Read again, it is kept while it matches.
    if (source.recheck) {
      for (const doc of shown ?? []) {
        const path = source.path(doc);
        if (!present.has(path) && !moving.has(path) && !departed.has(path)) {
          moving.set(path, doc);
          recheck(doc);
        }
      }
    }
    let merged = [...present.values(), ...moving.values()].sort((a, b) => source.compare(a, b));
    if (source.limit !== undefined) {
      // A kept document past the limit is not waited for: the chunks hold enough before it.
      for (const doc of merged.slice(source.limit)) moving.delete(source.path(doc));
      merged = merged.slice(0, source.limit);
    }
    const changes = changesBetween(shown ?? [], merged, source);
    const metadata: LiveMetadata = {
      fromCache: latestMetadata.some((m) => m.fromCache),
      hasPendingWrites: latestMetadata.some((m) => m.hasPendingWrites),
    };
    const sameMetadata =
      shownMetadata !== undefined &&
      shownMetadata.fromCache === metadata.fromCache &&
      shownMetadata.hasPendingWrites === metadata.hasPendingWrites;
    if (shown !== undefined && changes.length === 0 && sameMetadata) return;
    shown = merged;
    shownMetadata = metadata;
    const shownPaths = new Set(merged.map((doc) => source.path(doc)));
    for (const path of [...departed]) if (!shownPaths.has(path)) departed.delete(path);
    next({ docs: merged, size: merged.length, empty: merged.length === 0, docChanges: () => changes, metadata });
  };
  if (source.inSync) stops.push(source.inSync(emit));
  source.chunks.forEach((_, i) => {
    stops.push(
      source.listen(
        i,
        (docs, metadata) => {
          latest[i] = docs;
          latestMetadata[i] = metadata
            ? { fromCache: metadata.fromCache, hasPendingWrites: metadata.hasPendingWrites }
            : SERVER_METADATA;
          if (source.inSync || scheduled) return;
          scheduled = true;
          setTimeout(emit, 0);
        },
        fail,
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
