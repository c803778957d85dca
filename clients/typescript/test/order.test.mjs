import { test } from "node:test";
import assert from "node:assert/strict";
import { Timestamp } from "firebase/firestore";

import { compareNames, compareValues } from "../test-dist/index.js";

const sorted = (values) => [...values].sort(compareValues);

test("types sort before values: null, booleans, numbers, timestamps, strings", () => {
  const ts = Timestamp.fromMillis(5);
  assert.deepEqual(sorted(["a", ts, 3, true, null]), [null, true, 3, ts, "a"]);
});

test("NaN sorts before every number and -0 equals 0", () => {
  assert.deepEqual(sorted([1, -Infinity, NaN, 0.5]), [NaN, -Infinity, 0.5, 1]);
  assert.equal(compareValues(-0, 0), 0);
  assert.equal(compareValues(NaN, NaN), 0);
});

test("strings sort by UTF-8 bytes, not UTF-16 units", () => {
  // U+FFFF is EF BF BF in UTF-8, before F0 9F 98 80 (U+1F600); in UTF-16 it is after D83D.
  assert.ok(compareValues("\uffff", "😀") < 0);
  assert.ok("\uffff" > "😀", "JavaScript's own order is the other one");
});

test("strings equal in their first 1,499 bytes tie on them, the longer one after", () => {
  const head = "x".repeat(1499);
  assert.equal(compareValues(head + "b", head + "a"), 0, "the index holds only the first 1,499 bytes");
  assert.ok(compareValues(head, head + "a") < 0);
});

test("timestamps sort by seconds, then nanoseconds", () => {
  const a = new Timestamp(10, 999_999_000);
  const b = new Timestamp(11, 0);
  assert.ok(compareValues(a, b) < 0);
  assert.equal(compareValues(b, new Timestamp(11, 0)), 0);
});

test("names sort segment by segment, legacy numeric ids first and by number", () => {
  const names = ["c/b", "c/__id10__", "c/__id9__", "c/a", "c/__id-1__", "c/a/d/e"];
  assert.deepEqual([...names].sort(compareNames), [
    "c/__id-1__",
    "c/__id9__",
    "c/__id10__",
    "c/a",
    "c/a/d/e",
    "c/b",
  ]);
  // "a/b" before "a-b": segments compare, not whole strings ('/' > '-').
  assert.ok(compareNames("a/b", "a-b/c") < 0);
});

test("the Node server SDK's values sort as the JS SDK's, and maps that look like them are maps", async () => {
  const admin = await import("@google-cloud/firestore");
  const web = Timestamp.fromMillis(1_000);
  const server = admin.Timestamp.fromMillis(1_000);
  assert.equal(compareValues(web, server), 0);
  assert.ok(compareValues(admin.Timestamp.fromMillis(999), web) < 0);
  // A map with `seconds` and `nanoseconds` keys is a map: after every timestamp and string.
  assert.ok(compareValues({ seconds: 1, nanoseconds: 0 }, "z") > 0);
  assert.ok(compareValues(new admin.GeoPoint(1, 2), { latitude: 1, longitude: 2 }) < 0);
  assert.ok(compareValues(Buffer.from([1]), "z") > 0, "bytes after strings");
});
