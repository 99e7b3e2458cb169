import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { LEGACY_SETTINGS } from "../../src/settings";

// Run from client-vscode/ (npm test); the manifest is what VS Code shows the user.
const manifest = JSON.parse(fs.readFileSync(path.resolve("package.json"), "utf8"));
const properties: Record<string, { markdownDeprecationMessage?: string }> = manifest.contributes.configuration.properties;

test("one product name and one settings namespace, as ruff's extension", () => {
  assert.equal(manifest.displayName, "pallas-lsp");
  assert.equal(manifest.contributes.configuration.title, "pallas-lsp");
  const live = Object.keys(properties).filter((key) => properties[key].markdownDeprecationMessage === undefined);
  assert.deepEqual(live.filter((key) => !key.startsWith("pallas.")), []);
  for (const key of ["pallas.enable", "pallas.inlayHints.enable", "pallas.showNotifications", "pallas.docsUrl"]) assert.ok(live.includes(key), key);
  // `pallas.trace.server` is the language client's LSP log; kernel tracing has its own prefix.
  assert.deepEqual(live.filter((key) => key.startsWith("pallas.trace.")), ["pallas.trace.server"]);
  assert.deepEqual(manifest.contributes.commands.map((c: { command: string; title: string; category: string }) => [c.command, `${c.category}: ${c.title}`]), [
    ["pallas.traceKernel", "pallas-lsp: Trace Kernel"],
    ["pallas.selectInterpreter", "pallas-lsp: Select Interpreter"],
    ["pallas.restartServer", "pallas-lsp: Restart Server"],
    ["pallas.showOutput", "pallas-lsp: Show Output"],
  ]);
});

test("every old pallasLsp.* setting is still declared, deprecated, pointing at its new name", () => {
  for (const [old, now] of Object.entries(LEGACY_SETTINGS)) {
    assert.ok(properties[now], now);
    assert.match(properties[old]?.markdownDeprecationMessage ?? "", new RegExp(`Renamed to \`${now.replace(/\./g, "\\.")}\``));
  }
});

test("Trace Kernel is in the editor's context menu only where a kernel is, and not at its top", () => {
  const [entry] = manifest.contributes.menus["editor/context"];
  assert.equal(entry.command, "pallas.traceKernel");
  assert.match(entry.when, /pallas\.kernelInEditor/);
  assert.ok(!entry.group.startsWith("navigation"), entry.group);
});
