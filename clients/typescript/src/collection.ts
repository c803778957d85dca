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

import { type CollectionDescription, ShardedError } from "./description.js";
import {
  checkParent,
  checkUpdate,
  chunksOf,
  compareInOrder,
  type Cursor,
  type Filter,
  segments,
  type WhereOp,
  withFilter,
  withShard,
} from "./plan.js";
import { checkLive, type LiveChange, listenMerged, type LiveSnapshot } from "./live.js";
import { readRounds } from "./rounds.js";

function fieldPath(path: string): FieldPath {
  return new FieldPath(...segments(path));
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
    checkParent(description, parent);
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
    checkUpdate(this.description, data);
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

/** One page of a query, merged across the shard values. */
export interface Page {
  docs: QueryDocumentSnapshot<DocumentData>[];
  /** Where the next page starts; absent when this one is the last. */
  next?: Cursor;
  /** Where the page before ends (`before(previous)`); absent on the first page. */
  previous?: Cursor;
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

/** One change between two snapshots of a live query, as the SDK's `docChanges()` gives it. */
export type ShardedChange = LiveChange<QueryDocumentSnapshot<DocumentData>>;

/** What a live query delivers: every matching document, merged, and what changed. */
export type ShardedSnapshot = LiveSnapshot<QueryDocumentSnapshot<DocumentData>>;

/** A query over a sharded collection: immutable, each method returns a new one. */
export class ShardedQuery {
  constructor(
    readonly description: CollectionDescription,
    private readonly source: Query<DocumentData>,
    private readonly group = false,
    private readonly filters: Filter[] = [],
    private readonly count_?: number,
    private readonly cursor?: Cursor,
    /** The page before `cursor` (`before`), read in the other direction. */
    private readonly backward = false,
  ) {}

  /** An equality (`==`), `in` or `array-contains` filter on a declared field. */
  where(field: string, op: WhereOp, value: unknown): ShardedQuery {
    const filters = withFilter(this.description, this.filters, field, op, value);
    return new ShardedQuery(this.description, this.source, this.group, filters, this.count_, this.cursor, this.backward);
  }

  /** At most `n` documents (and pages of `n`). */
  limit(n: number): ShardedQuery {
    if (!Number.isInteger(n) || n < 1) throw new ShardedError("a limit is a positive integer");
    return new ShardedQuery(this.description, this.source, this.group, this.filters, n, this.cursor, this.backward);
  }

  /** The documents after `cursor` (a page's `next`). */
  after(cursor: Cursor): ShardedQuery {
    return new ShardedQuery(this.description, this.source, this.group, this.filters, this.count_, cursor);
  }

  /** The page before `cursor` (a page's `previous`), in the query's order. */
  before(cursor: Cursor): ShardedQuery {
    return new ShardedQuery(this.description, this.source, this.group, this.filters, this.count_, cursor, true);
  }

  /** The chunks of shard values one round queries: each at most 30 disjunctions with the `in`. */
  chunks(): string[][] {
    return chunksOf(this.description, this.filters);
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
      if (this.backward) docs.reverse();
      return { docs, stats: { queries: chunks.length, documentsRead: docs.length, rounds: 1 } };
    }
    const { fetched, stats } = await readRounds<QueryDocumentSnapshot<DocumentData>>(
      chunks.map((shards) => shards.length),
      n + 1,
      (chunk, ask, after) => getDocs(query(this.source, ...this.constraints(chunks[chunk]!, ask, true, after))).then((answer) => answer.docs),
      (a, b) => this.compare(a, b),
    );
    const merged = fetched.flat().sort((a, b) => this.compare(a, b));
    return this.assemble(merged, n, stats);
  }

  /** The page of `n` from the merge (in reading order, one more than the page when a
   * further page exists), in the query's order, with its cursors both ways. */
  private assemble<P>(merged: (QueryDocumentSnapshot<DocumentData>)[], n: number, stats: P) {
    const more = merged.length > n;
    const docs = merged.slice(0, n);
    if (this.backward) docs.reverse();
    const cursorAt = (doc: QueryDocumentSnapshot<DocumentData> | undefined): Cursor | undefined =>
      doc && { order: doc.get(fieldPath(this.description.orderField)), path: doc.ref.path };
    // Forward: a next page when more followed; a previous one when this page started after a
    // cursor. Backward: the other way round.
    const next = (this.backward ? this.cursor !== undefined : more) ? cursorAt(docs.at(-1)) : undefined;
    const previous = (this.backward ? more : this.cursor !== undefined) ? cursorAt(docs[0]) : undefined;
    return { docs, stats, ...(next && { next }), ...(previous && { previous }) };
  }

  /**
   * Listens to the query: one listener per chunk, merged into one stream of snapshots. The
   * first comes once every chunk has answered; the SDK raises the chunks' events of one
   * server change together, and they are delivered as one snapshot. An error on any chunk
   * stops every listener and reaches `error`: never a partial stream.
   */
  onSnapshot(next: (snapshot: ShardedSnapshot) => void, error?: (error: Error) => void): Unsubscribe {
    checkLive(this.cursor);
    const chunks = this.chunks();
    return listenMerged(
      {
        chunks,
        listen: (i, onDocs, onError) =>
          onSnapshot(query(this.source, ...this.constraints(chunks[i]!, this.count_)), (snapshot) => onDocs(snapshot.docs), onError),
        compare: (a, b) => this.compare(a, b),
        path: (doc) => doc.ref.path,
        same: (a, b) => snapshotEqual(a, b),
        ...(this.count_ !== undefined && { limit: this.count_ }),
      },
      next,
      error,
    );
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
    const direction = (d.direction === "DESCENDING") !== this.backward ? "desc" : "asc";
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
    const order = compareInOrder(this.description, a.get(path), a.ref.path, b.get(path), b.ref.path);
    return this.backward ? -order : order;
  }
}
