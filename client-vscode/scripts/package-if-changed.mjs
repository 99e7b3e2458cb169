// Builds dist/pallas-lsp.vsix (`npm run package`) unless it was built from exactly the current
// sources: the extension's sources, manifest and launcher, and the server and rule pages it bundles.
import { createHash } from "node:crypto";
import { execSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const extension = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const repo = path.dirname(extension);
const inputs = [
  "client-vscode/src",
  "client-vscode/bundled/tool",
  "client-vscode/scripts",
  "client-vscode/package.json",
  "client-vscode/esbuild.mjs",
  "client-vscode/.vscodeignore",
  "client-vscode/README.md",
  "server",
  "docs/rules",
  "pyproject.toml",
  "setup.py",
  "MANIFEST.in",
  "package-lock.json",
];
const vsix = path.join(extension, "dist", "pallas-lsp.vsix");
const stamp = path.join(extension, "dist", ".package-stamp");

function files(entry) {
  const full = path.join(repo, entry);
  if (!fs.existsSync(full)) return [];
  if (fs.statSync(full).isFile()) return [entry];
  return fs
    .readdirSync(full, { withFileTypes: true })
    // Build leftovers (the bundling's own wheel build writes server/*.egg-info) are not sources.
    .filter((d) => d.name !== "__pycache__" && !d.name.endsWith(".pyc") && !d.name.endsWith(".egg-info"))
    .flatMap((d) => files(path.join(entry, d.name)));
}

const digest = createHash("sha256");
for (const file of inputs.flatMap(files).sort()) {
  digest.update(file);
  digest.update(fs.readFileSync(path.join(repo, file)));
}
const fingerprint = digest.digest("hex");
if (fs.existsSync(vsix) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === fingerprint) {
  console.log(`package: ${path.relative(repo, vsix)} is up to date`);
} else {
  execSync("npm run package", { cwd: extension, stdio: "inherit" });
  fs.writeFileSync(stamp, fingerprint);
}
