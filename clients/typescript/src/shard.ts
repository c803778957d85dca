// The shard value a write stores, drawn as the Rust library draws it: uniformly from the
// current values; while resharding, new values get a share of the writes that follows
// Firestore's 500/50/5 ramp (500 writes/s per previous value, +50 % every 5 minutes) until
// it is their even share, from `reshardSince` (or from this process's first draw).

import type { CollectionDescription } from "./description.js";

const WRITES_PER_SHARD = 500;
const GROWTH = 1.5;
const INTERVAL_MS = 5 * 60 * 1000;

/** When each collection's schedule started in this process, for descriptions without `since`. */
const firstDraws = new Map<string, number>();

/** The values new to the set (current, not previous) and those kept (current and previous). */
export function newAndKept(d: CollectionDescription): { fresh: string[]; kept: string[] } {
  const previous = d.previousShardValues ?? [];
  return {
    fresh: d.shardValues.filter((v) => !previous.includes(v)),
    kept: d.shardValues.filter((v) => previous.includes(v)),
  };
}

/** The share of writes the new values take `elapsedMs` into the schedule. */
export function newValuesShare(d: CollectionDescription, elapsedMs: number): number {
  const { fresh, kept } = newAndKept(d);
  const previous = d.previousShardValues ?? [];
  if (fresh.length === 0) return 0;
  if (kept.length === 0 || previous.length === 0) return 1;
  const full = fresh.length / (fresh.length + kept.length);
  const steps = Math.floor(Math.max(0, elapsedMs) / INTERVAL_MS);
  const rate = WRITES_PER_SHARD * Math.pow(GROWTH, steps);
  return Math.min(rate / (WRITES_PER_SHARD * previous.length), full);
}

/**
 * A shard value for a write at `now` (milliseconds since the epoch). `random` is
 * `Math.random` unless given.
 */
export function drawShard(
  d: CollectionDescription,
  now: number = Date.now(),
  random: () => number = Math.random,
): string {
  const previous = d.previousShardValues ?? [];
  const pick = (values: string[]) => values[Math.floor(random() * values.length)] ?? values[0]!;
  if (previous.length === 0) return pick(d.shardValues);
  const { fresh, kept } = newAndKept(d);
  if (fresh.length === 0) return pick(kept);
  let elapsed: number;
  if (d.reshardSince !== undefined) {
    elapsed = now - d.reshardSince * 1000;
    // Before the schedule starts, writes draw what the type before the change drew.
    if (elapsed < 0) return pick(previous);
  } else {
    const key = d.collectionGroup + "\u0000" + (d.parentCollections ?? []).join("/");
    if (!firstDraws.has(key)) firstDraws.set(key, now);
    elapsed = now - firstDraws.get(key)!;
  }
  const fromNew = kept.length === 0 || random() < newValuesShare(d, elapsed);
  return pick(fromNew ? fresh : kept);
}
