// A sharded collection for the Node server SDK (`@google-cloud/firestore`, which
// `firebase-admin/firestore` re-exports): the same writes, queries, rounds and merge as the
// JS SDK's `ShardedCollection`. Server SDKs bypass security rules, so the shard these writes
// draw is all that keeps the contract: `verify()` in Rust counts what others left without one.

import {
  AggregateField,
  FieldPath,
  FieldValue,
  Filter,
  Timestamp,
  type CollectionReference,
  type DocumentData,
  type DocumentReference,
  type Firestore,
  type Query,
  type PartialWithFieldValue,
  type QueryDocumentSnapshot,
  type SetOptions,
  type UpdateData,
  type WithFieldValue,
} from "@google-cloud/firestore";

import { checkDocumentId, checkWrite, type Sentinels } from "./check.js";
import { type CollectionDescription, ShardedError, type TypedDescription } from "./description.js";

// The SDK-free core: a server project imports everything it needs from here, with no
// `firebase` installed.
export * from "./core.js";
import {
  checkIncrement,
  checkRecorded,
  counterOf,
  followCounter,
  incrementPaths,
  markerFields,
  MARKER_EXPIRY_FIELD,
  markerExpiry,
  markerPath,
  mayBeMarkerRefusal,
  newIncrementId,
  SHARD_INCREMENT_FIELD,
  SHARD_VALUE_FIELD,
  shardCollectionPath,
} from "./counter.js";
import { type ChunkAggregate } from "./aggregate.js";
import { cursorName, GROUP, type QueryState, startState } from "./builder.js";
import {
  type Chunk,
  checkParent,
  checkUpdate,
  cursorValues,
  type Filter as ShardedFilter,
  mergeWrite,
  operandOf,
  type QueryPlan,
  segments,
  drawnInto,
} from "./plan.js";
import { type PageOf } from "./page.js";
import { ShardedQueryOf } from "./query.js";

/** The server SDK's sentinels, for the write checks. */
const SERVER_SENTINELS: Sentinels = {
  isServerTimestamp: (value) => value instanceof FieldValue && value.isEqual(FieldValue.serverTimestamp()),
  isDelete: (value) => value instanceof FieldValue && value.isEqual(FieldValue.delete()),
  isSentinel: (value) => value instanceof FieldValue,
};

function fieldPath(path: string): FieldPath {
  return new FieldPath(...segments(path));
}

/** The server's time minus this machine's, per database client, as its answers last told. */
const CLOCK_OFFSETS = new WeakMap<Firestore, number>();

/** The server's time minus this machine's: from the last answer seen, or from the read time of
 * one lookup of a document no one writes (the first increment of a process): so that a marker
 * expires 7 days after the server's time, however far off this machine's clock is. */
async function serverClockOffset(db: Firestore): Promise<number> {
  const known = CLOCK_OFFSETS.get(db);
  if (known !== undefined) return known;
  const before = Date.now();
  const read = await db.doc("_sharded_clock/now").get();
  const offset = read.readTime.toMillis() - (before + Date.now()) / 2;
  CLOCK_OFFSETS.set(db, offset);
  return offset;
}

/** A page read through the server SDK. */
export type AdminPage<T extends DocumentData = DocumentData> = PageOf<QueryDocumentSnapshot<T>>;

/** A sharded collection through the server SDK: at the top level, or under one parent. */
export class ShardedAdminCollection<
  T extends DocumentData = DocumentData,
  C extends string = string,
  F extends string = string,
> {
  readonly ref: CollectionReference<DocumentData>;

  constructor(
    readonly db: Firestore,
    readonly description: TypedDescription<T, C, F>,
    readonly parent?: string,
  ) {
    checkParent(description, parent);
    this.ref = parent
      ? db.doc(parent).collection(description.collectionGroup)
      : db.collection(description.collectionGroup);
  }

  /** Adds a document under a generated id, with a shard drawn; checked first as the JS SDK's
   * `add` checks it (the server SDK bypasses security rules: this is what holds its writes to
   * what the Rust library reads back). */
  add(data: WithFieldValue<T>): Promise<DocumentReference<DocumentData>> {
    checkWrite(this.description, data as Record<string, unknown>, "whole", SERVER_SENTINELS);
    return this.ref.add(drawnInto(this.description, data as DocumentData));
  }

  /** Writes the document `id` whole with a shard drawn; a merge as `ShardedCollection.set`
   * does it: in a transaction, keeping a stored shard that queries read, drawing one where
   * there is none. */
  async set(id: string, data: WithFieldValue<T>): Promise<void>;
  async set(id: string, data: PartialWithFieldValue<T>, options: SetOptions): Promise<void>;
  async set(id: string, fields: PartialWithFieldValue<T>, options?: SetOptions): Promise<void> {
    checkDocumentId(id);
    const data = fields as DocumentData;
    const ref = this.ref.doc(id);
    if (!options) {
      checkWrite(this.description, data, "whole", SERVER_SENTINELS);
      await ref.set(drawnInto(this.description, data));
      return;
    }
    const shard = fieldPath(this.description.shardField);
    await this.db.runTransaction(async (transaction) => {
      const stored = await transaction.get(ref);
      checkWrite(this.description, data, stored.exists ? "fields" : "whole", SERVER_SENTINELS);
      const [body, merge] = mergeWrite(this.description, data, options, stored.get(shard), shard);
      transaction.set(ref, body, merge as SetOptions);
    });
  }

  /** Updates fields of the document `id`; its shard stays (checked as the JS SDK's `update`). */
  async update(id: string, data: UpdateData<T>): Promise<void> {
    checkDocumentId(id);
    checkUpdate(this.description, data);
    checkWrite(this.description, data as Record<string, unknown>, "fields", SERVER_SENTINELS);
    await this.ref.doc(id).update(data as UpdateData<DocumentData>);
  }

  /** A query of this collection, ordered by the order field. */
  query(): AdminShardedQuery<T, F> {
    return new AdminShardedQuery<T, F>(
      this.description,
      this.ref as unknown as Query<T>,
      startState(this.parent ?? ""),
    );
  }

  /** `ShardedCollection.increment` through the server SDK, as the Rust library commits it:
   * one batch that adds to a shard document drawn at random and creates the marker, recording
   * the counter, the shard and the amount, on the precondition that it does not exist. Sent
   * again after it landed, the batch is refused whole (ALREADY_EXISTS) and the marker says it
   * counted; the same id with another counter or amount is an `IncrementConflict`, nothing
   * written. Nothing is read otherwise. */
  async increment(id: string, field: C, by: number, incrementId = newIncrementId()): Promise<string> {
    const counter = counterOf(this.description, field);
    checkIncrement(by, incrementId, counter);
    const document = this.ref.doc(id).path;
    const { shard, shardId, marker } = incrementPaths(document, counter, incrementId);
    const batch = this.db.batch();
    batch.set(
      this.db.doc(shard),
      { [SHARD_VALUE_FIELD]: FieldValue.increment(by), [SHARD_INCREMENT_FIELD]: incrementId },
      { merge: true },
    );
    batch.create(this.db.doc(marker), {
      ...(await markerFields(document, counter, shardId, by, incrementId)),
      [MARKER_EXPIRY_FIELD]: Timestamp.fromMillis(markerExpiry(await serverClockOffset(this.db))),
    });
    try {
      const results = await batch.commit();
      const written = results[0]?.writeTime;
      if (written) CLOCK_OFFSETS.set(this.db, written.toMillis() - Date.now());
    } catch (error) {
      if (mayBeMarkerRefusal(error)) {
        const found = await this.db.doc(marker).get();
        if (found.exists) {
          checkRecorded(found.data() ?? {}, document, incrementId, counter.field, by);
          return incrementId;
        }
      }
      throw error;
    }
    return incrementId;
  }

  /** Whether the increment `incrementId` was applied to the document `id`. Given the counter
   * and the amount, an `IncrementConflict` when the id was applied with others. */
  async wasApplied(id: string, incrementId: string, field?: C, by?: number): Promise<boolean> {
    // A field that is no counter is said to be so, not taken for another increment's.
    if (field !== undefined) counterOf(this.description, field);
    const document = this.ref.doc(id).path;
    const found = await this.db.doc(markerPath(document, incrementId)).get();
    if (found.exists && field !== undefined && by !== undefined) {
      checkRecorded(found.data() ?? {}, document, incrementId, field, by);
    }
    return found.exists;
  }

  /** The exact value of the counter `field` of the document `id`: one sum aggregation. */
  async counter(id: string, field: C): Promise<number> {
    const counter = counterOf(this.description, field);
    const shards = this.db.collection(shardCollectionPath(this.ref.doc(id).path, counter));
    const total = await shards.aggregate({ total: AggregateField.sum(SHARD_VALUE_FIELD) }).get();
    return total.data().total ?? 0;
  }

  /** The exact values of the counter `field` of the documents `ids`, in their order, at one
   * snapshot: one aggregation each, in a read-only transaction. */
  async counters(ids: string[], field: C): Promise<number[]> {
    const counter = counterOf(this.description, field);
    return this.db.runTransaction(
      async (transaction) => {
        const totals = await Promise.all(
          ids.map((id) =>
            transaction.get(
              this.db
                .collection(shardCollectionPath(this.ref.doc(id).path, counter))
                .aggregate({ total: AggregateField.sum(SHARD_VALUE_FIELD) }),
            ),
          ),
        );
        return totals.map((total) => total.data().total ?? 0);
      },
      { readOnly: true },
    );
  }

  /** The live value of the counter `field` of the document `id` (see the JS SDK's
   * `onCounter`): one listener over its shard documents. Returns how to stop. */
  onCounter(id: string, field: C, next: (value: number) => void, error?: (error: Error) => void): () => void {
    const counter = counterOf(this.description, field);
    const shards = this.db.collection(shardCollectionPath(this.ref.doc(id).path, counter));
    return followCounter(
      (values, failed) =>
        shards.onSnapshot((snapshot) => values(snapshot.docs.map((shard) => shard.get(SHARD_VALUE_FIELD))), failed),
      next,
      error,
    );
  }

  /** Deletes the document `id`; with `{ counters: true }` its counters' shard documents too
   * (see the JS SDK's `delete`). */
  async delete(id: string, options: { counters?: boolean } = {}): Promise<void> {
    const target = this.ref.doc(id);
    const refs: DocumentReference<DocumentData>[] = [];
    if (options.counters) {
      for (const counter of this.description.counterFields ?? []) {
        const shards = await this.db.collection(shardCollectionPath(target.path, counter)).listDocuments();
        refs.push(...shards);
      }
    }
    refs.push(target);
    for (let start = 0; start < refs.length; start += 500) {
      const batch = this.db.batch();
      for (const ref of refs.slice(start, start + 500)) batch.delete(ref);
      await batch.commit();
    }
  }
}

/** Every document of a collection group, through the server SDK. */
export function adminCollectionGroup<T extends DocumentData = DocumentData, F extends string = string>(
  db: Firestore,
  description: TypedDescription<T, string, F>,
): AdminShardedQuery<T, F> {
  if (!description.groupQueries) {
    throw new ShardedError(
      `\`${description.collectionGroup}\` declares no group queries (\`collection_group\`): its indexes would not serve them`,
    );
  }
  return new AdminShardedQuery<T, F>(
    description,
    db.collectionGroup(description.collectionGroup) as unknown as Query<T>,
    startState(GROUP),
  );
}

/** A query through the server SDK: immutable, each method returns a new one. */
export class AdminShardedQuery<T extends DocumentData = DocumentData, F extends string = string> extends ShardedQueryOf<
  QueryDocumentSnapshot<T>,
  AdminShardedQuery<T, F>,
  F
> {
  constructor(
    description: CollectionDescription,
    private readonly source: Query<T>,
    state: QueryState,
  ) {
    super(description, state);
  }

  protected with(state: QueryState): AdminShardedQuery<T, F> {
    return new AdminShardedQuery<T, F>(this.description, this.source, state);
  }

  protected async read(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    after?: QueryDocumentSnapshot<T>,
  ): Promise<QueryDocumentSnapshot<T>[]> {
    return (await this.chunk(plan, chunk, n, after).get()).docs;
  }

  protected async countChunk(plan: QueryPlan, chunk: Chunk): Promise<number> {
    // Ordered by the order field, as the query is: a document without it is not counted.
    const ordered = this.filtered(plan, chunk).orderBy(fieldPath(this.description.orderField), this.typeDirection());
    return (await ordered.count().get()).data().count;
  }

  protected async aggregateChunk(plan: QueryPlan, chunk: Chunk, field: string): Promise<ChunkAggregate> {
    const path = fieldPath(field);
    const answer = await this.filtered(plan, chunk)
      .orderBy(fieldPath(this.description.orderField), this.typeDirection())
      .aggregate({ count: AggregateField.count(), sum: AggregateField.sum(path), avg: AggregateField.average(path) })
      .get();
    const data = answer.data();
    return { count: data.count, sum: data.sum, avg: data.avg };
  }

  protected async valuesOf(plan: QueryPlan, chunk: Chunk, field: string): Promise<unknown[]> {
    const path = fieldPath(field);
    const answer = await this.chunk(plan, chunk, undefined).select(path).get();
    return answer.docs.map((doc) => doc.get(path));
  }

  /** The server SDK's update time, which `Timestamp.valueOf()` makes a sortable string. */
  protected version(doc: QueryDocumentSnapshot<T>): string {
    return doc.updateTime.valueOf();
  }

  /** The document read again, where each chunk listens over a stream of its own. */
  protected async readAgain(
    doc: QueryDocumentSnapshot<T>,
  ): Promise<QueryDocumentSnapshot<T> | undefined> {
    const now = await doc.ref.get();
    return now.exists ? (now as QueryDocumentSnapshot<T>) : undefined;
  }

  protected listen(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    onDocs: (docs: QueryDocumentSnapshot<T>[]) => void,
    onError: (error: Error) => void,
  ): () => void {
    return this.chunk(plan, chunk, n).onSnapshot((snapshot) => onDocs(snapshot.docs), onError);
  }

  protected same(a: QueryDocumentSnapshot<T>, b: QueryDocumentSnapshot<T>): boolean {
    return a.isEqual(b);
  }

  protected field(doc: QueryDocumentSnapshot<T>, field: string): unknown {
    return doc.get(fieldPath(field));
  }

  private filtered(plan: QueryPlan, chunk: Chunk): Query<T> {
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
    after?: QueryDocumentSnapshot<T>,
  ): Query<T> {
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
}
