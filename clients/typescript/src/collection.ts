// A sharded collection for the Firebase JS SDK (modular API): writes that draw the shard, and
// the declared queries fanned out over the shard values and merged in Firestore's order.

import {
  addDoc,
  collection,
  collectionGroup,
  doc,
  documentId,
  FieldPath,
  getCountFromServer,
  getDocs,
  limit as limitTo,
  onSnapshot,
  orderBy,
  query,
  setDoc,
  snapshotEqual,
  startAfter,
  updateDoc,
  where,
  type CollectionReference,
  type DocumentData,
  type DocumentReference,
  type Firestore,
  type Query,
  type QueryConstraint,
  type QueryDocumentSnapshot,
  type SetOptions,
  type Unsubscribe,
  type UpdateData,
} from "firebase/firestore";

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

function fieldPath(path: string): FieldPath {
  return new FieldPath(...segments(path));
}

/** The stored shard field name (the description's path, unquoted). */
export function shardFieldName(d: CollectionDescription): string {
  return segments(d.shardField)[0]!;
}

/** `data` with a shard drawn for it: what `batch.set` and `transaction.set` take. */
export function withShard<T extends DocumentData>(d: CollectionDescription, data: T): T {
  const name = shardFieldName(d);
  if (name in data) {
    throw new ShardedError(
      `the document sets the shard field \`${name}\`: the shard is drawn for every write, leave it out`,
    );
  }
  return { ...data, [name]: drawShard(d) };
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

/** A sharded collection: at the top level, or under one parent document. */
export class ShardedCollection<T extends DocumentData = DocumentData> {
  readonly ref: CollectionReference<DocumentData>;

  /**
   * `parent` is the parent document's path (`"rooms/r1"`) for a collection under parents;
   * its collection ids must be the description's `parentCollections`.
   */
  constructor(
    readonly db: Firestore,
    readonly description: CollectionDescription,
    readonly parent?: string,
  ) {
    const parents = description.parentCollections ?? [];
    const parentSegments = parent ? parent.split("/") : [];
    const ids = parentSegments.filter((_, i) => i % 2 === 0);
    if (
      parentSegments.length !== parents.length * 2 ||
      ids.some((id, i) => id !== parents[i]) ||
      parentSegments.some((s) => s === "")
    ) {
      const expected = parents.map((p) => `${p}/{id}`).join("/") || "no parent";
      throw new ShardedError(
        `\`${description.collectionGroup}\` lives under ${expected}, not under \`${parent ?? ""}\``,
      );
    }
    this.ref = parent
      ? collection(db, parent, description.collectionGroup)
      : collection(db, description.collectionGroup);
  }

  /** Adds a document under a generated id, with a shard drawn. */
  add(data: T): Promise<DocumentReference<DocumentData>> {
    return addDoc(this.ref, withShard(this.description, data));
  }

  /**
   * Writes the document `id` whole, with a shard drawn; with `{merge: true}`, only the given
   * fields, and the shard only for a document that has none (a merge keeps the stored one).
   */
  set(id: string, data: T, options?: SetOptions): Promise<void> {
    const ref = doc(this.ref, id);
    return options ? setDoc(ref, data, options) : setDoc(ref, withShard(this.description, data));
  }

  /** Updates fields of the document `id`; its shard stays. */
  update(id: string, data: UpdateData<T>): Promise<void> {
    const name = shardFieldName(this.description);
    if (Object.keys(data).some((key) => key === name || key.startsWith(`${name}.`))) {
      throw new ShardedError(`an update keeps the shard: leave \`${name}\` out`);
    }
    return updateDoc(doc(this.ref, id), data as UpdateData<DocumentData>);
  }

  /** A query of this collection, ordered by the order field. */
  query(): ShardedQuery {
    return new ShardedQuery(this.description, this.ref);
  }
}

/** Every document of a collection group (a type that declares `collection_group`). */
export function shardedCollectionGroup(db: Firestore, description: CollectionDescription): ShardedQuery {
  if (!description.groupQueries) {
    throw new ShardedError(
      `\`${description.collectionGroup}\` declares no group queries (\`collection_group\`): its indexes would not serve them`,
    );
  }
  return new ShardedQuery(description, collectionGroup(db, description.collectionGroup), true);
}

type Filter =
  | { field: string; op: "=="; value: unknown }
  | { field: string; op: "in"; values: unknown[] }
  | { field: string; op: "array-contains"; value: unknown };

/** Where the next page starts: after this document. */
export interface Cursor {
  /** The order field's value of the last document. */
  order: unknown;
  /** Its path (`rooms/r1/messages/m1`). */
  path: string;
}

/** One page of a query, merged across the shard values. */
export interface Page {
  docs: QueryDocumentSnapshot<DocumentData>[];
  /** Where the next page starts; absent when this one is the last. */
  next?: Cursor;
  /** What the page cost. */
  stats: QueryStats;
}

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

/** One change between two snapshots of a live query, as the SDK's `docChanges()` gives it:
 * applied in order, they turn the last snapshot's documents into this one's. */
export interface ShardedChange {
  type: "added" | "removed" | "modified";
  doc: QueryDocumentSnapshot<DocumentData>;
  /** Where the document was before this change; -1 for an added one. */
  oldIndex: number;
  /** Where it is after this change; -1 for a removed one. */
  newIndex: number;
}

/** What a live query delivers: every matching document, merged, and what changed. */
export interface ShardedSnapshot {
  docs: QueryDocumentSnapshot<DocumentData>[];
  size: number;
  empty: boolean;
  docChanges(): ShardedChange[];
}

/** A query over a sharded collection: immutable, each method returns a new one. */
export class ShardedQuery {
  constructor(
    readonly description: CollectionDescription,
    private readonly source: Query<DocumentData>,
    private readonly group = false,
    private readonly filters: Filter[] = [],
    private readonly count_?: number,
    private readonly cursor?: Cursor,
  ) {}

  /** An equality (`==`), `in` or `array-contains` filter on a declared field. */
  where(field: string, op: "==" | "in" | "array-contains", value: unknown): ShardedQuery {
    const d = this.description;
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
    const filters = [...this.filters, filter];
    if (filters.filter((f) => f.op === "in").length > 1) {
      throw new ShardedError("one `in` filter per query");
    }
    this.checkServed(filters);
    return new ShardedQuery(d, this.source, this.group, filters, this.count_, this.cursor);
  }

  /** At most `n` documents (and pages of `n`). */
  limit(n: number): ShardedQuery {
    if (!Number.isInteger(n) || n < 1) throw new ShardedError("a limit is a positive integer");
    return new ShardedQuery(this.description, this.source, this.group, this.filters, n, this.cursor);
  }

  /** The documents after `cursor` (a page's `next`). */
  after(cursor: Cursor): ShardedQuery {
    return new ShardedQuery(this.description, this.source, this.group, this.filters, this.count_, cursor);
  }

  /** The chunks of shard values one round queries: each at most 30 disjunctions with the `in`. */
  chunks(): string[][] {
    const inValues = this.filters.find((f) => f.op === "in");
    const perChunk = Math.max(1, Math.floor(MAX_DISJUNCTIONS / (inValues?.op === "in" ? inValues.values.length : 1)));
    return splitEvenly(readValues(this.description), perChunk);
  }

  /** The first page (or the one after the cursor): merged in Firestore's order. */
  async get(): Promise<Page> {
    const n = this.count_;
    const chunks = this.chunks();
    if (n === undefined) {
      const snapshots = await Promise.all(
        chunks.map((shards) => getDocs(query(this.source, ...this.constraints(shards, undefined)))),
      );
      const docs = snapshots.flatMap((snapshot) => snapshot.docs).sort((a, b) => this.compare(a, b));
      return { docs, stats: { queries: chunks.length, documentsRead: docs.length, rounds: 1 } };
    }
    // One more than the page, so that `next` is there only when a document follows. Each
    // chunk is asked for about its share of it, and asked again only while it may hold
    // more of the first ones: the Rust library's rounds, at most four.
    const wanted = n + 1;
    const sizes = chunks.map((shards) => shards.length);
    const fetched: QueryDocumentSnapshot<DocumentData>[][] = chunks.map(() => []);
    const ranOut = chunks.map(() => false);
    const stats = { queries: 0, documentsRead: 0, rounds: 0 };
    let asks: [number, number][] = firstRound(wanted, sizes).map((ask, chunk) => [chunk, ask]);
    while (asks.length > 0) {
      stats.rounds += 1;
      const answers = await Promise.all(
        asks.map(([chunk, ask]) => {
          const after = fetched[chunk]!.at(-1);
          return getDocs(query(this.source, ...this.constraints(chunks[chunk]!, ask, true, after)));
        }),
      );
      asks.forEach(([chunk, ask], i) => {
        const docs = answers[i]!.docs;
        stats.queries += 1;
        stats.documentsRead += docs.length;
        fetched[chunk]!.push(...docs);
        ranOut[chunk] = docs.length < ask;
      });
      asks = nextRound(wanted, stats.rounds, fetched, ranOut, sizes, (a, b) => this.compare(a, b));
    }
    const merged = fetched.flat().sort((a, b) => this.compare(a, b));
    if (merged.length <= n) return { docs: merged, stats };
    const docs = merged.slice(0, n);
    const last = docs[docs.length - 1]!;
    const next = { order: last.get(fieldPath(this.description.orderField)), path: last.ref.path };
    return { docs, next, stats };
  }

  /**
   * Listens to the query: one listener per chunk, merged into one stream of snapshots. The
   * first comes once every chunk has answered; the SDK raises the chunks' events of one
   * server change together, and they are delivered as one snapshot. An error on any chunk
   * stops every listener and reaches `error`: never a partial stream.
   */
  onSnapshot(next: (snapshot: ShardedSnapshot) => void, error?: (error: Error) => void): Unsubscribe {
    if (this.cursor) throw new ShardedError("a live query starts at the top: no cursor");
    const chunks = this.chunks();
    const latest: (QueryDocumentSnapshot<DocumentData>[] | undefined)[] = chunks.map(() => undefined);
    let shown: QueryDocumentSnapshot<DocumentData>[] | undefined;
    let scheduled = false;
    let stopped = false;
    const stop = () => {
      stopped = true;
      for (const unsubscribe of unsubscribes) unsubscribe();
    };
    const emit = () => {
      scheduled = false;
      if (stopped || latest.some((docs) => docs === undefined)) return;
      let merged = latest.flatMap((docs) => docs!).sort((a, b) => this.compare(a, b));
      if (this.count_ !== undefined) merged = merged.slice(0, this.count_);
      const changes = changesBetween(shown ?? [], merged);
      if (shown !== undefined && changes.length === 0) return;
      shown = merged;
      next({ docs: merged, size: merged.length, empty: merged.length === 0, docChanges: () => changes });
    };
    const unsubscribes: Unsubscribe[] = chunks.map((shards, i) =>
      onSnapshot(
        query(this.source, ...this.constraints(shards, this.count_)),
        (snapshot) => {
          latest[i] = snapshot.docs;
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
    return stop;
  }

  /** How many documents match: one count per chunk, summed. */
  async count(): Promise<number> {
    if (this.count_ !== undefined || this.cursor) {
      throw new ShardedError("count the whole query: without a limit or a cursor");
    }
    const counts = await Promise.all(
      this.chunks().map((shards) =>
        getCountFromServer(query(this.source, ...this.constraints(shards, undefined, false))),
      ),
    );
    return counts.reduce((sum, snapshot) => sum + snapshot.data().count, 0);
  }

  private constraints(
    shards: string[],
    n: number | undefined,
    ordered = true,
    after?: QueryDocumentSnapshot<DocumentData>,
  ): QueryConstraint[] {
    const d = this.description;
    const direction = d.direction === "DESCENDING" ? "desc" : "asc";
    const out: QueryConstraint[] = [where(fieldPath(d.shardField), "in", shards)];
    for (const filter of this.filters) {
      out.push(
        filter.op === "in"
          ? where(fieldPath(filter.field), "in", filter.values)
          : where(fieldPath(filter.field), filter.op, filter.value),
      );
    }
    if (ordered) {
      out.push(orderBy(fieldPath(d.orderField), direction), orderBy(documentId(), direction));
      if (after) {
        out.push(startAfter(after));
      } else if (this.cursor) {
        const name = this.group ? this.cursor.path : this.cursor.path.split("/").pop()!;
        out.push(startAfter(this.cursor.order, name));
      }
      if (n !== undefined) out.push(limitTo(n));
    }
    return out;
  }

  private compare(a: QueryDocumentSnapshot, b: QueryDocumentSnapshot): number {
    const path = fieldPath(this.description.orderField);
    const order = compareValues(a.get(path), b.get(path)) || compareNames(a.ref.path, b.ref.path);
    return this.description.direction === "DESCENDING" ? -order : order;
  }

  /** The same refusal as the Rust library's: a query the generated indexes do not serve. */
  private checkServed(filters: Filter[]): void {
    const d = this.description;
    const equalities = filters.filter((f) => f.op !== "array-contains").map((f) => f.field);
    const arrays = filters.filter((f) => f.op === "array-contains");
    if (arrays.length > 1 || (arrays.length === 1 && equalities.length > 0)) {
      throw new ShardedError("an array-contains query takes no other filter: its index is (shard, array, order)");
    }
    if (equalities.length <= 1) return;
    const sets = d.fieldSets ?? [];
    const served = sets.some(
      (set) => set.length === equalities.length && equalities.every((f) => set.includes(f)),
    );
    if (!served) {
      throw new ShardedError(
        `no index serves equality on ${equalities.join(" and ")}: declare #[sharded(index(${equalities.join(", ")}))] on the struct`,
      );
    }
  }
}

/** The changes, in the SDK's order (removals first, then additions and moves in the new
 * order), that turn `before` into `after`. */
export function changesBetween(
  before: QueryDocumentSnapshot<DocumentData>[],
  after: QueryDocumentSnapshot<DocumentData>[],
): ShardedChange[] {
  const changes: ShardedChange[] = [];
  const current = before.map((doc) => doc.ref.path);
  const wanted = new Set(after.map((doc) => doc.ref.path));
  for (const doc of before) {
    if (wanted.has(doc.ref.path)) continue;
    const oldIndex = current.indexOf(doc.ref.path);
    current.splice(oldIndex, 1);
    changes.push({ type: "removed", doc, oldIndex, newIndex: -1 });
  }
  const old = new Map(before.map((doc) => [doc.ref.path, doc]));
  after.forEach((doc, newIndex) => {
    const was = old.get(doc.ref.path);
    if (!was) {
      current.splice(newIndex, 0, doc.ref.path);
      changes.push({ type: "added", doc, oldIndex: -1, newIndex });
      return;
    }
    const oldIndex = current.indexOf(doc.ref.path);
    if (oldIndex !== newIndex || !snapshotEqual(was, doc)) {
      current.splice(oldIndex, 1);
      current.splice(newIndex, 0, doc.ref.path);
      changes.push({ type: "modified", doc, oldIndex, newIndex });
    }
  });
  return changes;
}

/** What each chunk is first asked for: about its share of `wanted` (chunk sizes weigh), with
 * a margin, at least 1 and at most `wanted`. */
export function firstRound(wanted: number, sizes: number[]): number[] {
  const total = Math.max(1, sizes.reduce((a, b) => a + b, 0));
  return sizes.map((size) => Math.min(wanted, Math.max(1, Math.ceil((1.3 * wanted * size) / total))));
}

/** Which chunks to ask again, and for how many: those that returned all they were asked,
 * whose last document still sorts before the `wanted`-th of the merge; from the fourth round
 * on, for all they may hold. */
export function nextRound<D>(
  wanted: number,
  roundsDone: number,
  fetched: D[][],
  ranOut: boolean[],
  sizes: number[],
  compare: (a: D, b: D) => number,
): [number, number][] {
  const total = Math.max(1, sizes.reduce((a, b) => a + b, 0));
  const merged = fetched.flat().sort(compare);
  const threshold = merged[wanted - 1];
  const more: [number, number][] = [];
  fetched.forEach((documents, chunk) => {
    const last = documents.at(-1);
    if (last === undefined) return;
    const settled = threshold !== undefined && compare(last, threshold) >= 0;
    if (ranOut[chunk] || documents.length >= wanted || settled) return;
    const before = merged.filter((d) => compare(d, last) <= 0).length;
    const bound = wanted - before;
    const share = Math.ceil((1.3 * bound * sizes[chunk]!) / total);
    more.push([chunk, roundsDone >= 3 ? bound : Math.min(bound, Math.max(1, share))]);
  });
  return more;
}
