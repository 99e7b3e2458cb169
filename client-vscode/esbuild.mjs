// Bundles the extension (one CommonJS file; `vscode` is provided by the editor) and, with --tests,
// the unit tests (run by node's test runner) and the integration suite (run inside VS Code).
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const tests = process.argv.includes("--tests");
const common = { bundle: true, platform: "node", format: "cjs", target: "node20", sourcemap: true, logLevel: "warning" };

await esbuild.build({ ...common, entryPoints: ["src/extension.ts"], outfile: "dist/extension.js", external: ["vscode"] });

if (tests) {
  const unit = readdirSync("test/unit").filter((f) => f.endsWith(".test.ts")).map((f) => `test/unit/${f}`);
  await esbuild.build({ ...common, entryPoints: unit, outdir: "out/unit", external: ["vscode"] });
  await esbuild.build({ ...common, entryPoints: ["test/integration/index.ts"], outfile: "out/integration/index.js", external: ["vscode"] });
}
