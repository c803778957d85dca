// A sharded collection for the Node server SDK (`@google-cloud/firestore`, which
// `firebase-admin/firestore` re-exports): the same writes, queries, rounds and merge as the
// JS SDK's `ShardedCollection`. Server SDKs bypass security rules, so the shard these writes
// draw is all that keeps the contract: `verify()` in Rust counts what others left without one.

import {
  AggregateField,
  FieldPath,
  Filter,
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
import { type AggregateTotal, checkSummed, settle } from "./aggregate.js";
import {
  cursorName,
  GROUP,
  planFor,
  type QueryState,
  startState,
  wholePlan,
  withCursor,
  withLimit,
  withOr,
  withWhere,
} from "./builder.js";
import {
  checkParent,
  checkUpdate,
  mergeWrite,
  type Chunk,
  compareInPlan,
  type Cursor,
  cursorValues,
  type Filter as ShardedFilter,
  type QueryPlan,
  segments,
  type WhereOp,
  operandOf,
  weightOf,
  withShard,
} from "./plan.js";
import { type PageOf, pageOf } from "./page.js";
import { checkLive, listenMerged, type LiveSnapshot } from "./live.js";
import { readRounds } from "./rounds.js";

function fieldPath(path: string): FieldPath {
  return new FieldPath(...segments(path));
}

/** A page read through the server SDK. */
export type AdminPage = PageOf<QueryDocumentSnapshot<DocumentData>>;

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

  /** Writes the document `id` whole with a shard drawn; a merge as `ShardedCollection.set`
   * does it: in a transaction, keeping a stored shard that queries read, drawing one where
   * there is none. */
  async set(id: string, data: T, options?: SetOptions): Promise<void> {
    const ref = this.ref.doc(id);
    if (!options) {
      await ref.set(withShard(this.description, data));
      return;
    }
    const shard = fieldPath(this.description.shardField);
    await this.db.runTransaction(async (transaction) => {
      const stored = await transaction.get(ref);
      const [body, merge] = mergeWrite(this.description, data, options, stored.get(shard), shard);
      transaction.set(ref, body, merge as SetOptions);
    });
  }

  /** Updates fields of the document `id`; its shard stays. */
  async update(id: string, data: UpdateData<T>): Promise<void> {
    checkUpdate(this.description, data);
    await this.ref.doc(id).update(data as UpdateData<DocumentData>);
  }

  /** A query of this collection, ordered by the order field. */
  query(): AdminShardedQuery {
    return new AdminShardedQuery(this.description, this.ref, startState(this.parent ?? ""));
  }
}

/** Every document of a collection group, through the server SDK. */
export function adminCollectionGroup(db: Firestore, description: CollectionDescription): AdminShardedQuery {
  if (!description.groupQueries) {
    throw new ShardedError(
      `\`${description.collectionGroup}\` declares no group queries (\`collection_group\`): its indexes would not serve them`,
    );
  }
  return new AdminShardedQuery(description, db.collectionGroup(description.collectionGroup), startState(GROUP));
}

/** A query through the server SDK: immutable, each method returns a new one. */
export class AdminShardedQuery {
  constructor(
    readonly description: CollectionDescription,
    private readonly source: Query<DocumentData>,
    private readonly state: QueryState,
  ) {}

  private with(state: QueryState): AdminShardedQuery {
    return new AdminShardedQuery(this.description, this.source, state);
  }

  /** A filter, as `ShardedQuery.where` takes it. */
  where(field: string, op: WhereOp, value: unknown): AdminShardedQuery {
    return this.with(withWhere(this.description, this.state, field, op, value));
  }

  /** The documents this query matches or `other` does, as `ShardedQuery.or`. */
  or(other: AdminShardedQuery): AdminShardedQuery {
    return this.with(withOr(this.description, this.state, other.description, other.state));
  }

  limit(n: number): AdminShardedQuery {
    return this.with(withLimit(this.state, n));
  }

  after(cursor: Cursor): AdminShardedQuery {
    return this.with(withCursor(this.state, cursor, false));
  }

  /** The page before `cursor` (a page's `previous`), in the query's order. */
  before(cursor: Cursor): AdminShardedQuery {
    return this.with(withCursor(this.state, cursor, true));
  }

  /** What the chunk queries send: plain data, checked against what the collection declares. */
  plan(): QueryPlan {
    return planFor(this.description, this.state);
  }

  async get(): Promise<AdminPage> {
    const plan = this.plan();
    const n = this.state.limit;
    const compare = (a: QueryDocumentSnapshot, b: QueryDocumentSnapshot) => this.compare(plan, a, b);
    if (n === undefined) {
      const answers = await Promise.all(plan.chunks.map((chunk) => this.chunk(plan, chunk, undefined).get()));
      const docs = answers.flatMap((answer) => answer.docs).sort(compare);
      if (this.state.backward) docs.reverse();
      return { docs, stats: { queries: plan.chunks.length, documentsRead: docs.length, rounds: 1 } };
    }
    const { fetched, stats } = await readRounds<QueryDocumentSnapshot<DocumentData>>(
      plan.chunks.map(weightOf),
      n + 1,
      (chunk, ask, after) =>
        this.chunk(plan, plan.chunks[chunk]!, ask, after)
          .get()
          .then((answer) => answer.docs),
      compare,
    );
    const values = (doc: QueryDocumentSnapshot) => plan.orderBy.map((field) => doc.get(fieldPath(field)));
    return pageOf(fetched.flat().sort(compare), n, this.state.cursor !== undefined, this.state.backward, values, (doc) => doc.ref.path, stats);
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
    checkLive(this.state.cursor);
    const plan = this.plan();
    return listenMerged(
      {
        chunks: plan.chunks,
        listen: (i, onDocs, onError) =>
          this.chunk(plan, plan.chunks[i]!, this.state.limit).onSnapshot((snapshot) => onDocs(snapshot.docs), onError),
        compare: (a, b) => this.compare(plan, a, b),
        path: (doc) => doc.ref.path,
        same: (a, b) => a.isEqual(b),
        ...(this.state.limit !== undefined && { limit: this.state.limit }),
      },
      next,
      error,
    );
  }

  /** How many documents match: one count per chunk, summed. */
  async count(): Promise<number> {
    const plan = wholePlan(this.description, this.state, "count");
    const counts = await Promise.all(plan.chunks.map((chunk) => this.filtered(plan, chunk).count().get()));
    return counts.reduce((total, answer) => total + answer.data().count, 0);
  }

  /** The sum of a field declared `#[sharded(aggregate)]` over every matching document. */
  async sum(field: string): Promise<number> {
    return (await this.aggregate(field, false)).sum;
  }

  /** The average of a field declared `#[sharded(aggregate)]`; `null` when no matching
   * document holds a number in it. */
  async average(field: string): Promise<number | null> {
    return (await this.aggregate(field, true)).average;
  }

  /** The sum and average of `field`, exact across the chunks, and what they cost. */
  async aggregate(field: string, average = true): Promise<AggregateTotal> {
    const plan = wholePlan(this.description, this.state, "sum or average");
    checkSummed(this.description, plan, field);
    const path = fieldPath(field);
    return settle(
      plan.chunks,
      average,
      async (chunk) => {
        // Ordered by the order field alone, as the Rust library asks: the index (shard,
        // fields, order field, summed field) serves it.
        const direction = this.description.direction === "DESCENDING" ? "desc" : "asc";
        const answer = await this.filtered(plan, chunk)
          .orderBy(fieldPath(this.description.orderField), direction)
          .aggregate({ count: AggregateField.count(), sum: AggregateField.sum(path), avg: AggregateField.average(path) })
          .get();
        const data = answer.data();
        return { count: data.count, sum: data.sum, avg: data.avg };
      },
      async (chunk) => {
        const answer = await this.chunk(plan, chunk, undefined).select(path).get();
        return answer.docs.map((doc) => doc.get(path));
      },
    );
  }

  private filtered(plan: QueryPlan, chunk: Chunk): Query<DocumentData> {
    const where = (f: ShardedFilter) => Filter.where(fieldPath(f.field), f.op, operandOf(f, chunk));
    const shard = fieldPath(this.description.shardField);
    const filters = [
      plan.shardByEquality ? Filter.where(shard, "==", chunk.shards[0]) : Filter.where(shard, "in", chunk.shards),
      ...plan.filters.map(where),
    ];
    if (plan.anyOf) filters.push(Filter.or(...plan.anyOf.map((part) => Filter.and(...part.map(where)))));
    return this.source.where(Filter.and(...filters));
  }

  private chunk(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    after?: QueryDocumentSnapshot<DocumentData>,
  ): Query<DocumentData> {
    const direction = plan.descending ? "desc" : "asc";
    let q = this.filtered(plan, chunk);
    for (const field of plan.orderBy) q = q.orderBy(fieldPath(field), direction);
    q = q.orderBy(FieldPath.documentId(), direction);
    if (after) {
      q = q.startAfter(after);
    } else if (this.state.cursor) {
      q = q.startAfter(...cursorValues(plan, this.state.cursor), cursorName(this.state, this.state.cursor));
    }
    return n === undefined ? q : q.limit(n);
  }

  private compare(plan: QueryPlan, a: QueryDocumentSnapshot, b: QueryDocumentSnapshot): number {
    const values = (doc: QueryDocumentSnapshot) => plan.orderBy.map((field) => doc.get(fieldPath(field)));
    return compareInPlan(plan, values(a), a.ref.path, values(b), b.ref.path);
  }
}
