// Opens the example page in headless Chromium (Debian's `chromium`, driven by playwright-core;
// nothing downloads a browser) for the Rust test suite, and answers its commands, one JSON
// line each on stdin, with one JSON line on stdout:
//   first line: {"host", "project", "description", "limit"}    -> {"opened": true}
//   {"waitFor": [path, ...]}  -> {"ok": true} once the page lists exactly those documents in
//                                that order, or {"ok": false, "paths", "status"} after 30 s
// Stops when stdin closes.
import { createReadStream, existsSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

const root = fileURLToPath(new URL("../example/", import.meta.url));
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const input = JSON.parse((await lines.next()).value);

const types = { ".html": "text/html", ".js": "text/javascript", ".json": "application/json" };
const server = createServer((request, response) => {
  const path = new URL(request.url, "http://localhost").pathname;
  if (path === "/description.json") {
    response.writeHead(200, { "content-type": types[".json"] });
    response.end(JSON.stringify(input.description));
    return;
  }
  const file = normalize(join(root, path === "/" ? "index.html" : path));
  if (!file.startsWith(root) || !existsSync(file)) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
  createReadStream(file).pipe(response);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address();

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
const page = await browser.newPage();
const errors = [];
page.on("pageerror", (error) => errors.push(String(error)));
await page.goto(
  `http://127.0.0.1:${port}/index.html?emulator=${input.host}&project=${input.project}&limit=${input.limit}`,
);
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
await browser.close();
server.close();
process.exit(0);

function say(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}
