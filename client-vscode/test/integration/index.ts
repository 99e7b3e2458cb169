/**
 * Integration suite: runs inside a real VS Code extension host (code-server's, started by
 * test/e2e/run.mjs with --enable-smoke-test-driver), against the extension installed from the
 * built .vsix and the real server on the project's interpreter.
 *
 * Each step records pass / fail / skip (with its reason) in $PALLAS_E2E_DIR/results.json; a step
 * that needs a server feature that is not there is a skip naming that feature, never a pass.
 * Screenshots are asked of the driver through checkpoint files (it owns the browser).
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

const EXTENSION_ID = "pallas-lsp.pallas-lsp";
const E2E_DIR = process.env.PALLAS_E2E_DIR ?? "";
const WORKSPACE = process.env.PALLAS_E2E_WORKSPACE ?? "";

type Outcome = { step: string; status: "pass" | "fail" | "skip"; detail: string; seconds: number };
const outcomes: Outcome[] = [];

class Skip extends Error {}

function log(message: string): void {
  fs.appendFileSync(path.join(E2E_DIR, "test.log"), `${new Date().toISOString()} ${message}\n`);
}

/** `PALLAS_E2E_ONLY`: `|`-separated parts of step names to run (the first step, which starts the server, always runs). */
const ONLY = (process.env.PALLAS_E2E_ONLY ?? "").split("|").filter((part) => part !== "");

async function step(name: string, body: () => Promise<string | void>): Promise<void> {
  const started = Date.now();
  if (ONLY.length > 0 && outcomes.length > 0 && !ONLY.some((part) => name.includes(part))) {
    outcomes.push({ step: name, status: "skip", detail: "not selected (PALLAS_E2E_ONLY)", seconds: 0 });
    fs.writeFileSync(path.join(E2E_DIR, "results.json"), JSON.stringify(outcomes, null, 2));
    return;
  }
  log(`step ${name}: start`);
  let outcome: Outcome;
  try {
    const detail = (await body()) ?? "";
    outcome = { step: name, status: "pass", detail, seconds: (Date.now() - started) / 1000 };
  } catch (error) {
    const detail = error instanceof Error ? (error instanceof Skip ? error.message : `${error.message}\n${error.stack ?? ""}`) : String(error);
    outcome = { step: name, status: error instanceof Skip ? "skip" : "fail", detail, seconds: (Date.now() - started) / 1000 };
  }
  log(`step ${name}: ${outcome.status} ${outcome.detail}`);
  outcomes.push(outcome);
  fs.writeFileSync(path.join(E2E_DIR, "results.json"), JSON.stringify(outcomes, null, 2));
}

/**
 * How long a wait for a state may last at most: the driver's budget for the whole suite
 * (PALLAS_E2E_TIMEOUT_S, which it kills the suite after). A wait ends as soon as its state is
 * reached, so this bounds only a state that never comes; a fixed short bound failed steps on a
 * loaded machine (a Cancel button that took over 30 s to render at load 6 on 2 cores).
 */
const SUITE_MS = Number(process.env.PALLAS_E2E_TIMEOUT_S ?? 420) * 1000;

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Asks the driver (it owns the browser) to act on the window as it is now: take a screenshot,
 * click the Cancel button of the progress notification as a user would, or find a notification
 * with a given text and button; waits until it is done.
 */
type DriverAction = "screenshot" | "cancel-progress" | "find-notification" | "click-notification" | "accept-input" | "pick";

async function driver(name: string, action: DriverAction, details: Record<string, string> = {}): Promise<string> {
  if (action === "screenshot") await new Promise((resolve) => setTimeout(resolve, 1500)); // let the workbench paint
  const request = path.join(E2E_DIR, "checkpoints", `${name}.request`);
  const done = path.join(E2E_DIR, "checkpoints", `${name}.done`);
  fs.mkdirSync(path.dirname(request), { recursive: true });
  fs.writeFileSync(`${request}.tmp`, JSON.stringify({ action, ...details }));
  fs.renameSync(`${request}.tmp`, request); // the driver never reads half a request
  const answer = await waitFor(`the driver to ${action} (${name})`, () => (fs.existsSync(done) ? fs.readFileSync(done, "utf8") : undefined), SUITE_MS);
  if (answer.startsWith("error:")) throw new Error(`the driver could not ${action}: ${answer}`);
  return answer.replace(/^ok ?/, "");
}

const screenshot = async (name: string): Promise<void> => void (await driver(name, "screenshot"));

/**
 * Trace workers of the installed extension (bundled runner.py) that sleep in the kernel: only
 * slow_kernel.py's `time.sleep(600)` at import puts one there (an idle worker waits on its pipe).
 */
function sleepingTraceWorkers(): number[] {
  const extensions = path.join(E2E_DIR, "extensions");
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes(extensions) || !cmdline.includes("runner.py")) continue;
      const wchan = fs.readFileSync(`/proc/${entry}/wchan`, "utf8");
      if (wchan.includes("nanosleep")) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

function codeOf(diagnostic: vscode.Diagnostic): string | undefined {
  const code = diagnostic.code;
  return typeof code === "object" && code !== null ? String(code.value) : code === undefined ? undefined : String(code);
}

function pal001(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => codeOf(d) === "PAL001");
}

export async function run(): Promise<void> {
  assert.ok(E2E_DIR && WORKSPACE, "PALLAS_E2E_DIR and PALLAS_E2E_WORKSPACE must be set by the driver");
  if (process.env.PALLAS_E2E_MODE === "untrusted") {
    await untrusted();
  } else {
    await trusted();
  }
  const failed = outcomes.filter((o) => o.status === "fail");
  if (failed.length > 0) {
    throw new Error(`failed steps: ${failed.map((o) => o.step).join("; ")}`);
  }
}

type Api = {
  ready(): Promise<void>;
  status(): { text: string; tooltip: string; interpreter?: string; jax?: string | null; visible: boolean };
  report(): { title: string; stale: boolean; text: string } | undefined;
  openLocation(location: { uri: string; line: number; character: number; cell?: number; cellUri?: string }): Promise<vscode.TextEditor>;
};

async function startedExtension(): Promise<Api> {
  const extension = vscode.extensions.getExtension<Api>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not installed`);
  assert.ok(extension.extensionPath.startsWith(path.join(E2E_DIR, "extensions")), `expected the copy installed from the .vsix, got ${extension.extensionPath}`);
  const api = await extension.activate();
  await api.ready();
  return api;
}

/** Restricted mode: static diagnostics on the user's interpreter; nothing runs the workspace's code. */
async function missingInterpreter(): Promise<void> {
  await step("a missing interpreter is reported, with a button to pick one", async () => {
    const api = await startedExtension();
    const config = vscode.workspace.getConfiguration("pallas");
    const missing = "/nonexistent/bin/python";
    const expected = `pallas-lsp: the Python interpreter "${missing}" was not found. Pick an interpreter (Python 3.10 or newer) to start the server.`;
    await config.update("interpreter", missing, vscode.ConfigurationTarget.Global);
    try {
      const status = await waitFor("the status bar to show the problem", () => (api.status().text.startsWith("$(error)") ? api.status() : undefined), SUITE_MS);
      assert.equal(status.tooltip, expected);
      // Toasts stay hidden in this headless window; the notification center lists the same message.
      await vscode.commands.executeCommand("notifications.showList");
      await driver("missing-interpreter", "find-notification", { text: `"${missing}" was not found`, button: "Select Interpreter" });
      await vscode.commands.executeCommand("notifications.hideList");
    } finally {
      await config.update("interpreter", process.env.PALLAS_E2E_PYTHON_SETTING, vscode.ConfigurationTarget.Global);
    }
    await waitFor("the server to run again", () => (api.status().text.startsWith("$(check)") ? true : undefined), SUITE_MS);
    return expected;
  });
}

/** The extension's own output channel, as VS Code logs it (user/logs/.../output_logging_*). */
function outputLog(): string {
  const found: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith("pallas-lsp.log")) found.push(full);
    }
  };
  walk(path.join(E2E_DIR, "user", "logs"));
  return found.map((file) => fs.readFileSync(file, "utf8")).join("\n");
}

async function quiet(): Promise<void> {
  await step("restarts and routine cancels leave no error or info noise in the output", async () => {
    const log = await waitFor("the output channel's log", () => (outputLog().includes("[client] the server exited (code 0)") ? outputLog() : undefined), SUITE_MS);
    assert.ok(!log.includes("Server process exited with code"), "the language client's exit message is back");
    assert.ok(!log.includes("Cancel notification for unknown message id"), "pygls's routine cancel warning is shown");
    return `${log.split("\n").filter((l) => l.includes("the server exited")).length} clean exits logged`;
  });
}

async function untrusted(): Promise<void> {
  const badUri = vscode.Uri.file(path.join(WORKSPACE, "bad_kernel.py"));
  const goodUri = vscode.Uri.file(path.join(WORKSPACE, "good_kernel.py"));

  await step("untrusted: static diagnostics run, on the user's interpreter, not the workspace's", async () => {
    assert.equal(vscode.workspace.isTrusted, false, "the driver should have opened the workspace untrusted");
    await vscode.window.showTextDocument(badUri);
    const api = await startedExtension();
    const status = await waitFor("the server to run", () => (api.status().text.startsWith("$(check)") ? api.status() : undefined), SUITE_MS);
    const config = vscode.workspace.getConfiguration("pallas");
    assert.equal(config.get("kernelTrace.timeout"), 77, "the workspace's .vscode/settings.json should be read (its other settings apply)");
    assert.equal(status.interpreter, process.env.PALLAS_E2E_PYTHON_EXECUTABLE, "the workspace's ./tools/not-python must not be run");
    assert.match(status.tooltip, /untrusted: static diagnostics only/);
    const [diagnostic] = await waitFor("a PAL001 diagnostic", () => (pal001(badUri).length > 0 ? pal001(badUri) : undefined), SUITE_MS);
    assert.deepEqual([diagnostic.range.start.line, diagnostic.range.start.character], [13, 12]);
    return `${status.text} on ${status.interpreter}`;
  });

  await step("untrusted: no trace, from the command, the server command or a code lens", async () => {
    const editor = await vscode.window.showTextDocument(goodUri);
    const line = editor.document.getText().split("\n").findIndex((l) => l.startsWith("ordered_double = "));
    editor.selection = new vscode.Selection(line, 0, line, 0);
    const fromCommand = await Promise.resolve(vscode.commands.executeCommand("pallas.traceKernel")).catch((e: Error) => `error: ${e.message}`);
    assert.ok(fromCommand === undefined || String(fromCommand).startsWith("error:"), `Trace Kernel gave ${JSON.stringify(fromCommand)}`);
    const fromServerCommand = await Promise.resolve(vscode.commands.executeCommand("pallas.trace", goodUri.toString(), "ordered_double")).catch(() => undefined);
    assert.equal(fromServerCommand, undefined, "the server's pallas.trace must be refused");
    const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", goodUri, 10)) ?? [];
    assert.deepEqual(lenses.map((l) => l.command?.title).filter((t) => t === "Trace kernel"), []);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const traced = vscode.languages.getDiagnostics(goodUri).filter((d) => d.source === "pallas-trace");
    assert.deepEqual(traced.map((d) => d.message), [], "nothing may have been traced");
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label.startsWith("pallas-lsp trace: "));
    assert.deepEqual(tabs.map((t) => t.label), []);
    return `Trace Kernel: ${fromCommand === undefined ? "refused" : fromCommand}; pallas.trace refused; ${lenses.length} lenses, none to trace`;
  });
}

function tabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}

async function closeTabs(predicate: (tab: vscode.Tab) => boolean): Promise<void> {
  await vscode.window.tabGroups.close(tabs().filter(predicate));
}

async function trusted(): Promise<void> {
  const badUri = vscode.Uri.file(path.join(WORKSPACE, "bad_kernel.py"));
  const goodUri = vscode.Uri.file(path.join(WORKSPACE, "good_kernel.py"));
  const noArgsUri = vscode.Uri.file(path.join(WORKSPACE, "no_trace_comment.py"));
  let serverCommands: string[] = [];
  const config = () => vscode.workspace.getConfiguration("pallas");

  await step("extension installed from the .vsix starts the server", async () => {
    const extension = vscode.extensions.getExtension<Api>(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    assert.ok(extension.extensionPath.startsWith(path.join(E2E_DIR, "extensions")), `expected the copy installed from the .vsix, got ${extension.extensionPath}`);
    const document = await vscode.workspace.openTextDocument(badUri);
    await vscode.window.showTextDocument(document);
    const api = await extension.activate();
    await api.ready();
    const status = await waitFor("the status bar to show the server running", () => {
      const s = api.status();
      return s.text.startsWith("$(check)") ? s : undefined;
    }, SUITE_MS);
    assert.equal(status.text, `$(check) pallas-lsp · jax ${process.env.PALLAS_E2E_JAX_VERSION}`);
    assert.equal(status.visible, true);
    serverCommands = (await vscode.commands.getCommands(true)).filter((c) => c.startsWith("pallas."));
    return `${status.text}; interpreter ${status.interpreter}; commands: ${serverCommands.join(", ") || "none"}`;
  });

  await step("first start without a chosen interpreter: python3 from PATH without jax is a warning, with one Select Interpreter notification", async () => {
    const api = await startedExtension();
    await config().update("interpreter", undefined, vscode.ConfigurationTarget.Global);
    try {
      const status = await waitFor("the warning status", () => (api.status().text.startsWith("$(warning)") ? api.status() : undefined), SUITE_MS);
      assert.equal(status.text, "$(warning) pallas-lsp · no jax");
      assert.equal(status.jax, null);
      assert.notEqual(status.interpreter, process.env.PALLAS_E2E_PYTHON_EXECUTABLE, "python3 from PATH, not the jax interpreter");
      // Still checking, from the import statements: no false "not found" for the bare name.
      await waitFor("PAL001 from the server on python3", () => (pal001(badUri).length === 1 ? true : undefined), SUITE_MS);
      await vscode.commands.executeCommand("notifications.showList");
      const shown = await driver("no-jax", "find-notification", { text: "has no jax", button: "Select Interpreter" });
      await vscode.window.showTextDocument(badUri, { viewColumn: vscode.ViewColumn.One });
      await screenshot("first-start");
      // Once: a restart on the same interpreter does not say it again.
      await vscode.commands.executeCommand("pallas.restartServer");
      await api.ready();
      await waitFor("the warning status after the restart", () => (api.status().text.startsWith("$(warning)") ? true : undefined), SUITE_MS);
      const again = await driver("no-jax-again", "find-notification", { text: "has no jax", button: "Select Interpreter" });
      assert.equal(again, shown, "the notification about jax should be shown once");
      await vscode.commands.executeCommand("notifications.hideList");
      return `${status.text} on ${status.interpreter}; ${shown} notification(s)`;
    } finally {
      await config().update("interpreter", process.env.PALLAS_E2E_PYTHON_SETTING, vscode.ConfigurationTarget.Global);
      await waitFor("the server on the jax interpreter again", () => (api.status().text.startsWith("$(check)") ? true : undefined), SUITE_MS);
    }
  });

  await step("PAL001 diagnostic with its range and code", async () => {
    const [diagnostic] = await waitFor("a PAL001 diagnostic on bad_kernel.py", () => {
      const found = pal001(badUri);
      return found.length > 0 ? found : undefined;
    }, 90000);
    assert.equal(pal001(badUri).length, 1);
    assert.deepEqual(
      [diagnostic.range.start.line, diagnostic.range.start.character, diagnostic.range.end.line, diagnostic.range.end.character],
      [13, 12, 13, 59],
    );
    assert.equal(diagnostic.severity, vscode.DiagnosticSeverity.Error);
    assert.equal(diagnostic.source, "pallas-lsp");
    assert.ok(diagnostic.message.startsWith('JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"'), `message: ${diagnostic.message}`);
    const code = diagnostic.code as { value: string; target: vscode.Uri };
    // The page shipped inside the server package, as for pip users; not a checkout's file.
    assert.ok(code.target.path.endsWith("/pallas_lsp/rule_docs/PAL001-get-global-not-semaphore.md"), `code link: ${code.target}`);
    await vscode.commands.executeCommand("workbench.actions.view.problems");
    await screenshot("problems-panel");
    return `${diagnostic.range.start.line}:${diagnostic.range.start.character}-${diagnostic.range.end.line}:${diagnostic.range.end.character} ${diagnostic.message}`;
  });

  await step("the rule link and Show documentation for PAL001 open the rendered page", async () => {
    const diagnostic = pal001(badUri)[0];
    const target = (diagnostic.code as { target: vscode.Uri }).target;
    const isPage = (tab: vscode.Tab) => tab.label.includes("PAL001-get-global-not-semaphore");
    // The link in the Problems panel and the hover opens its target like this.
    await vscode.commands.executeCommand("vscode.open", target);
    const linked = await waitFor("the page from the link", () => tabs().find(isPage), SUITE_MS);
    assert.ok(linked.input instanceof vscode.TabInputCustom && linked.input.viewType === "vscode.markdown.preview.editor",
      `the link opened ${linked.label} as ${JSON.stringify(linked.input)}, not the Markdown preview`);
    await closeTabs(isPage);
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>("vscode.executeCodeActionProvider", badUri, diagnostic.range, vscode.CodeActionKind.QuickFix.value)) ?? [];
    const docs = actions.find((a) => a.title === "Show documentation for PAL001");
    assert.ok(docs?.command, `no Show documentation action: ${JSON.stringify(actions.map((a) => a.title))}`);
    await vscode.commands.executeCommand(docs.command.command, ...(docs.command.arguments ?? []));
    const preview = await waitFor("the Markdown preview of the page", () => tabs().find((t) => isPage(t) && !(t.input instanceof vscode.TabInputText)), SUITE_MS);
    assert.ok(!tabs().some((t) => isPage(t) && t.input instanceof vscode.TabInputText), "the page was opened as an editable text file");
    await closeTabs(isPage);
    return `link: ${linked.label}; Show documentation: ${preview.label}`;
  });

  /** PAL001 goes while `ignore` (however set) holds it, and comes back once `pallas.ignore` is cleared. */
  const ignoredThenBack = async (ignore: () => Promise<void>): Promise<void> => {
    try {
      await ignore();
      await waitFor("PAL001 to go once ignored", () => (pal001(badUri).length === 0 ? true : undefined), SUITE_MS);
    } finally {
      await config().update("ignore", undefined, vscode.ConfigurationTarget.Global);
    }
    await waitFor("PAL001 to come back", () => (pal001(badUri).length === 1 ? true : undefined), SUITE_MS);
  };

  await step("pallas.ignore reaches the server (workspace/configuration section pallas)", async () => {
    await ignoredThenBack(() => Promise.resolve(config().update("ignore", ["PAL001"], vscode.ConfigurationTarget.Global)));
    return "ignored, then reported again";
  });

  await step("an old pallasLsp.* setting moves to its pallas.* name and applies", async () => {
    await ignoredThenBack(async () => {
      await vscode.workspace.getConfiguration().update("pallasLsp.ignore", ["PAL001"], vscode.ConfigurationTarget.Global);
      await waitFor("the setting to move", () => {
        const moved = vscode.workspace.getConfiguration().inspect("pallas.ignore")?.globalValue;
        const old = vscode.workspace.getConfiguration().inspect("pallasLsp.ignore")?.globalValue;
        return JSON.stringify(moved) === '["PAL001"]' && old === undefined ? true : undefined;
      }, SUITE_MS);
    });
    return "pallasLsp.ignore → pallas.ignore";
  });

  await step("inlay hints are short and pallas.inlayHints.enable switches them", async () => {
    await vscode.commands.executeCommand("workbench.action.closePanel");
    await vscode.window.showTextDocument(badUri, { viewColumn: vscode.ViewColumn.One });
    const range = new vscode.Range(0, 0, 30, 0);
    const labels = async () =>
      ((await vscode.commands.executeCommand<vscode.InlayHint[]>("vscode.executeInlayHintProvider", badUri, range)) ?? []).map((h) =>
        typeof h.label === "string" ? h.label : h.label.map((p) => p.value).join(""),
      );
    const shown = await waitFor("the kernel parameters' hints", async () => ((await labels()).length === 2 ? labels() : undefined), SUITE_MS);
    assert.deepEqual(shown, [": gmem", ": f32[4,128] gmem"]);
    assert.ok(shown.every((l) => l.length <= 43), "VS Code cuts hints at 43 characters by default");
    await screenshot("inlay-hints");
    await config().update("inlayHints.enable", false, vscode.ConfigurationTarget.Global);
    try {
      await waitFor("no hints once switched off", async () => ((await labels()).length === 0 ? true : undefined), SUITE_MS);
    } finally {
      await config().update("inlayHints.enable", undefined, vscode.ConfigurationTarget.Global);
    }
    await waitFor("the hints back", async () => ((await labels()).length === 2 ? true : undefined), SUITE_MS);
    return shown.join(" / ");
  });

  await step("the quick-fix list has the fixes, Show documentation and Fix all; the preferred fix removes PAL001", async () => {
    const diagnostic = pal001(badUri)[0];
    assert.ok(diagnostic, "no PAL001 diagnostic to fix");
    const actions =
      (await vscode.commands.executeCommand<vscode.CodeAction[]>("vscode.executeCodeActionProvider", badUri, diagnostic.range, vscode.CodeActionKind.QuickFix.value)) ?? [];
    const titles = actions.map((a) => a.title);
    const ours = actions.filter((a) => a.title.startsWith("pallas-lsp (PAL001)"));
    assert.ok(ours.length > 0, `no quick fix for PAL001: ${JSON.stringify(titles)}`);
    for (const title of ["Show documentation for PAL001", "Fix all pallas-lsp problems"]) assert.ok(titles.includes(title), `${title} missing: ${JSON.stringify(titles)}`);
    const preferred = ours.find((a) => a.isPreferred);
    assert.ok(preferred, `no quick fix is marked preferred: ${JSON.stringify(ours.map((a) => a.title))}`);
    const editor = await vscode.window.showTextDocument(badUri);
    editor.selection = new vscode.Selection(diagnostic.range.start, diagnostic.range.start);
    await vscode.commands.executeCommand("editor.action.quickFix");
    await screenshot("quick-fix");
    await vscode.commands.executeCommand("hideCodeActionWidget");
    // As a user does it: the cursor on the diagnostic, then "Auto Fix" (applies the preferred fix).
    await vscode.commands.executeCommand("editor.action.autoFix");
    await waitFor("the PAL001 diagnostic to go after the fix", () => (pal001(badUri).length === 0 ? true : undefined), SUITE_MS);
    assert.ok(!editor.document.getText().includes("pl.get_global(plgpu.SMEM"), "the fixed text still calls get_global on SMEM");
    await editor.document.save();
    return `${titles.join(" | ")}; applied "${preferred.title}"`;
  });

  await step("a Jupyter notebook's cell gets PAL001, and its quick fix, made in the cells, clears it", async () => {
    const notebook = await vscode.workspace.openNotebookDocument(vscode.Uri.file(path.join(WORKSPACE, "kernel.ipynb")));
    await vscode.window.showNotebookDocument(notebook, { viewColumn: vscode.ViewColumn.One });
    const kernelCell = notebook.cellAt(3).document; // "cell 4": the kernel body; pl and plgpu come from cell 2
    const before = notebook.getCells().map((cell) => cell.document.getText());
    const [diagnostic] = await waitFor("a PAL001 diagnostic in the notebook's fourth cell", () => {
      const found = pal001(kernelCell.uri);
      return found.length > 0 ? found : undefined;
    }, 90000);
    assert.deepEqual(
      [diagnostic.range.start.line, diagnostic.range.start.character, diagnostic.range.end.line, diagnostic.range.end.character],
      [4, 9, 4, 55],
    );
    assert.deepEqual(notebook.getCells().map((cell) => pal001(cell.document.uri).length), [0, 0, 0, 1, 0, 0, 0, 0]);
    await screenshot("notebook-cell");
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>(
      "vscode.executeCodeActionProvider", kernelCell.uri, diagnostic.range, vscode.CodeActionKind.QuickFix.value, 10)) ?? [];
    const preferred = actions.find((a) => a.isPreferred && a.title.startsWith("pallas-lsp (PAL001)"));
    assert.ok(preferred, `no preferred quick fix: ${JSON.stringify(actions.map((a) => [a.title, a.isPreferred]))}`);
    // As a user does it: the cursor on the diagnostic in the cell's editor, then "Auto Fix".
    const editor = await vscode.window.showTextDocument(kernelCell);
    assert.equal(editor.document.uri.toString(), kernelCell.uri.toString());
    editor.selection = new vscode.Selection(diagnostic.range.start, diagnostic.range.start);
    await vscode.commands.executeCommand("editor.action.autoFix");
    await waitFor("PAL001 to go from the cell", () => (pal001(kernelCell.uri).length === 0 ? true : undefined), SUITE_MS);
    assert.ok(!kernelCell.getText().includes("pl.get_global"), kernelCell.getText());
    assert.ok(notebook.cellAt(4).document.getText().includes("# staging buffer\n        plgpu.SMEM((128,), jnp.float32),"),
      notebook.cellAt(4).document.getText()); // the tile allocated in the launch cell
    await screenshot("notebook-fixed");
    await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
    const edited = notebook.getCells().flatMap((cell, i) => (cell.document.getText() !== before[i] ? [`cell ${i + 1}`] : []));
    assert.deepEqual(edited, ["cell 2", "cell 4", "cell 5"]); // the pl import, the kernel body, its launch
    return `${preferred.title}: ${edited.join(", ")} edited`;
  });

  await step("pallas-lsp: Trace Kernel shows the resource report of a good kernel, marked stale after an edit", async () => {
    const api = await startedExtension();
    const document = await vscode.workspace.openTextDocument(goodUri);
    const editor = await vscode.window.showTextDocument(document, vscode.ViewColumn.One);
    const line = document.getText().split("\n").findIndex((l) => l.startsWith("ordered_double = "));
    editor.selection = new vscode.Selection(line, 0, line, 0);
    const result = await vscode.commands.executeCommand<{ report: { ok: boolean; title: string; kernels: Array<{ name: string; rows: Array<[string, string]> }> }; text: string }>(
      "pallas.traceKernel",
    );
    assert.ok(result, "the trace command gave no report");
    log(result.text);
    assert.equal(result.report.ok, true, result.text);
    const kernel = result.report.kernels[0];
    assert.equal(kernel.name, "ordered_halves");
    assert.deepEqual(Object.fromEntries(kernel.rows), {
      "Shared memory (SMEM)": "0 B",
      "Shared memory at launch (with barriers)": "0 B",
      Barriers: "0",
      "TMEM columns": "0",
      "TMEM columns (collective)": "0",
      "Global semaphores": "1",
    });
    const tab = await waitFor("the report tab", () => tabs().find((t) => t.label.startsWith("pallas-lsp trace: ")), SUITE_MS);
    // One place for the result: the report. No diagnostic on correct code.
    assert.deepEqual(vscode.languages.getDiagnostics(goodUri).map((d) => `${d.source} ${d.message}`), []);
    await screenshot("trace-report");
    await editor.edit((edit) => edit.insert(new vscode.Position(0, 0), "# edited\n"));
    const report = await waitFor("the report to be marked stale", () => (api.report()?.stale ? api.report() : undefined), SUITE_MS);
    assert.match(report.title, /\(stale\)$/);
    await editor.edit((edit) => edit.delete(new vscode.Range(0, 0, 1, 0))); // the file as it was, for the next steps
    await editor.document.save();
    return `${tab.label}: ${kernel.rows.map(([k, v]) => `${k} ${v}`).join(", ")}; after an edit: ${report.title}`;
  });

  await step("pallas-lsp: Trace Kernel with the cursor inside a kernel body traces the launch that runs it", async () => {
    const document = await vscode.workspace.openTextDocument(goodUri);
    const editor = await vscode.window.showTextDocument(document, vscode.ViewColumn.One);
    // `o_ref[0] = x_ref[0] * 2.0`, in a pl.when body nested in the kernel body ordered_halves.
    const line = document.getText().split("\n").findIndex((l) => l.includes("o_ref[0] = "));
    editor.selection = new vscode.Selection(line, 6, line, 6);
    type Result = { report: { ok: boolean; title: string; notes: string[]; kernels: Array<{ name: string }> }; text: string };
    const result = await vscode.commands.executeCommand<Result>("pallas.traceKernel");
    assert.ok(result, "the trace command gave no report");
    log(result.text);
    assert.equal(result.report.ok, true, result.text); // not "ordered_halves() missing 1 required positional argument"
    assert.equal(result.report.title, "pallas-lsp trace: ordered_double(f32[2,128])");
    assert.deepEqual(result.report.notes, [
      "ordered_halves (line 12) is a kernel body: traced through ordered_double (line 28), which is the kernel that runs it",
      "Platform cuda: the kernel is compiled for a GPU (cross-lowered where there is none)",
    ]);
    assert.deepEqual(result.report.kernels.map((k) => k.name), ["ordered_halves"]);
    assert.deepEqual(vscode.languages.getDiagnostics(goodUri).map((d) => `${d.source} ${d.message}`), [], "a correct kernel gets no diagnostic");
    return `cursor on line ${line + 1}: ${result.report.notes.join("; ")}`;
  });

  await step("a trace inside a body that two kernels run asks which one, and traces the one picked", async () => {
    const uri = vscode.Uri.file(path.join(WORKSPACE, "two_launches.py"));
    const editor = await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One });
    const line = editor.document.getText().split("\n").findIndex((l) => l.includes("o_ref[...] = "));
    editor.selection = new vscode.Selection(line, 4, line, 4);
    type Result = { report: { ok: boolean; title: string; notes: string[] }; text: string } | undefined;
    const pending = Promise.resolve(vscode.commands.executeCommand<Result>("pallas.traceKernel"));
    await vscode.commands.executeCommand("notifications.showList");
    await driver("which-launch", "click-notification", { text: "run by 2 launches", button: "blocks" });
    await vscode.commands.executeCommand("notifications.hideList");
    const result = await pending;
    assert.ok(result?.report.ok, `the trace of the launch picked: ${result?.text}`);
    assert.equal(result.report.title, "pallas-lsp trace: blocks(f32[128])");
    assert.equal(result.report.notes[0], "double (line 9) is a kernel body: traced through blocks (line 16), which is the kernel that runs it");
    return result.report.notes[0];
  });

  await step("the Trace kernel code lens runs the trace through the extension's command", async () => {
    const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", goodUri, 10)) ?? [];
    const lens = lenses.find((l) => l.command?.title === "Trace kernel");
    assert.ok(lens?.command, `no "Trace kernel" code lens: ${JSON.stringify(lenses.map((l) => l.command?.title))}`);
    assert.equal(lens.command.command, "pallas.traceKernel", "the lens should go through the extension's command (progress and report)");
    const result = await vscode.commands.executeCommand<{ report: { ok: boolean; kernels: Array<{ name: string }> }; text: string }>(
      lens.command.command,
      ...(lens.command.arguments ?? []),
    );
    assert.ok(result, "the lens gave no report");
    assert.equal(result.report.ok, true, result.text);
    assert.deepEqual(result.report.kernels.map((k) => k.name), ["ordered_halves"]);
    return `lens on line ${lens.range.start.line + 1}: ${result.text.split("\n")[1]}`;
  });

  await step("a notebook's Trace kernel lens asks for the arguments and reports JAX's error at the body's cell and line", async () => {
    const api = await startedExtension();
    const notebook = await vscode.workspace.openNotebookDocument(vscode.Uri.file(path.join(WORKSPACE, "traced.ipynb"))); // kernel.ipynb's copy
    await vscode.window.showNotebookDocument(notebook, { viewColumn: vscode.ViewColumn.One });
    const bodyCell = notebook.cellAt(3).document; // "cell 4": `tile = pl.get_global(plgpu.SMEM(...))` on its fifth line
    assert.ok(bodyCell.getText().includes("tile = pl.get_global("), bodyCell.getText());
    const launchCell = notebook.cellAt(4).document; // "cell 5": `kernel = plgpu.kernel(body, ...)`
    const lens = await waitFor("the Trace kernel lens on the launch's cell", async () => {
      const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", launchCell.uri, 10)) ?? [];
      return lenses.find((l) => l.command?.title.startsWith("Trace kernel"));
    }, 90000);
    assert.equal(lens.command?.title, "Trace kernel (arguments?)", "the cells through the launch's hold no trace comment or target()");
    assert.equal(lens.range.start.line, 0, "on the launch's line of its cell");
    type Result = { report: { ok: boolean; title: string; summary: string; messages: Array<{ locations: Array<{ uri: string; cell?: number; cellUri?: string; line: number; character: number }> }> }; text: string } | undefined;
    const pending = Promise.resolve(vscode.commands.executeCommand<Result>(lens.command!.command, ...(lens.command!.arguments ?? [])));
    const prefilled = await driver("notebook-trace-arguments", "accept-input");
    assert.equal(prefilled, "f32[128]", "prefilled from the notebook's ShapeDtypeStruct X (cell 4)");
    const result = await pending;
    assert.ok(result, "the lens gave no report");
    log(result.text);
    assert.equal(result.report.ok, false, result.text);
    assert.equal(result.report.title, "pallas-lsp trace: kernel(f32[128])");
    assert.equal(result.report.summary,
      "JAX rejected this kernel (lower for cuda): NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]}");
    const [where] = result.report.messages[0].locations;
    // Cell 4 as the notebook shows it (the server, sent the Python cells only, counts it as its third).
    assert.deepEqual(where, { uri: notebook.uri.toString(), cell: 4, cellUri: bodyCell.uri.toString(), line: 4, character: 9,
      why: "get_global(Ref<smem>{float32[128]})" });
    assert.ok(result.text.includes("\n  at traced.ipynb:cell 4:5 get_global(Ref<smem>{float32[128]})"), result.text);
    assert.equal(api.report()?.title, "pallas-lsp trace: kernel(f32[128])");
    // The cell shows JAX's error beside the static finding, on the same range.
    const traced = await waitFor("the trace's diagnostic in the body's cell", () => {
      const found = vscode.languages.getDiagnostics(bodyCell.uri).filter((d) => d.source === "pallas-trace");
      return found.length > 0 ? found : undefined;
    }, SUITE_MS);
    assert.deepEqual(
      vscode.languages.getDiagnostics(bodyCell.uri).map((d) => [d.source, codeOf(d), d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character]).sort(),
      [["pallas-lsp", "PAL001", 4, 9, 4, 55], ["pallas-trace", "NotImplementedError", 4, 9, 4, 55]],
    );
    assert.deepEqual(notebook.getCells().map((cell) => vscode.languages.getDiagnostics(cell.document.uri).filter((d) => d.source === "pallas-trace").length),
      [0, 0, 0, 1, 0, 0, 0, 0]);
    // The traced type of the body's scratch parameter on hover, naming the launch's cell as the notebook numbers it.
    const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>(
      "vscode.executeHoverProvider", bodyCell.uri, new vscode.Position(3, bodyCell.lineAt(3).text.indexOf("stage") + 1))) ?? [];
    const hover = hovers.flatMap((h) => h.contents.map((c) => (typeof c === "string" ? c : c.value))).join("\n");
    assert.equal(hover, "```python\nstage: Ref<smem>{float32[128]}\n```\n\ntraced by JAX (until the file changes)\n\n"
      + "- kernel scratch from `scratch_types[0]` of `plgpu.kernel` (cell 5, line 1)");
    // The report's location, clicked: the body's cell, at the get_global.
    const editor = await api.openLocation(where);
    assert.equal(editor.document.uri.toString(), bodyCell.uri.toString());
    assert.deepEqual([editor.selection.active.line, editor.selection.active.character], [4, 9]);
    assert.ok(editor.document.lineAt(4).text.includes("pl.get_global("), editor.document.lineAt(4).text);
    await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    return `prefilled "${prefilled}"; ${traced[0].message.split("\n")[0]} at traced.ipynb:cell 4:5`;
  });

  await step("a code lens above a Mosaic GPU launch shows its shared-memory estimate against the limit", async () => {
    const uri = vscode.Uri.file(path.join(WORKSPACE, "budget_kernel.py"));
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, vscode.ViewColumn.One);
    const launch = document.getText().split("\n").findIndex((l) => l.includes("return kernel(x)"));
    const budget = await waitFor("the budget lens", async () => {
      const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", uri, 10)) ?? [];
      return lenses.find((l) => l.command?.title.startsWith("SMEM "));
    }, SUITE_MS);
    assert.equal(budget.command?.title, "SMEM 196,608 / 232,448 B");
    assert.equal(budget.range.start.line, launch, "the lens sits on the launch");
    const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>(
      "vscode.executeHoverProvider", uri, new vscode.Position(launch, document.lineAt(launch).text.indexOf("kernel(") + 1))) ?? [];
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === "string" ? c : c.value))).join("\n");
    assert.ok(text.includes("**SMEM 196,608 / 232,448 B**"), text);
    return `${budget.command?.title} on line ${launch + 1}`;
  });

  await step("unknown arguments are asked for (prefilled), remembered, and written as a trace comment on request", async () => {
    const editor = await vscode.window.showTextDocument(noArgsUri, { viewColumn: vscode.ViewColumn.One });
    const line = editor.document.getText().split("\n").findIndex((l) => l.startsWith("ordered_double = "));
    editor.selection = new vscode.Selection(line, 0, line, 0);
    type Result = { report: { ok: boolean; title: string }; text: string } | undefined;
    const pending = Promise.resolve(vscode.commands.executeCommand<Result>("pallas.traceKernel"));
    const prefilled = await driver("trace-arguments", "accept-input");
    assert.equal(prefilled, "f32[2,128]", "prefilled from the module-level ShapeDtypeStruct X");
    const first = await pending;
    assert.ok(first?.report.ok, `the trace with the given arguments failed: ${first?.text}`);
    assert.equal(first.report.title, "pallas-lsp trace: ordered_double(f32[2,128])");
    assert.deepEqual(vscode.languages.getDiagnostics(noArgsUri).map((d) => `${d.source} ${d.message}`), [], "unknown arguments are not a problem of the code");
    // Remembered: the next trace asks nothing.
    const second = await Promise.race([
      Promise.resolve(vscode.commands.executeCommand<Result>("pallas.traceKernel")),
      new Promise<"asked again">((resolve) => setTimeout(() => resolve("asked again"), 90000)),
    ]);
    assert.ok(second !== "asked again" && second?.report.ok, `the second trace: ${JSON.stringify(second)}`);
    await vscode.commands.executeCommand("notifications.showList");
    await driver("write-trace-comment", "click-notification", { text: "# pallas-lsp: trace(f32[2,128])", button: "Write Comment" });
    await vscode.commands.executeCommand("notifications.hideList");
    const written = await waitFor("the trace comment in the file, saved", () => {
      const lines = editor.document.getText().split("\n");
      const there = lines[line] === "# pallas-lsp: trace(f32[2,128])" && lines[line + 1].startsWith("ordered_double = ");
      return there && !editor.document.isDirty ? lines[line] : undefined;
    }, SUITE_MS);
    assert.equal(fs.readFileSync(noArgsUri.fsPath, "utf8").split("\n")[line], written, "the comment is on disk");
    return `prefilled "${prefilled}"; second trace asked nothing; wrote "${written}"`;
  });

  await step("pallas-lsp: Select Interpreter, offered by the status item, writes pallas.interpreter and restarts the server on it", async () => {
    const api = await startedExtension();
    await vscode.window.showTextDocument(goodUri, { viewColumn: vscode.ViewColumn.One });
    const before = config().inspect<string>("interpreter");
    try {
      // The status item's menu offers it; the user takes it, then picks python3 (no jax there).
      const menu = Promise.resolve(vscode.commands.executeCommand("pallas.statusMenu"));
      const offered = await driver("status-menu", "pick", { text: "Select Interpreter", expect: "Restart Server" });
      assert.match(offered, /Select Interpreter \| .*Show Output \| .*Restart Server/);
      const listed = await driver("select-interpreter", "pick", { text: "python3", expect: "Browse…" });
      await menu;
      assert.match(listed, /python3.*from PATH \| Enter interpreter path… \| Browse…$/, "what the picker lists");
      assert.equal(config().inspect<string>("interpreter")?.workspaceValue, "python3", "a trusted workspace's own setting");
      const status = await waitFor("the server on python3", () => (api.status().text.startsWith("$(warning)") ? api.status() : undefined), SUITE_MS);
      return `listed: ${listed}; then ${status.text} on ${status.interpreter}`;
    } finally {
      await config().update("interpreter", before?.workspaceValue, vscode.ConfigurationTarget.Workspace);
      await waitFor("the server on the jax interpreter again", () => (api.status().text.startsWith("$(check)") ? true : undefined), SUITE_MS);
    }
  });

  await step("pallas-lsp: Restart Server brings a new server up", async () => {
    const api = await startedExtension();
    await vscode.commands.executeCommand("pallas.restartServer");
    await api.ready();
    const status = await waitFor("the restarted server to run", () => (api.status().text.startsWith("$(check)") ? api.status() : undefined), SUITE_MS);
    const lenses = await waitFor("the restarted server's code lenses", async () => {
      const found = (await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", goodUri, 10)) ?? [];
      return found.some((l) => l.command?.title === "Trace kernel") ? found : undefined;
    }, SUITE_MS);
    return `${status.text}; ${lenses.length} code lens(es) from the new server`;
  });

  await quiet();

  await step("the status item shows for Python files only, not in the settings JSON editor", async () => {
    const api = await startedExtension();
    await vscode.commands.executeCommand("workbench.action.openSettingsJson");
    await waitFor("the status item to hide", () => (api.status().visible === false ? true : undefined), SUITE_MS);
    assert.equal(vscode.window.activeTextEditor?.document.languageId, "jsonc");
    await vscode.window.showTextDocument(goodUri, { viewColumn: vscode.ViewColumn.One });
    await waitFor("the status item to show again", () => (api.status().visible ? true : undefined), SUITE_MS);
    await closeTabs((t) => t.label === "settings.json");
    return "hidden in settings.json, shown in good_kernel.py";
  });

  await step("cancelling a trace from its progress notification stops it", async () => {
    const slowUri = vscode.Uri.file(path.join(WORKSPACE, "slow_kernel.py"));
    const editor = await vscode.window.showTextDocument(slowUri, { viewColumn: vscode.ViewColumn.One });
    const line = editor.document.getText().split("\n").findIndex((l) => l.startsWith("slow_copy = "));
    editor.selection = new vscode.Selection(line, 0, line, 0);
    const started = Date.now();
    const pending = Promise.resolve(vscode.commands.executeCommand("pallas.traceKernel"));
    let ended: { value: unknown } | undefined;
    void pending.then((value) => (ended = { value }), (error) => (ended = { value: error }));
    const sleeping = await waitFor("the trace worker to be importing slow_kernel.py (asleep)", () => {
      const pids = sleepingTraceWorkers();
      return pids.length > 0 ? pids : undefined;
    }, SUITE_MS);
    // Toasts stay hidden in this headless window; the notification center lists the same progress.
    // The driver waits for the progress item and its Cancel button to be there, then clicks it.
    await vscode.commands.executeCommand("notifications.showList");
    await driver("cancel-trace", "cancel-progress");
    const cancelledAt = Date.now();
    const result = await waitFor("the trace command to end once cancelled", () => ended, SUITE_MS);
    assert.equal(result.value, undefined, "the trace command should end without a report once cancelled");
    await waitFor(`the sleeping trace worker ${sleeping.join(", ")} to be stopped`, () => (sleepingTraceWorkers().some((p) => sleeping.includes(p)) ? undefined : true), SUITE_MS);
    return `cancelled after ${((cancelledAt - started) / 1000).toFixed(1)} s while worker ${sleeping.join(", ")} slept in the module's import; the command ended and the worker was stopped ${((Date.now() - cancelledAt) / 1000).toFixed(1)} s later`;
  });

  await missingInterpreter();
}
