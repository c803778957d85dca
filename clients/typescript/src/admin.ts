// A sharded collection for the Node server SDK (`@google-cloud/firestore`, which
// `firebase-admin/firestore` re-exports): the same writes, queries, rounds and merge as the
// JS SDK's `ShardedCollection`. Server SDKs bypass security rules, so the shard these writes
// draw is all that keeps the contract: `verify()` in Rust counts what others left without one.

import {
  FieldPath,
  type CollectionReference,
  type DocumentData,
  type DocumentReference,
  type Firestore,
  type Query,
  type QueryDocumentSnapshot,
  type SetOptions,
  type UpdateData,
} from "@google-cloud/firestore";

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
import { checkLive, listenMerged, type LiveSnapshot } from "./live.js";
import { readRounds } from "./rounds.js";

function fieldPath(path: string): FieldPath {
  return new FieldPath(...segments(path));
}

/** A page read through the server SDK. */
export interface AdminPage {
  docs: QueryDocumentSnapshot<DocumentData>[];
  next?: Cursor;
  previous?: Cursor;
  stats: { queries: number; documentsRead: number; rounds: number };
}

/** A sharded collection through the server SDK: at the top level, or under one parent. */
export class ShardedAdminCollection<T extends DocumentData = DocumentData> {
  readonly ref: CollectionReference<DocumentData>;

  constructor(
    readonly db: Firestore,
    readonly description: CollectionDescription,
    readonly parent?: string,
  ) {
    checkParent(description, parent);
    this.ref = parent
      ? db.doc(parent).collection(description.collectionGroup)
      : db.collection(description.collectionGroup);
  }

  /** Adds a document under a generated id, with a shard drawn. */
  add(data: T): Promise<DocumentReference<DocumentData>> {
    return this.ref.add(withShard(this.description, data));
  }

  /** Writes the document `id` whole with a shard drawn; with `{merge: true}`, only the given
   * fields (the stored shard stays). */
  async set(id: string, data: T, options?: SetOptions): Promise<void> {
    const ref = this.ref.doc(id);
    await (options ? ref.set(data, options) : ref.set(withShard(this.description, data)));
  }

  /** Updates fields of the document `id`; its shard stays. */
  async update(id: string, data: UpdateData<T>): Promise<void> {
    checkUpdate(this.description, data);
    await this.ref.doc(id).update(data as UpdateData<DocumentData>);
  }

  /** A query of this collection, ordered by the order field. */
  query(): AdminShardedQuery {
    return new AdminShardedQuery(this.description, this.ref, false);
  }
}

/** Every document of a collection group, through the server SDK. */
export function adminCollectionGroup(db: Firestore, description: CollectionDescription): AdminShardedQuery {
  if (!description.groupQueries) {
    throw new ShardedError(
      `\`${description.collectionGroup}\` declares no group queries (\`collection_group\`): its indexes would not serve them`,
    );
  }
  return new AdminShardedQuery(description, db.collectionGroup(description.collectionGroup), true);
}

/** A query through the server SDK: immutable, each method returns a new one. */
export class AdminShardedQuery {
  constructor(
    readonly description: CollectionDescription,
    private readonly source: Query<DocumentData>,
    private readonly group: boolean,
    private readonly filters: Filter[] = [],
    private readonly count_?: number,
    private readonly cursor?: Cursor,
    /** The page before `cursor` (`before`), read in the other direction. */
    private readonly backward = false,
  ) {}

  where(field: string, op: WhereOp, value: unknown): AdminShardedQuery {
    const filters = withFilter(this.description, this.filters, field, op, value);
    return new AdminShardedQuery(this.description, this.source, this.group, filters, this.count_, this.cursor, this.backward);
  }

  limit(n: number): AdminShardedQuery {
    if (!Number.isInteger(n) || n < 1) throw new ShardedError("a limit is a positive integer");
    return new AdminShardedQuery(this.description, this.source, this.group, this.filters, n, this.cursor, this.backward);
  }

  after(cursor: Cursor): AdminShardedQuery {
    return new AdminShardedQuery(this.description, this.source, this.group, this.filters, this.count_, cursor);
  }

  /** The page before `cursor` (a page's `previous`), in the query's order. */
  before(cursor: Cursor): AdminShardedQuery {
    return new AdminShardedQuery(this.description, this.source, this.group, this.filters, this.count_, cursor, true);
  }

  async get(): Promise<AdminPage> {
    const n = this.count_;
    const chunks = chunksOf(this.description, this.filters);
    if (n === undefined) {
      const answers = await Promise.all(chunks.map((shards) => this.chunk(shards, undefined).get()));
      const docs = answers.flatMap((answer) => answer.docs).sort((a, b) => this.compare(a, b));
      if (this.backward) docs.reverse();
      return { docs, stats: { queries: chunks.length, documentsRead: docs.length, rounds: 1 } };
    }
    const { fetched, stats } = await readRounds<QueryDocumentSnapshot<DocumentData>>(
      chunks.map((shards) => shards.length),
      n + 1,
      (chunk, ask, after) =>
        this.chunk(chunks[chunk]!, ask, after)
          .get()
          .then((answer) => answer.docs),
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
   * Listens to the query: one listener per chunk, merged into one stream of snapshots with
   * `docChanges()`. The server SDK listens to each chunk on its own stream, so a change that
   * touches documents of several chunks at once (a batch) may show as one snapshot per chunk;
   * the JS SDK's listeners share one stream and show it as one. An error on any chunk stops
   * every listener and reaches `error`.
   */
  onSnapshot(
    next: (snapshot: LiveSnapshot<QueryDocumentSnapshot<DocumentData>>) => void,
    error?: (error: Error) => void,
  ): () => void {
    checkLive(this.cursor);
    const chunks = chunksOf(this.description, this.filters);
    return listenMerged(
      {
        chunks,
        listen: (i, onDocs, onError) =>
          this.chunk(chunks[i]!, this.count_).onSnapshot((snapshot) => onDocs(snapshot.docs), onError),
        compare: (a, b) => this.compare(a, b),
        path: (doc) => doc.ref.path,
        same: (a, b) => a.isEqual(b),
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
      chunksOf(this.description, this.filters).map((shards) => this.filtered(shards).count().get()),
    );
    return counts.reduce((sum, answer) => sum + answer.data().count, 0);
  }

  private filtered(shards: string[]): Query<DocumentData> {
    let q = this.source.where(fieldPath(this.description.shardField), "in", shards);
    for (const filter of this.filters) {
      q =
        filter.op === "in"
          ? q.where(fieldPath(filter.field), "in", filter.values)
          : q.where(fieldPath(filter.field), filter.op, filter.value);
    }
    return q;
  }

  private chunk(shards: string[], n: number | undefined, after?: QueryDocumentSnapshot<DocumentData>): Query<DocumentData> {
    const direction = (this.description.direction === "DESCENDING") !== this.backward ? "desc" : "asc";
    let q = this.filtered(shards)
      .orderBy(fieldPath(this.description.orderField), direction)
      .orderBy(FieldPath.documentId(), direction);
    if (after) {
      q = q.startAfter(after);
    } else if (this.cursor) {
      const name = this.group ? this.cursor.path : this.cursor.path.split("/").pop()!;
      q = q.startAfter(this.cursor.order, name);
    }
    return n === undefined ? q : q.limit(n);
  }

  private compare(a: QueryDocumentSnapshot, b: QueryDocumentSnapshot): number {
    const path = fieldPath(this.description.orderField);
    const order = compareInOrder(this.description, a.get(path), a.ref.path, b.get(path), b.ref.path);
    return this.backward ? -order : order;
  }
}
