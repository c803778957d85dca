// Builds dist/ wherever npm prepares the package: `npm pack` (and so a registry install), a
// git dependency, and a folder dependency. npm installs the devDependencies before `prepare`
// for the first two, but not for a folder, which it links: there the folder's own
// devDependencies are installed first, from its lock file.
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url));
const run = (command) => execSync(command, { cwd: here, stdio: "inherit" });
if (!existsSync(`${here}/node_modules/typescript/package.json`)) {
  run("npm ci --no-audit --no-fund --ignore-scripts --loglevel=error");
}
run("npm run build");
