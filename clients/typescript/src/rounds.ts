// How a page is read past 30 shard values: each chunk asked for about its share of the
// page, then again only while it may hold more of the first documents (the Rust library's
// rounds, at most four). Exact: the merge's first documents are those of the unsharded query.

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

/** Reads `wanted` documents' worth of chunk queries in rounds; `read(chunk, ask, after)` asks
 * chunk `chunk` for `ask` documents after its last one so far (`undefined` at the start). */
export async function readRounds<D>(
  sizes: number[],
  wanted: number,
  read: (chunk: number, ask: number, after: D | undefined) => Promise<D[]>,
  compare: (a: D, b: D) => number,
): Promise<{ fetched: D[][]; stats: { queries: number; documentsRead: number; rounds: number } }> {
  const fetched: D[][] = sizes.map(() => []);
  const ranOut = sizes.map(() => false);
  const stats = { queries: 0, documentsRead: 0, rounds: 0 };
  let asks: [number, number][] = firstRound(wanted, sizes).map((ask, chunk) => [chunk, ask]);
  while (asks.length > 0) {
    stats.rounds += 1;
    const answers = await Promise.all(asks.map(([chunk, ask]) => read(chunk, ask, fetched[chunk]!.at(-1))));
    asks.forEach(([chunk, ask], i) => {
      const docs = answers[i]!;
      stats.queries += 1;
      stats.documentsRead += docs.length;
      fetched[chunk]!.push(...docs);
      ranOut[chunk] = docs.length < ask;
    });
    asks = nextRound(wanted, stats.rounds, fetched, ranOut, sizes, compare);
  }
  return { fetched, stats };
}
