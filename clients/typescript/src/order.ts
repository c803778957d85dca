// Firestore's order of values and of document names, as the Rust library's merge applies it
// (and the server does): types first (null, booleans, numbers, timestamps, strings, bytes,
// references, geo points, arrays, maps), NaN before every other number and -0 equal to 0,
// strings by the UTF-8 bytes of their first 1,500 (what the index holds), names segment by
// segment with legacy numeric ids (`__id7__`) first.
//
// A JavaScript number cannot tell an integer from a double, so integers beyond 2^53, which the
// SDK hands over rounded, may tie or mis-sort where the server does not.
//
// Values are recognised by their methods, not their class, so that the Firebase JS SDK's and
// the Node server SDK's (`@google-cloud/firestore`) both sort: a timestamp has `toMillis`,
// bytes are a `Uint8Array` (a `Buffer`) or have `toUint8Array`, a reference has
// `withConverter`, a geo point `isEqual` and its coordinates. A map a user stored with such
// keys has no such methods.

interface TimestampLike {
  seconds: number;
  nanoseconds: number;
}

const INDEXED_STRING_BYTES = 1499;
const INDEXED_BYTES_BYTES = 1500;
const encoder = new TextEncoder();

/** Whether `value` has each of `methods` as a function: what tells an SDK's class from a map
 * a user stored with the same keys. */
function hasMethods(value: object, ...methods: string[]): boolean {
  return methods.every((method) => typeof (value as Record<string, unknown>)[method] === "function");
}

/** Firestore's type order of a value: what an inequality compares within (a range of numbers
 * matches no string). */
export function rank(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === "boolean") return 1;
  if (typeof value === "number") return 2;
  if (typeof value === "string") return 4;
  if (Array.isArray(value)) return 8;
  if (typeof value !== "object") return 9;
  if (value instanceof Uint8Array || hasMethods(value, "toUint8Array")) return 5;
  if (hasMethods(value, "toMillis", "toDate")) return 3;
  if (hasMethods(value, "withConverter", "isEqual") && "path" in value) return 6;
  if (hasMethods(value, "isEqual") && "latitude" in value && "longitude" in value) return 7;
  return 9;
}

function bytesOf(value: unknown): Uint8Array {
  return value instanceof Uint8Array ? value : (value as { toUint8Array(): Uint8Array }).toUint8Array();
}

/** Negative, zero or positive as `a` sorts before, with or after `b`. */
export function compareValues(a: unknown, b: unknown): number {
  const byRank = rank(a) - rank(b);
  if (byRank !== 0) return Math.sign(byRank);
  switch (rank(a)) {
    case 0:
      return 0;
    case 1:
      return Number(a) - Number(b);
    case 2:
      return compareNumbers(a as number, b as number);
    case 3: {
      const x = a as TimestampLike;
      const y = b as TimestampLike;
      return Math.sign(x.seconds - y.seconds) || Math.sign(x.nanoseconds - y.nanoseconds);
    }
    case 4:
      return compareIndexed(indexedString(a as string), indexedString(b as string));
    case 5: {
      const x = bytesOf(a);
      const y = bytesOf(b);
      return compareIndexed(
        [x.subarray(0, INDEXED_BYTES_BYTES), x.length > INDEXED_BYTES_BYTES],
        [y.subarray(0, INDEXED_BYTES_BYTES), y.length > INDEXED_BYTES_BYTES],
      );
    }
    case 6:
      return compareNames((a as { path: string }).path, (b as { path: string }).path);
    case 7: {
      const x = a as { latitude: number; longitude: number };
      const y = b as { latitude: number; longitude: number };
      return compareNumbers(x.latitude, y.latitude) || compareNumbers(x.longitude, y.longitude);
    }
    case 8: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const order = compareValues(x[i], y[i]);
        if (order !== 0) return order;
      }
      return Math.sign(x.length - y.length);
    }
    default: {
      const x = Object.entries(a as object).sort(([k], [l]) => compareBytes(utf8(k), utf8(l)));
      const y = Object.entries(b as object).sort(([k], [l]) => compareBytes(utf8(k), utf8(l)));
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const [kx, vx] = x[i]!;
        const [ky, vy] = y[i]!;
        const order = compareBytes(utf8(kx), utf8(ky)) || compareValues(vx, vy);
        if (order !== 0) return order;
      }
      return Math.sign(x.length - y.length);
    }
  }
}

function compareNumbers(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** What the index holds of a string: its first 1,499 UTF-8 bytes (to a character's end). */
function indexedString(text: string): [Uint8Array, boolean] {
  const bytes = utf8(text);
  let cut = Math.min(INDEXED_STRING_BYTES, bytes.length);
  // Continuation bytes (10xxxxxx) belong to the character before the cut.
  while (cut < bytes.length && (bytes[cut]! & 0xc0) === 0x80) cut++;
  return [bytes.subarray(0, cut), cut < bytes.length];
}

function compareIndexed(a: [Uint8Array, boolean], b: [Uint8Array, boolean]): number {
  return compareBytes(a[0], b[0]) || Number(a[1]) - Number(b[1]);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return Math.sign(a.length - b.length);
}

/** Document paths (`rooms/r1/messages/m1`) in Firestore's order of names. */
export function compareNames(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = compareSegments(x[i]!, y[i]!);
    if (order !== 0) return order;
  }
  return Math.sign(x.length - y.length);
}

/** A legacy numeric id (`__id-12__`) as its number, else `undefined`. */
function numericId(segment: string): bigint | undefined {
  const match = /^__id(-?[0-9]+)__$/.exec(segment);
  if (!match) return undefined;
  const n = BigInt(match[1]!);
  // Outside i64 it is text, as the Rust merge reads it.
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

function compareSegments(a: string, b: string): number {
  const x = numericId(a);
  const y = numericId(b);
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  if (x !== undefined) return -1;
  if (y !== undefined) return 1;
  return compareBytes(utf8(a), utf8(b));
}
