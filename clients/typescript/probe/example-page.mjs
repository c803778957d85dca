// What the browser probes share: the example folder (`example/`) served on a local port, one
// JSON document served beside it, and one of its pages open in headless Chromium (Debian's
// `chromium`, driven by playwright-core; nothing downloads a browser).
import { createReadStream, existsSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

const root = fileURLToPath(new URL("../example/", import.meta.url));
const types = { ".html": "text/html", ".js": "text/javascript", ".json": "application/json" };

/**
 * Serves `example/` with `json.value` at `json.path`, and opens `path` (with its query) in
 * Chromium started with `args`. Returns the page, the errors it throws (collected as they
 * come), and how to close it all.
 */
export async function openExamplePage({ json, path, args }) {
  const server = createServer((request, response) => {
    const asked = new URL(request.url, "http://localhost").pathname;
    if (asked === json.path) {
      response.writeHead(200, { "content-type": types[".json"] });
      response.end(JSON.stringify(json.value));
      return;
    }
    const file = normalize(join(root, asked === "/" ? "index.html" : asked));
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
    args,
  });
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(`http://127.0.0.1:${port}${path}`);
  const close = async () => {
    await browser.close();
    server.close();
  };
  return { page, errors, close };
}
