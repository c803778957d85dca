// A sharded collection for the Firebase JS SDK (modular API): writes that draw the shard, and
// the declared queries fanned out over the shard values and merged in Firestore's order.

import {
  and,
  collection,
  collectionGroup,
  doc,
  documentId,
  FieldPath,
  average,
  count,
  getAggregateFromServer,
  getCountFromServer,
  getDoc,
  getDocs,
  deleteField,
  FieldValue,
  increment as fieldIncrement,
  limit as limitTo,
  onSnapshot,
  onSnapshotsInSync,
  or,
  orderBy,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  snapshotEqual,
  sum,
  startAfter,
  Timestamp,
  updateDoc,
  where,
  writeBatch,
  type CollectionReference,
  type DocumentData,
  type DocumentReference,
  type Firestore,
  type Query,
  type QueryFilterConstraint,
  type QueryNonFilterConstraint,
  type QueryDocumentSnapshot,
  type PartialWithFieldValue,
  type SetOptions,
  type UpdateData,
  type WithFieldValue,
} from "firebase/firestore";

import {
  afterUpdate,
  checkDocumentId,
  checkWrite,
  isPermissionDenied,
  problemsOf,
  type Sentinels,
  WriteDenied,
} from "./check.js";
import { type CollectionDescription, ShardedError, type TypedDescription } from "./description.js";
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
  type Filter,
  mergeWrite,
  operandOf,
  type QueryPlan,
  segments,
  drawnInto,
} from "./plan.js";
import { type PageOf } from "./page.js";
import { type LiveChange, type LiveMetadata, type LiveSnapshot } from "./live.js";
import { ShardedQueryOf } from "./query.js";

/** The JS SDK's sentinels, for the write checks. */
const WEB_SENTINELS: Sentinels = {
  isServerTimestamp: (value) => value instanceof FieldValue && value.isEqual(serverTimestamp()),
  isDelete: (value) => value instanceof FieldValue && value.isEqual(deleteField()),
  isSentinel: (value) => value instanceof FieldValue,
};

function fieldPath(path: string): FieldPath {
  return new FieldPath(...segments(path));
}

/** A sharded collection: at the top level, or under one parent document. */
export class ShardedCollection<
  T extends DocumentData = DocumentData,
  C extends string = string,
  F extends string = string,
> {
  readonly ref: CollectionReference<DocumentData>;

  /**
   * `parent` is the parent document's path (`"rooms/r1"`) for a collection under parents;
   * its collection ids must be the description's `parentCollections`.
   */
  constructor(
    readonly db: Firestore,
    readonly description: TypedDescription<T, C, F>,
    readonly parent?: string,
  ) {
    checkParent(description, parent);
    this.ref = parent
      ? collection(db, parent, description.collectionGroup)
      : collection(db, description.collectionGroup);
  }

  /** Adds a document under a generated id, with a shard drawn. The document is checked
   * first, as the Rust library checks its own: its order field (`serverTimestamp()` on a
   * `server_timestamp` type), every field the Rust struct requires, each of its type; a
   * `ShardedError` names the field, and nothing is sent. */
  add(data: WithFieldValue<T>): Promise<DocumentReference<DocumentData>> {
    checkWrite(this.description, data as Record<string, unknown>, "whole", WEB_SENTINELS);
    const ref = doc(this.ref);
    return setDoc(ref, drawnInto(this.description, data)).then(
      () => ref,
      (error) => this.denied(error, ref.path, data as Record<string, unknown>, "whole"),
    );
  }

  /**
   * Writes the document `id` whole, with a shard drawn. With `{merge: true}` (or
   * `{mergeFields}`), only the given fields, in a transaction that reads the document first:
   * a stored shard that queries read is kept, and a document without one (a new one, a
   * legacy one) gets one drawn, so that no merge leaves a document sharded queries miss.
   */
  async set(id: string, data: WithFieldValue<T>): Promise<void>;
  async set(id: string, data: PartialWithFieldValue<T>, options: SetOptions): Promise<void>;
  async set(id: string, fields: PartialWithFieldValue<T>, options?: SetOptions): Promise<void> {
    checkDocumentId(id);
    const data = fields as Record<string, unknown>;
    const ref = doc(this.ref, id);
    if (!options) {
      checkWrite(this.description, data, "whole", WEB_SENTINELS);
      return setDoc(ref, drawnInto(this.description, data)).catch((error) =>
        this.denied(error, ref.path, data, "whole"),
      );
    }
    const shard = fieldPath(this.description.shardField);
    let stored: DocumentData | undefined;
    try {
      await runTransaction(this.db, async (transaction) => {
        const found = await transaction.get(ref);
        stored = found.data();
        // A merge into a document that is not there creates it: then it is a whole document.
        checkWrite(this.description, data, found.exists() ? "fields" : "whole", WEB_SENTINELS);
        const [body, merge] = mergeWrite(this.description, data, options, found.get(shard), shard);
        transaction.set(ref, body, merge as SetOptions);
      });
    } catch (error) {
      if (stored === undefined) return this.denied(error, ref.path, data, "whole");
      return this.denied(error, ref.path, afterUpdate(stored, data, WEB_SENTINELS), "stored");
    }
  }

  /** Updates fields of the document `id`; its shard stays. The fields are checked first (a
   * required one not deleted, each of its type, the order field of a `server_timestamp` type
   * left alone). */
  update(id: string, data: UpdateData<T>): Promise<void> {
    checkDocumentId(id);
    checkUpdate(this.description, data);
    checkWrite(this.description, data as Record<string, unknown>, "fields", WEB_SENTINELS);
    const ref = doc(this.ref, id);
    return updateDoc(ref, data as UpdateData<DocumentData>).catch(async (error) => {
      if (!isPermissionDenied(error)) throw error;
      // What the rules judged is the stored document with the update applied: read it (where
      // reads are allowed) to find what it falls short of.
      const stored = await getDoc(ref).then(
        (found) => found.data(),
        () => undefined,
      );
      if (stored === undefined) {
        throw new WriteDenied(ref.path, [], ["the stored document (which could not be read to tell) lacks what the Rust type requires"], error);
      }
      return this.denied(error, ref.path, afterUpdate(stored, data as Record<string, unknown>, WEB_SENTINELS), "stored");
    });
  }

  /** `error` as it reaches the app: a rules refusal as a `WriteDenied` naming what is wrong
   * with `written` (the data as `kind`), anything else as it is. */
  private denied(error: unknown, path: string, written: Record<string, unknown>, kind: "whole" | "stored"): never {
    if (!isPermissionDenied(error) || error instanceof ShardedError) throw error;
    throw new WriteDenied(path, problemsOf(this.description, written, kind, WEB_SENTINELS), [], error);
  }

  /** A query of this collection, ordered by the order field. */
  query(): ShardedQuery<T, F> {
    return new ShardedQuery<T, F>(
      this.description,
      this.ref as unknown as Query<T>,
      startState(this.parent ?? ""),
    );
  }

  /**
   * Adds `by` to the counter `field` of the document `id`, exactly once: a transaction that
   * reads the increment's marker and, when it is not there, adds to a shard document drawn
   * at random and creates the marker, which records the counter, the shard and the amount.
   * The JS SDK commits a write to a document read as missing on the precondition that it
   * still is, so the increment lands once however often the SDK runs the transaction again
   * (a lost answer, contention); one already applied (the same `incrementId`, counter and
   * amount before) adds nothing, and the same `incrementId` with another counter or amount
   * is an `IncrementConflict`, nothing written. Pass your own `incrementId` (a request id) so
   * that a retry of yours counts once too. Resolves to the increment's id. Costs one read
   * (the marker) and two writes; under the generated rules, reading the marker must be
   * allowed.
   */
  async increment(id: string, field: C, by: number, incrementId = newIncrementId()): Promise<string> {
    const counter = counterOf(this.description, field);
    checkIncrement(by, incrementId, counter);
    const document = doc(this.ref, id).path;
    const { shard, shardId, marker } = incrementPaths(document, counter, incrementId);
    const markerRef = doc(this.db, marker);
    const recorded = await markerFields(document, counter, shardId, by, incrementId);
    try {
      await runTransaction(this.db, async (transaction) => {
        const found = await transaction.get(markerRef);
        if (found.exists()) {
          checkRecorded(found.data(), document, incrementId, counter.field, by);
          return;
        }
        transaction.set(
          doc(this.db, shard),
          { [SHARD_VALUE_FIELD]: fieldIncrement(by), [SHARD_INCREMENT_FIELD]: incrementId },
          { merge: true },
        );
        transaction.set(markerRef, {
          ...recorded,
          [MARKER_EXPIRY_FIELD]: Timestamp.fromMillis(markerExpiry()),
        });
      });
    } catch (error) {
      if (error instanceof ShardedError) throw error;
      // A commit refused for its marker (the rules' `!exists`, or its precondition) after
      // one that landed: the marker says.
      if (mayBeMarkerRefusal(error)) {
        const found = await getDoc(markerRef);
        if (found.exists()) {
          checkRecorded(found.data(), document, incrementId, counter.field, by);
          return incrementId;
        }
      }
      if (isPermissionDenied(error)) {
        throw new WriteDenied(
          document,
          [],
          [
            `this device's clock (${new Date().toISOString()}) is more than an hour off the server's: the marker's expiry is taken from it, and the rules take one within an hour of the server's time plus 7 days`,
            `the rules of \`${shardCollectionPath(document, counter)}/{shard}\` and \`${markerPath(document, "{id}")}\` do not call the generated counter functions`,
          ],
          error,
        );
      }
      throw error;
    }
    return incrementId;
  }

  /** Whether the increment `incrementId` was applied to the document `id` (its marker exists,
   * within the 7 days it is kept). Given the counter and the amount, an `IncrementConflict`
   * when the id was applied with others. */
  async wasApplied(id: string, incrementId: string, field?: C, by?: number): Promise<boolean> {
    // A field that is no counter is said to be so, not taken for another increment's.
    if (field !== undefined) counterOf(this.description, field);
    const document = doc(this.ref, id).path;
    const found = await getDoc(doc(this.db, markerPath(document, incrementId)));
    if (found.exists() && field !== undefined && by !== undefined) {
      checkRecorded(found.data(), document, incrementId, field, by);
    }
    return found.exists();
  }

  /** The exact value of the counter `field` of the document `id`: the sum of its shard
   * documents, one aggregation (one billed read). */
  async counter(id: string, field: C): Promise<number> {
    const counter = counterOf(this.description, field);
    const shards = collection(this.db, shardCollectionPath(doc(this.ref, id).path, counter));
    const total = await getAggregateFromServer(shards, { total: sum(SHARD_VALUE_FIELD) });
    return total.data().total ?? 0;
  }

  /** The exact values of the counter `field` of the documents `ids`, in their order: one
   * aggregation each, sent together (the JS SDK reads no snapshot at a time of its own, so
   * each is its own moment's; the Rust library's `counters` reads them at one). */
  async counters(ids: string[], field: C): Promise<number[]> {
    return Promise.all(ids.map((id) => this.counter(id, field)));
  }

  /**
   * The live value of the counter `field` of the document `id`: one listener over its shard
   * documents, their sum at each snapshot the SDK delivers, `next` called with it when it
   * changed (the first value at once). Returns how to stop. A document never counted is 0.
   * Values past 2^53 are not exact in JavaScript numbers.
   */
  onCounter(id: string, field: C, next: (value: number) => void, error?: (error: Error) => void): () => void {
    const counter = counterOf(this.description, field);
    const shards = collection(this.db, shardCollectionPath(doc(this.ref, id).path, counter));
    return followCounter(
      (values, failed) =>
        onSnapshot(shards, (snapshot) => values(snapshot.docs.map((shard) => shard.get(SHARD_VALUE_FIELD))), failed),
      next,
      error,
    );
  }

  /**
   * Deletes the document `id`. Its counters are other documents (each counter's shard
   * documents, under it), which Firestore keeps when a document is deleted, as the Rust
   * library's `delete` does: a document written again under the id counts on. With
   * `{ counters: true }`, each counter's shard documents are deleted too (read first, one
   * read each, then deleted with the document in batches of 500, the document in the last),
   * so its counters start again at 0. Increment markers stay until they expire, so an
   * increment applied again within 7 days still counts nothing.
   */
  async delete(id: string, options: { counters?: boolean } = {}): Promise<void> {
    const target = doc(this.ref, id);
    const refs: DocumentReference<DocumentData>[] = [];
    if (options.counters) {
      for (const counter of this.description.counterFields ?? []) {
        const shards = await getDocs(collection(this.db, shardCollectionPath(target.path, counter)));
        refs.push(...shards.docs.map((shard) => shard.ref));
      }
    }
    refs.push(target);
    for (let start = 0; start < refs.length; start += 500) {
      const batch = writeBatch(this.db);
      for (const ref of refs.slice(start, start + 500)) batch.delete(ref);
      await batch.commit();
    }
  }
}

/** Every document of a collection group (a type that declares `collection_group`). */
export function shardedCollectionGroup<T extends DocumentData = DocumentData, F extends string = string>(
  db: Firestore,
  description: TypedDescription<T, string, F>,
): ShardedQuery<T, F> {
  if (!description.groupQueries) {
    throw new ShardedError(
      `\`${description.collectionGroup}\` declares no group queries (\`collection_group\`): its indexes would not serve them`,
    );
  }
  return new ShardedQuery<T, F>(
    description,
    collectionGroup(db, description.collectionGroup) as unknown as Query<T>,
    startState(GROUP),
  );
}

/** One page of a query through the JS SDK, merged across the shard values. */
export type Page<T extends DocumentData = DocumentData> = PageOf<QueryDocumentSnapshot<T>>;

/** One change between two snapshots of a live query, as the SDK's `docChanges()` gives it. */
export type ShardedChange<T extends DocumentData = DocumentData> = LiveChange<QueryDocumentSnapshot<T>>;

/** What a live query delivers: every matching document, merged, and what changed. */
export type ShardedSnapshot<T extends DocumentData = DocumentData> = LiveSnapshot<QueryDocumentSnapshot<T>>;

/** A query over a sharded collection through the JS SDK: immutable, each method returns a
 * new one. */
export class ShardedQuery<T extends DocumentData = DocumentData, F extends string = string> extends ShardedQueryOf<
  QueryDocumentSnapshot<T>,
  ShardedQuery<T, F>,
  F
> {
  constructor(
    description: CollectionDescription,
    private readonly source: Query<T>,
    state: QueryState,
  ) {
    super(description, state);
  }

  protected with(state: QueryState): ShardedQuery<T, F> {
    return new ShardedQuery<T, F>(this.description, this.source, state);
  }

  protected async read(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    after?: QueryDocumentSnapshot<T>,
  ): Promise<QueryDocumentSnapshot<T>[]> {
    return (await getDocs(this.chunkQuery(plan, chunk, n, true, after))).docs;
  }

  protected async countChunk(plan: QueryPlan, chunk: Chunk): Promise<number> {
    // Ordered by the order field, as the query is: a document without it is not counted.
    const q = query(
      this.chunkQuery(plan, chunk, undefined, false),
      orderBy(fieldPath(this.description.orderField), this.typeDirection()),
    );
    return (await getCountFromServer(q)).data().count;
  }

  protected async aggregateChunk(plan: QueryPlan, chunk: Chunk, field: string): Promise<ChunkAggregate> {
    const path = fieldPath(field);
    const q = query(
      this.chunkQuery(plan, chunk, undefined, false),
      orderBy(fieldPath(this.description.orderField), this.typeDirection()),
    );
    const answer = await getAggregateFromServer(q, { count: count(), sum: sum(path), avg: average(path) });
    const data = answer.data();
    return { count: data.count, sum: data.sum, avg: data.avg };
  }

  protected async valuesOf(plan: QueryPlan, chunk: Chunk, field: string): Promise<unknown[]> {
    // The JS SDK has no projection: whole documents, their field read here.
    const answer = await getDocs(this.chunkQuery(plan, chunk, undefined));
    return answer.docs.map((doc) => doc.get(fieldPath(field)));
  }

  protected listen(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    onDocs: (docs: QueryDocumentSnapshot<T>[], metadata?: LiveMetadata) => void,
    onError: (error: Error) => void,
  ): () => void {
    // With metadata changes, a snapshot that only goes from the cache to the server's (or
    // has its local writes acknowledged) is told too.
    return onSnapshot(
      this.chunkQuery(plan, chunk, n),
      { includeMetadataChanges: true },
      (snapshot) => onDocs(snapshot.docs, snapshot.metadata),
      onError,
    );
  }

  protected same(a: QueryDocumentSnapshot<T>, b: QueryDocumentSnapshot<T>): boolean {
    return snapshotEqual(a, b);
  }

  /** The JS SDK listens to every chunk over one stream, and says when every listener has seen
   * the same moment: a live query emits there, so a document moving between chunks (a write
   * that drew another shard) is shown once, neither twice nor missing. */
  protected inSync(callback: () => void): () => void {
    return onSnapshotsInSync(this.source.firestore, callback);
  }

  protected field(doc: QueryDocumentSnapshot<T>, field: string): unknown {
    return doc.get(fieldPath(field));
  }

  /** One chunk query of `plan`: `n` documents (all without), ordered unless counted or
   * summed, from the cursor or after `after`. */
  private chunkQuery(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    ordered = true,
    after?: QueryDocumentSnapshot<T>,
  ): Query<T> {
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
}
