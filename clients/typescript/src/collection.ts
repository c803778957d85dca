// A sharded collection for the Firebase JS SDK (modular API): writes that draw the shard, and
// the declared queries fanned out over the shard values and merged in Firestore's order.

import {
  addDoc,
  and,
  collection,
  collectionGroup,
  doc,
  documentId,
  FieldPath,
  average as average_,
  count,
  getAggregateFromServer,
  getCountFromServer,
  getDocs,
  limit as limitTo,
  onSnapshot,
  or,
  orderBy,
  query,
  runTransaction,
  setDoc,
  snapshotEqual,
  sum,
  startAfter,
  updateDoc,
  where,
  type CollectionReference,
  type DocumentData,
  type DocumentReference,
  type Firestore,
  type Query,
  type QueryFilterConstraint,
  type QueryNonFilterConstraint,
  type QueryDocumentSnapshot,
  type SetOptions,
  type Unsubscribe,
  type UpdateData,
} from "firebase/firestore";

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
  type Filter,
  type QueryPlan,
  segments,
  type WhereOp,
  operandOf,
  weightOf,
  withShard,
} from "./plan.js";
import { type PageOf, pageOf } from "./page.js";
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
   * Writes the document `id` whole, with a shard drawn. With `{merge: true}` (or
   * `{mergeFields}`), only the given fields, in a transaction that reads the document first:
   * a stored shard that queries read is kept, and a document without one (a new one, a
   * legacy one) gets one drawn, so that no merge leaves a document sharded queries miss.
   */
  async set(id: string, data: T, options?: SetOptions): Promise<void> {
    const ref = doc(this.ref, id);
    if (!options) return setDoc(ref, withShard(this.description, data));
    const shard = fieldPath(this.description.shardField);
    await runTransaction(this.db, async (transaction) => {
      const stored = await transaction.get(ref);
      const [body, merge] = mergeWrite(this.description, data, options, stored.get(shard), shard);
      transaction.set(ref, body, merge as SetOptions);
    });
  }

  /** Updates fields of the document `id`; its shard stays. */
  update(id: string, data: UpdateData<T>): Promise<void> {
    checkUpdate(this.description, data);
    return updateDoc(doc(this.ref, id), data as UpdateData<DocumentData>);
  }

  /** A query of this collection, ordered by the order field. */
  query(): ShardedQuery {
    return new ShardedQuery(this.description, this.ref, startState(this.parent ?? ""));
  }
}

/** Every document of a collection group (a type that declares `collection_group`). */
export function shardedCollectionGroup(db: Firestore, description: CollectionDescription): ShardedQuery {
  if (!description.groupQueries) {
    throw new ShardedError(
      `\`${description.collectionGroup}\` declares no group queries (\`collection_group\`): its indexes would not serve them`,
    );
  }
  return new ShardedQuery(description, collectionGroup(db, description.collectionGroup), startState(GROUP));
}

/** One page of a query through the JS SDK, merged across the shard values. */
export type Page = PageOf<QueryDocumentSnapshot<DocumentData>>;

/** One change between two snapshots of a live query, as the SDK's `docChanges()` gives it. */
export type ShardedChange = LiveChange<QueryDocumentSnapshot<DocumentData>>;

/** What a live query delivers: every matching document, merged, and what changed. */
export type ShardedSnapshot = LiveSnapshot<QueryDocumentSnapshot<DocumentData>>;

/** A query over a sharded collection: immutable, each method returns a new one. */
export class ShardedQuery {
  constructor(
    readonly description: CollectionDescription,
    private readonly source: Query<DocumentData>,
    private readonly state: QueryState,
  ) {}

  private with(state: QueryState): ShardedQuery {
    return new ShardedQuery(this.description, this.source, state);
  }

  /**
   * A filter: `==`, `in` or `array-contains` on a declared field; a range (`<`, `<=`, `>`,
   * `>=`) of the order field; a range, `!=` or `not-in` on a field declared
   * `#[sharded(range)]` (the query then orders by it after the order field).
   */
  where(field: string, op: WhereOp, value: unknown): ShardedQuery {
    return this.with(withWhere(this.description, this.state, field, op, value));
  }

  /**
   * The documents this query matches or `other` does (Firestore's `or`), each once, in the
   * query's order: `q.where("author", "==", "ann").or(q.where("mentions", "array-contains",
   * "ann"))`. `other` is a query of the same collection and scope with `==`, `in` or
   * `array-contains` filters only; a limit, a cursor and a range of the order field belong to
   * the whole. Each query is served by its own index.
   */
  or(other: ShardedQuery): ShardedQuery {
    return this.with(withOr(this.description, this.state, other.description, other.state));
  }

  /** At most `n` documents (and pages of `n`). */
  limit(n: number): ShardedQuery {
    return this.with(withLimit(this.state, n));
  }

  /** The documents after `cursor` (a page's `next`). */
  after(cursor: Cursor): ShardedQuery {
    return this.with(withCursor(this.state, cursor, false));
  }

  /** The page before `cursor` (a page's `previous`), in the query's order. */
  before(cursor: Cursor): ShardedQuery {
    return this.with(withCursor(this.state, cursor, true));
  }

  /** What the chunk queries send: plain data, checked against what the collection declares. */
  plan(): QueryPlan {
    return planFor(this.description, this.state);
  }

  /** The chunk queries one round sends: each at most 30 disjunctions. */
  chunks(): Chunk[] {
    return this.plan().chunks;
  }

  /** The first page (or the one after the cursor): merged in Firestore's order. */
  async get(): Promise<Page> {
    const plan = this.plan();
    const n = this.state.limit;
    const compare = (a: QueryDocumentSnapshot, b: QueryDocumentSnapshot) => this.compare(plan, a, b);
    if (n === undefined) {
      const snapshots = await Promise.all(
        plan.chunks.map((chunk) => getDocs(this.chunkQuery(plan, chunk, undefined))),
      );
      const docs = snapshots.flatMap((snapshot) => snapshot.docs).sort(compare);
      if (this.state.backward) docs.reverse();
      return { docs, stats: { queries: plan.chunks.length, documentsRead: docs.length, rounds: 1 } };
    }
    const { fetched, stats } = await readRounds<QueryDocumentSnapshot<DocumentData>>(
      plan.chunks.map(weightOf),
      n + 1,
      (chunk, ask, after) =>
        getDocs(this.chunkQuery(plan, plan.chunks[chunk]!, ask, true, after)).then(
          (answer) => answer.docs,
        ),
      compare,
    );
    const values = (doc: QueryDocumentSnapshot) => plan.orderBy.map((field) => doc.get(fieldPath(field)));
    return pageOf(fetched.flat().sort(compare), n, this.state.cursor !== undefined, this.state.backward, values, (doc) => doc.ref.path, stats);
  }

  /**
   * Listens to the query: one listener per chunk, merged into one stream of snapshots. The
   * first comes once every chunk has answered; the SDK raises the chunks' events of one
   * server change together, and they are delivered as one snapshot. An error on any chunk
   * stops every listener and reaches `error`: never a partial stream.
   */
  onSnapshot(next: (snapshot: ShardedSnapshot) => void, error?: (error: Error) => void): Unsubscribe {
    checkLive(this.state.cursor);
    const plan = this.plan();
    return listenMerged(
      {
        chunks: plan.chunks,
        listen: (i, onDocs, onError) =>
          onSnapshot(
            this.chunkQuery(plan, plan.chunks[i]!, this.state.limit),
            (snapshot) => onDocs(snapshot.docs),
            onError,
          ),
        compare: (a, b) => this.compare(plan, a, b),
        path: (doc) => doc.ref.path,
        same: (a, b) => snapshotEqual(a, b),
        ...(this.state.limit !== undefined && { limit: this.state.limit }),
      },
      next,
      error,
    );
  }

  /** How many documents match: one count per chunk, summed. */
  async count(): Promise<number> {
    const plan = wholePlan(this.description, this.state, "count");
    const counts = await Promise.all(
      plan.chunks.map((chunk) => getCountFromServer(this.chunkQuery(plan, chunk, undefined, false))),
    );
    return counts.reduce((sum, snapshot) => sum + snapshot.data().count, 0);
  }

  /** The sum of a field declared `#[sharded(aggregate)]` over every matching document. */
  async sum(field: string): Promise<number> {
    return (await this.aggregate(field, false)).sum;
  }

  /** The average of a field declared `#[sharded(aggregate)]`: `null` when no matching
   * document holds a number in it (Firestore's `average` skips other values). */
  async average(field: string): Promise<number | null> {
    return (await this.aggregate(field, true)).average;
  }

  /** The sum and average of `field` (`average` says whether the average is wanted: only it
   * may need more requests), exact across the chunks, and what they cost. */
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
        const q = query(this.chunkQuery(plan, chunk, undefined, false), orderBy(fieldPath(this.description.orderField), this.description.direction === "DESCENDING" ? "desc" : "asc"));
        const answer = await getAggregateFromServer(q, { count: count(), sum: sum(path), avg: average_(path) });
        const data = answer.data();
        return { count: data.count, sum: data.sum, avg: data.avg };
      },
      async (chunk) => {
        const answer = await getDocs(this.chunkQuery(plan, chunk, undefined));
        return answer.docs.map((doc) => doc.get(path));
      },
    );
  }

  /** One chunk query of `plan`: `n` documents (all without), ordered unless counted or
   * summed, from the cursor or after `after`. */
  private chunkQuery(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    ordered = true,
    after?: QueryDocumentSnapshot<DocumentData>,
  ): Query<DocumentData> {
    const shard = fieldPath(this.description.shardField);
    const filters: QueryFilterConstraint[] = [
      plan.shardByEquality ? where(shard, "==", chunk.shards[0]) : where(shard, "in", chunk.shards),
      ...plan.filters.map((filter) => where(fieldPath(filter.field), filter.op, operandOf(filter, chunk))),
    ];
    if (plan.anyOf) {
      const part = (filters: Filter[]) => and(...filters.map((f) => where(fieldPath(f.field), f.op, operandOf(f, chunk))));
      filters.push(or(...plan.anyOf.map(part)));
    }
    const rest: QueryNonFilterConstraint[] = [];
    if (ordered) {
      const direction = plan.descending ? "desc" : "asc";
      for (const field of plan.orderBy) rest.push(orderBy(fieldPath(field), direction));
      rest.push(orderBy(documentId(), direction));
      const cursor = this.state.cursor;
      if (after) {
        rest.push(startAfter(after));
      } else if (cursor) {
        rest.push(startAfter(...cursorValues(plan, cursor), cursorName(this.state, cursor)));
      }
      if (n !== undefined) rest.push(limitTo(n));
    }
    return query(this.source, and(...filters), ...rest);
  }

  private compare(plan: QueryPlan, a: QueryDocumentSnapshot, b: QueryDocumentSnapshot): number {
    const values = (doc: QueryDocumentSnapshot) => plan.orderBy.map((field) => doc.get(fieldPath(field)));
    return compareInPlan(plan, values(a), a.ref.path, values(b), b.ref.path);
  }
}
