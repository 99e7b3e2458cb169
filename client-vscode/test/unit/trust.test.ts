import { test } from "node:test";
import * as assert from "node:assert/strict";
import { features, refuseServerCommand, routeLensCommand, shownText, TRACE_COMMAND, UNTRUSTED_TRACE_MESSAGE } from "../../src/trust";

test("trusted: everything on", () => {
  assert.deepEqual(features(true), { staticDiagnostics: true, trace: true, traceCodeLens: true, workspaceInterpreterSetting: true });
});

test("untrusted: static diagnostics only", () => {
  assert.deepEqual(features(false), { staticDiagnostics: true, trace: false, traceCodeLens: false, workspaceInterpreterSetting: false });
});

test("the trace server command is refused in an untrusted workspace, other commands pass", () => {
  assert.equal(refuseServerCommand("pallas.trace", false), UNTRUSTED_TRACE_MESSAGE);
  assert.equal(refuseServerCommand("pallas.trace", true), undefined);
  assert.equal(refuseServerCommand("pallas.applyFix", false), undefined);
});

test("the server's trace lens goes through the extension's command (progress, report), same arguments", () => {
  const lens = { title: "Trace kernel", command: "pallas.trace", arguments: ["file:///k.py", { line: 3, character: 0 }] };
  assert.deepEqual(routeLensCommand(lens, true), {
    title: "Trace kernel",
    command: TRACE_COMMAND,
    arguments: [{ serverArguments: ["file:///k.py", { line: 3, character: 0 }] }],
  });
});

test("untrusted: the trace lens is dropped; other lenses are kept as they are", () => {
  assert.equal(routeLensCommand({ title: "Trace kernel", command: "pallas.trace" }, false), null);
  const other = { title: "Show references", command: "editor.action.showReferences" };
  assert.equal(routeLensCommand(other, false), other);
  assert.equal(routeLensCommand(undefined, false), undefined);
});

test("a notification's text never holds a link VS Code would render, nor control characters", () => {
  // VS Code's own pattern for links in notification text (src/vs/base/common/linkedText.ts).
  const link = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
  const python = "/x/[Open a terminal](command:workbench.action.terminal.new?%5B%5D)/python\u001b[2J";
  const shown = shownText(`pallas-lsp: ${python} is not a Python interpreter`);
  assert.equal(link.test(shown), false);
  assert.equal(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(shown), false);
  assert.ok(shown.includes("[Open a terminal] (command:workbench.action.terminal.new?%5B%5D)"));
});
