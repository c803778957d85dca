// Opens the Pulse example page (`example/pulse.html`) in headless Chromium (Debian's
// `chromium`, driven by playwright-core) for the Rust test suite, and runs its commands, one
// JSON line each on stdin, answering each with one JSON line on stdout:
//   first line: {"host", "project", "user", "indexes"}          -> {"opened": true}
//   {"fill": [selector, text]}, {"click": selector}              -> {"ok": true}
//   {"waitList": [selector, [path, ...]]}: once the list holds exactly those documents
//   {"waitText": [selector, text]}: once the element's text is that
//   {"waitContains": [selector, [text, ...]]}: once the element's text holds each
//       -> {"ok": true}, or after 30 s {"ok": false, "now": what it holds, "status", "errors"}
// Stops when stdin closes.
import { createInterface } from "node:readline";

import { openExamplePage } from "./example-page.mjs";

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const input = JSON.parse((await lines.next()).value);

const { page, errors, close } = await openExamplePage({
  json: { path: "/indexes.json", value: input.indexes },
  path: `/pulse.html?emulator=${input.host}&project=${input.project}&user=${input.user}`,
  args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
});
say({ opened: true });

for (;;) {
  const next = await lines.next();
  if (next.done) break;
  const command = JSON.parse(next.value);
  try {
    if (command.fill) {
      await page.fill(command.fill[0], command.fill[1]);
    } else if (command.click) {
      await page.waitForSelector(`${command.click}:not([disabled])`, { timeout: 30_000 });
      await page.click(command.click);
    } else if (command.waitList) {
      const [selector, expected] = command.waitList;
      await page.waitForFunction(
        ([selector, expected]) => {
          const paths = [...document.querySelectorAll(`${selector} li`)].map((li) => li.dataset.path);
          return paths.length === expected.length && paths.every((p, i) => p === expected[i]);
        },
        [selector, expected],
        { timeout: 30_000 },
      );
    } else if (command.waitContains) {
      const [selector, parts] = command.waitContains;
      await page.waitForFunction(
        ([selector, parts]) => {
          const text = document.querySelector(selector)?.textContent ?? "";
          return parts.every((part) => text.includes(part));
        },
        [selector, parts],
        { timeout: 30_000 },
      );
    } else if (command.waitText) {
      const [selector, expected] = command.waitText;
      await page.waitForFunction(
        ([selector, expected]) => document.querySelector(selector)?.textContent === expected,
        [selector, expected],
        { timeout: 30_000 },
      );
    }
    say({ ok: true });
  } catch (error) {
    const selector = command.waitList?.[0] ?? command.waitText?.[0] ?? command.waitContains?.[0] ?? "body";
    const now = command.waitList
      ? await page.$$eval(`${selector} li`, (items) => items.map((li) => li.dataset.path))
      : await page.textContent(selector).catch(() => null);
    const status = await page.textContent("#status");
    say({ ok: false, error: String(error).slice(0, 300), now, status, errors });
  }
}
await close();
process.exit(0);

function say(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}
