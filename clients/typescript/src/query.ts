// What a sharded query does, whichever SDK sends it: its steps, its pages read in rounds and
// merged, its count, sums and live merge. Each SDK's query class supplies the chunk queries.

import { type AggregateTotal, type ChunkAggregate, checkSummed, settle } from "./aggregate.js";
import { planFor, type QueryState, wholePlan, withCursor, withLimit, withOr, withWhere } from "./builder.js";
import { type CollectionDescription, ShardedError, type ShardedTimestamp } from "./description.js";
import { checkLive, listenMerged, type LiveMetadata, type LiveSnapshot } from "./live.js";
import { matchesPlan } from "./matches.js";
import { type PageOf, pageOf } from "./page.js";
import { type Chunk, compareInPlan, type Cursor, type QueryPlan, weightOf, type WhereOp } from "./plan.js";
import { readRounds } from "./rounds.js";

/** A document as both SDKs return it: its path, and its fields' values. */
export interface ChunkDocument {
  ref: { path: string };
}

/** A query over a sharded collection: immutable, each step returns a new one. */
export abstract class ShardedQueryOf<
  D extends ChunkDocument,
  Self extends ShardedQueryOf<D, Self, F>,
  F extends string = string,
> {
  constructor(
    readonly description: CollectionDescription,
    protected readonly state: QueryState,
  ) {}

  /** The same query with `state`. */
  protected abstract with(state: QueryState): Self;
  /** A chunk's documents: `n` of them (all without), from the cursor, or after `after`. */
  protected abstract read(plan: QueryPlan, chunk: Chunk, n: number | undefined, after?: D): Promise<D[]>;
  /** A chunk's count. */
  protected abstract countChunk(plan: QueryPlan, chunk: Chunk): Promise<number>;
  /** A chunk's count, sum and average of `field`, ordered by the order field alone (the index
   * (shard, fields, order field, summed field) serves it, as the Rust library asks). */
  protected abstract aggregateChunk(plan: QueryPlan, chunk: Chunk, field: string): Promise<ChunkAggregate>;
  /** A chunk's documents' values of `field`, in the query's order. */
  protected abstract valuesOf(plan: QueryPlan, chunk: Chunk, field: string): Promise<unknown[]>;
  /** Listens to a chunk, `n` documents at most. */
  protected abstract listen(
    plan: QueryPlan,
    chunk: Chunk,
    n: number | undefined,
    onDocs: (docs: D[], metadata?: LiveMetadata) => void,
    onError: (error: Error) => void,
  ): () => void;
  /** Whether two snapshots of one document hold the same data. */
  protected abstract same(a: D, b: D): boolean;
  /** A document's value of the field path `field`. */
  protected abstract field(doc: D, field: string): unknown;
  /** Calls `callback` each time every listener of the SDK is in sync, where the SDK tells
   * (the JS SDK); returns how to stop. */
  protected inSync?(callback: () => void): () => void;
  /** A document's update time, sortable as a string, where the SDK gives it (the server SDK). */
  protected version?(doc: D): string;
  /** The document read again now (one read), or `undefined` when it is gone; where the
   * chunks' listeners are streams of their own (the server SDK). */
  protected readAgain?(doc: D): Promise<D | undefined>;

  /**
   * A filter: `==`, `in` or `array-contains` on a declared field; a range (`<`, `<=`, `>`,
   * `>=`) of the order field; a range, `!=` or `not-in` on a field declared
   * `#[sharded(range)]` (the query then orders by it after the order field).
   */
  where(field: F, op: WhereOp, value: unknown): Self {
    return this.with(withWhere(this.description, this.state, field, op, value));
  }

  /**
   * The documents that have not expired at `now`: those whose expiry field (the type's
   * `expire_at`) is after it, as the Rust library's `unexpired(now)` filters them. TTL deletes
   * expired documents within about a day, in no order, so until then they still match
   * queries. The filter is a range on the expiry field, which every query of an expiring type
   * may take: the generated indexes serve it. On a type without `expire_at`, a `ShardedError`
   * before anything is sent.
   */
  unexpired(now: Date | ShardedTimestamp): Self {
    const expiry = this.description.expiryField;
    if (expiry === undefined) {
      throw new ShardedError(
        `\`${this.description.collectionGroup}\` declares no expiry: add \`expire_at = "field"\` to #[sharded(...)] on its Rust type to filter out what expired`,
      );
    }
    return this.with(withWhere(this.description, this.state, expiry, ">", now));
  }

  /**
   * The documents this query matches or `other` does (Firestore's `or`), each once, in the
   * query's order: `q.where("author", "==", "ann").or(q.where("mentions", "array-contains",
   * "ann"))`. `other` is a query of the same collection and scope with `==`, `in` or
   * `array-contains` filters only; a limit, a cursor and a range of the order field belong to
   * the whole. Each query is served by its own index.
   */
  or(other: Self): Self {
    return this.with(withOr(this.description, this.state, other.description, other.state));
  }

  /** At most `n` documents (and pages of `n`). */
  limit(n: number): Self {
    return this.with(withLimit(this.state, n));
  }

  /** The documents after `cursor` (a page's `next`). */
  after(cursor: Cursor): Self {
    return this.with(withCursor(this.state, cursor, false));
  }

  /** The page before `cursor` (a page's `previous`), in the query's order. Only on a type
   * declared `reversible` (whose indexes serve the other direction, as the Rust library
   * plans them); on another, a `ShardedError` before anything is sent. */
  before(cursor: Cursor): Self {
    if (!this.description.reversible) {
      throw new ShardedError(
        `\`${this.description.collectionGroup}\` is not declared \`reversible\`: a page before a cursor reads in the other direction, which no index of the file serves; add \`reversible\` to #[sharded(...)]`,
      );
    }
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
  async get(): Promise<PageOf<D>> {
    const plan = this.plan();
    const n = this.state.limit;
    const compare = (a: D, b: D) => this.compare(plan, a, b);
    if (n === undefined) {
      const answers = await Promise.all(plan.chunks.map((chunk) => this.read(plan, chunk, undefined)));
      const docs = answers.flat().sort(compare);
      if (this.state.backward) docs.reverse();
      return { docs, stats: { queries: plan.chunks.length, documentsRead: docs.length, rounds: 1 } };
    }
    const { fetched, stats } = await readRounds<D>(
      plan.chunks.map(weightOf),
      n + 1,
      (chunk, ask, after) => this.read(plan, plan.chunks[chunk]!, ask, after),
      compare,
    );
    const merged = fetched.flat().sort(compare);
    const values = (doc: D) => this.orderValues(plan, doc);
    // A page's `previous` only where `before` can take it: a reversible type.
    const started = this.state.cursor !== undefined;
    const page = pageOf(merged, n, started, this.state.backward, values, (doc) => doc.ref.path, stats);
    if (!this.description.reversible) delete page.previous;
    return page;
  }

  /**
   * Listens to the query: one listener per chunk, merged into one stream of snapshots with
   * `docChanges()`. The first comes once every chunk has answered. The JS SDK raises the
   * chunks' events of one server change together, and they are delivered as one snapshot;
   * the server SDK listens to each chunk on its own stream, so a change that touches
   * documents of several chunks at once (a batch) may show as one snapshot per chunk. An
   * error on any chunk stops every listener and reaches `error`: never a partial stream.
   */
  onSnapshot(next: (snapshot: LiveSnapshot<D>) => void, error?: (error: Error) => void): () => void {
    checkLive(this.state.cursor);
    const plan = this.plan();
    const n = this.state.limit;
    const readValues = new Set(plan.chunks.flatMap((chunk) => chunk.shards));
    const shardField = this.description.shardField;
    const readAgain = this.readAgain?.bind(this);
    const recheck = readAgain
      ? async (doc: D) => {
          const now = await readAgain(doc);
          // Still one of the query's: a shard value the query reads, and its filters met.
          const kept =
            now !== undefined &&
            readValues.has(this.field(now, shardField) as string) &&
            matchesPlan(plan, (path) => this.field(now, path));
          return kept ? now : undefined;
        }
      : undefined;
    return listenMerged(
      {
        chunks: plan.chunks,
        listen: (i, onDocs, onError) => this.listen(plan, plan.chunks[i]!, n, onDocs, onError),
        compare: (a, b) => this.compare(plan, a, b),
        path: (doc) => doc.ref.path,
        same: (a, b) => this.same(a, b),
        ...(n !== undefined && { limit: n }),
        ...(this.inSync && { inSync: this.inSync.bind(this) }),
        ...(this.version && { version: this.version.bind(this) }),
        ...(recheck && { recheck }),
      },
      next,
      error,
    );
  }

  /** How many documents match: one count per chunk, summed. */
  async count(): Promise<number> {
    const plan = wholePlan(this.description, this.state, "count");
    const counts = await Promise.all(plan.chunks.map((chunk) => this.countChunk(plan, chunk)));
    return counts.reduce((total, count) => total + count, 0);
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
    return settle(
      plan.chunks,
      average,
      (chunk) => this.aggregateChunk(plan, chunk, field),
      (chunk) => this.valuesOf(plan, chunk, field),
    );
  }

  /** The direction the type's queries order in, as both SDKs spell it. */
  protected typeDirection(): "asc" | "desc" {
    return this.description.direction === "DESCENDING" ? "desc" : "asc";
  }

  private orderValues(plan: QueryPlan, doc: D): unknown[] {
    return plan.orderBy.map((field) => this.field(doc, field));
  }

  private compare(plan: QueryPlan, a: D, b: D): number {
    return compareInPlan(plan, this.orderValues(plan, a), a.ref.path, this.orderValues(plan, b), b.ref.path);
  }
}
