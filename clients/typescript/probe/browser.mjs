// Opens the example page in headless Chromium (Debian's `chromium`, driven by playwright-core;
// nothing downloads a browser) for the Rust test suite, and answers its commands, one JSON
// line each on stdin, with one JSON line on stdout:
//   first line: {"host", "project", "description", "limit"}    -> {"opened": true}
//   {"waitFor": [path, ...]}  -> {"ok": true} once the page lists exactly those documents in
//                                that order, or {"ok": false, "paths", "status"} after 30 s
// Stops when stdin closes.
import { createInterface } from "node:readline";

import { openExamplePage } from "./example-page.mjs";

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const input = JSON.parse((await lines.next()).value);

const { page, errors, close } = await openExamplePage({
  json: { path: "/description.json", value: input.description },
  path: `/index.html?emulator=${input.host}&project=${input.project}&limit=${input.limit}`,
  args: ["--no-sandbox"],
});
say({ opened: true });

for (;;) {
  const next = await lines.next();
  if (next.done) break;
  const command = JSON.parse(next.value);
  try {
    await page.waitForFunction(
      (expected) => {
        const paths = [...document.querySelectorAll("#items li")].map((li) => li.dataset.path);
        return paths.length === expected.length && paths.every((p, i) => p === expected[i]);
      },
      command.waitFor,
      { timeout: 30_000 },
    );
    say({ ok: true });
  } catch {
    const paths = await page.$$eval("#items li", (items) => items.map((li) => li.dataset.path));
    const status = await page.textContent("#status");
    say({ ok: false, paths, status, errors });
  }
}
await close();
process.exit(0);

function say(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}
