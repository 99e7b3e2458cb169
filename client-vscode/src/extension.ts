/**
 * The VS Code side of pallas-lsp: starts the bundled server on the user's interpreter, keeps it in
 * step with settings, the Python extension and workspace trust, and shows trace reports. The
 * decisions live in interpreter.ts, settings.ts, trust.ts and traceReport.ts (unit-tested);
 * this file wires them to VS Code.
 */
import { execFile, spawn } from "node:child_process";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  State,
  WorkDoneProgress,
  type ServerOptions as ClientServerOptions,
} from "vscode-languageclient/node";
import * as fs from "node:fs";
import {
  chooseInterpreter,
  interpreterCandidates,
  interpreterSettingTarget,
  judgeProbe,
  noJaxMessage,
  PROBE_SCRIPT,
  type InterpreterCandidate,
  type InterpreterChoice,
  type InterpreterFacts,
} from "./interpreter";
import {
  changeNeedsRestart,
  planMigration,
  readSettings,
  serverLaunch,
  shouldNotify,
  toServerOptions,
  traceArguments,
  type ExtensionSettings,
  type ServerOptions,
} from "./settings";
import { features, refuseServerCommand, routeLensCommand, shownText, TRACE_COMMAND, UNTRUSTED_TRACE_MESSAGE } from "./trust";
import { normalizeTrace, renderReportHtml, renderReportText, type SourceLocation, type TraceReport } from "./traceReport";

/** One product name (what the user reads) and one namespace (settings, commands, code action kinds), as ruff's. */
const PRODUCT = "pallas-lsp";
const SECTION = "pallas";
const SERVER_SECTION = "pallas";
/** The language client's id: its LSP message log is the `pallas.trace.server` setting. */
const CLIENT_ID = "pallas";
const SERVER_TRACE_COMMAND = "pallas.trace";
const SERVER_RULE_DOCS_COMMAND = "pallas.openRuleDocs";
const KERNEL_CONTEXT = "pallas.kernelInEditor";
const PICK_INTERPRETER = "Select Interpreter";
const SELECT_INTERPRETER_COMMAND = "pallas.selectInterpreter";
/** The status item's menu (not in the Command Palette): Select Interpreter, Show Output, Restart Server. */
const STATUS_MENU_COMMAND = "pallas.statusMenu";
const TRACE_ARGS_KEY = "pallas.traceArguments";
const WRITE_COMMENT = "Write Comment";

/** What `activate` returns: enough for the integration tests to wait for the server. */
export interface PallasApi {
  ready(): Promise<void>;
  status(): { text: string; tooltip: string; interpreter?: string; jax?: string | null; visible: boolean };
  /** The trace report open now: its title and whether an edit made it stale. */
  report(): { title: string; stale: boolean; text: string } | undefined;
  /** What a click on a location of the report opens (a notebook's: its cell's editor); the editor it shows. */
  openLocation(location: SourceLocation): Promise<vscode.TextEditor>;
}

type PythonApi = {
  environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
};

class PallasExtension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: InterpreterChoice | undefined;
  private facts: InterpreterFacts | undefined;
  private python: PythonApi | undefined;
  private readonly output = vscode.window.createOutputChannel(PRODUCT);
  private readonly statusItem = vscode.window.createStatusBarItem("pallas.status", vscode.StatusBarAlignment.Left, 50);
  private statusVisible = false;
  private server: ReturnType<typeof spawn> | undefined;
  /** Server processes being stopped: their exit is expected, whatever its code. */
  private readonly stopping = new WeakSet<object>();
  private readonly kernelDocuments = new Map<string, boolean>();
  private report: { report: TraceReport; uri: string; stale: boolean } | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private chain: Promise<void> = Promise.resolve();
  private started: Promise<void> = Promise.resolve();
  private reportPanel: vscode.WebviewPanel | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.statusItem.name = PRODUCT;
    this.statusItem.command = STATUS_MENU_COMMAND;
    this.setStatus("$(sync~spin) pallas-lsp", "pallas-lsp: starting");
    this.updateStatusVisibility(vscode.window.activeTextEditor);
  }

  /** Shown for Python files only (not, say, in the settings JSON editor), as the Python tools do. */
  private updateStatusVisibility(editor: vscode.TextEditor | undefined): void {
    if (editor === undefined) return; // a panel or a webview has focus: keep what the last editor chose
    this.statusVisible = editor.document.languageId === "python";
    if (this.statusVisible) this.statusItem.show();
    else this.statusItem.hide();
    const kernel = this.kernelDocuments.get(editor.document.uri.toString()) ?? false;
    void vscode.commands.executeCommand("setContext", KERNEL_CONTEXT, kernel);
  }

  async activate(): Promise<void> {
    this.disposables.push(
      this.output,
      this.statusItem,
      vscode.commands.registerCommand(TRACE_COMMAND, (arg?: unknown) => this.traceKernel(arg)),
      vscode.commands.registerCommand(SELECT_INTERPRETER_COMMAND, () => this.pickInterpreter()),
      vscode.commands.registerCommand(STATUS_MENU_COMMAND, () => this.statusMenu()),
      vscode.commands.registerCommand("pallas.restartServer", () => this.restart("restart requested")),
      vscode.commands.registerCommand("pallas.showOutput", () => this.output.show(true)),
      vscode.workspace.onDidChangeConfiguration((event) => this.onConfigurationChanged(event)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.restart("workspace trusted")),
      vscode.window.onDidChangeActiveTextEditor((editor) => this.updateStatusVisibility(editor)),
      vscode.workspace.onDidChangeTextDocument((event) => this.markReportStale(event.document)),
    );
    await this.migrateSettings();
    this.python = await loadPythonExtension(this.output);
    if (this.python !== undefined) {
      this.disposables.push(
        this.python.environments.onDidChangeActiveEnvironmentPath(() => {
          if (this.interpreter?.source !== "setting") {
            void this.restart("the Python extension's interpreter changed");
          }
        }),
      );
    }
    await this.restart("activation");
  }

  ready(): Promise<void> {
    return this.chain.then(() => this.started);
  }

  /** Restarts are queued so that settings changes in a burst never run two servers at once. */
  restart(reason: string): Promise<void> {
    this.chain = this.chain.then(() => this.doRestart(reason)).catch((error) => {
      this.output.appendLine(`[client] restart failed: ${String(error)}`);
    });
    return this.chain;
  }

  private settings(scope?: vscode.Uri): ExtensionSettings {
    const resource = scope ?? vscode.workspace.workspaceFolders?.[0]?.uri ?? null;
    return readSettings((key) => vscode.workspace.getConfiguration(SECTION, resource).get(key));
  }

  private notify(severity: "error" | "warning" | "info", message: string, ...buttons: string[]): Thenable<string | undefined> {
    this.output.appendLine(`[client] ${message}`);
    if (!shouldNotify(severity, this.settings().showNotifications)) return Promise.resolve(undefined);
    const show = { error: vscode.window.showErrorMessage, warning: vscode.window.showWarningMessage, info: vscode.window.showInformationMessage }[severity];
    return show(shownText(message), ...buttons);
  }

  /** `pallasLsp.*` of the first releases move to `pallas.*` (user settings; workspace ones when trusted). */
  private async migrateSettings(): Promise<void> {
    const config = vscode.workspace.getConfiguration();
    const moves = planMigration((key) => config.inspect(key), vscode.workspace.isTrusted);
    if (moves.length === 0) return;
    const targets = {
      global: vscode.ConfigurationTarget.Global,
      workspace: vscode.ConfigurationTarget.Workspace,
      workspaceFolder: vscode.ConfigurationTarget.WorkspaceFolder,
    };
    for (const move of moves) {
      try {
        if (move.value !== undefined) await config.update(move.to, move.value, targets[move.target]);
        await config.update(move.from, undefined, targets[move.target]);
      } catch (error) {
        this.output.appendLine(`[client] could not move ${move.from} to ${move.to}: ${String(error)}`);
      }
    }
    const names = [...new Set(moves.map((m) => `${m.from} → ${m.to}`))].join(", ");
    void this.notify("info", `pallas-lsp: settings renamed (${names}).`);
  }

  private async doRestart(reason: string): Promise<void> {
    this.output.appendLine(`[client] starting the server (${reason})`);
    this.setStatus("$(sync~spin) pallas-lsp", `pallas-lsp: starting (${reason})`);
    await this.stop();
    const trusted = vscode.workspace.isTrusted;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    if (!this.settings(folder?.uri).enable) {
      this.setStatus("$(circle-slash) pallas-lsp", "pallas-lsp is off (pallas.enable)");
      this.output.appendLine("[client] pallas.enable is false: not starting the server");
      return;
    }
    const choice = chooseInterpreter({
      setting: config.inspect<string>("interpreter") ?? {},
      trusted,
      pythonExtensionPath: this.python?.environments.getActiveEnvironmentPath(folder?.uri)?.path,
      workspaceFolder: folder?.uri.fsPath,
    });
    if (choice.ignoredWorkspaceValue !== undefined) {
      this.output.appendLine(`[client] untrusted workspace: ignoring its pallas.interpreter "${choice.ignoredWorkspaceValue}"`);
    }
    this.interpreter = choice;
    this.facts = undefined;
    const verdict = judgeProbe(choice.path, await probe(choice.path));
    if (!verdict.ok) {
      this.setStatus("$(error) pallas-lsp", verdict.message, "error");
      void this.notify("error", verdict.message, PICK_INTERPRETER, "Show Output").then((answer) => {
        if (answer === PICK_INTERPRETER) void this.pickInterpreter();
        if (answer === "Show Output") this.output.show(true);
      });
      return;
    }
    this.facts = verdict.facts;
    this.output.appendLine(
      `[client] interpreter ${verdict.facts.executable} (Python ${verdict.facts.version.join(".")}, from ${choice.source}); ` +
        `jax ${verdict.facts.jax ?? "not installed"}; workspace ${trusted ? "trusted" : "untrusted: static diagnostics only"}`,
    );
    const launch = serverLaunch(choice.path, this.context.extensionPath, process.env);
    // The process is the extension's, not the language client's: the client logs every exit of a
    // process it owns as an error ("Server process exited with code 0"), a restart included.
    const serverOptions: ClientServerOptions = async () => {
      const child = spawn(launch.command, launch.args, { env: launch.env, cwd: folder?.uri.fsPath, stdio: ["pipe", "pipe", "pipe"] });
      this.server = child;
      child.stderr?.on("data", (data: Buffer) => this.output.append(data.toString()));
      child.on("error", (error) => this.output.appendLine(`[client] the server could not be started: ${error.message}`));
      child.on("exit", (code, signal) => {
        const how = signal !== null ? `signal ${signal}` : `code ${code}`;
        const expected = this.stopping.has(child) || code === 0;
        this.output.appendLine(expected ? `[client] the server exited (${how})` : `[client] the server stopped unexpectedly (${how})`);
        if (this.server === child) this.server = undefined;
      });
      return { reader: child.stdout!, writer: child.stdin! };
    };
    const client = new LanguageClient(CLIENT_ID, PRODUCT, serverOptions, this.clientOptions(choice.path));
    this.client = client;
    client.onDidChangeState((event) => {
      if (client !== this.client) return;
      if (event.newState === State.Running) this.showRunning();
      else if (event.newState === State.Stopped) this.setStatus("$(circle-slash) pallas-lsp", "pallas-lsp: the server stopped. Click for its output.", "error");
    });
    this.started = client.start().catch((error) => {
      this.output.appendLine(`[client] the server did not start: ${String(error)}`);
      this.setStatus("$(error) pallas-lsp", `pallas-lsp: the server did not start (${String(error)})`, "error");
    });
    await this.started;
    if (client === this.client && client.isRunning() && verdict.facts.jax === null) await this.warnNoJax(verdict.facts);
  }

  /** Once per interpreter: the environment has no jax (the status bar keeps saying so). */
  private async warnNoJax(facts: InterpreterFacts): Promise<void> {
    const key = `pallas.noJaxWarned:${facts.executable}`;
    if (this.context.globalState.get<boolean>(key)) return;
    await this.context.globalState.update(key, true);
    void this.notify("warning", noJaxMessage(facts), PICK_INTERPRETER).then((answer) => {
      if (answer === PICK_INTERPRETER) void this.pickInterpreter();
    });
  }

  private clientOptions(interpreter: string): LanguageClientOptions {
    const options = (scope?: vscode.Uri): ServerOptions => toServerOptions(this.settings(scope), interpreter, vscode.workspace.isTrusted);
    return {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
        // Jupyter notebooks: their Python cells, synced to the server as one notebook document
        // (LSP 3.17; the server advertises notebookDocumentSync for jupyter-notebook), as ruff's extension does.
        { scheme: "vscode-notebook", language: "python" },
        { scheme: "vscode-notebook-cell", language: "python" },
      ],
      outputChannel: this.output,
      initializationOptions: options(vscode.workspace.workspaceFolders?.[0]?.uri),
      middleware: {
        workspace: {
          // The server asks for section `pallas`; it is computed from the `pallas.*` settings for that scope.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) return answers;
            return params.items.map((item, index) =>
              item.section === SERVER_SECTION ? options(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : answers[index],
            );
          },
        },
        provideCodeLenses: async (document, token, next) => {
          const lenses = (await next(document, token)) ?? [];
          // The editor's context menu offers Trace Kernel only where a kernel is.
          const kernel = lenses.some((lens) => lens.command?.command === SERVER_TRACE_COMMAND);
          this.kernelDocuments.set(document.uri.toString(), kernel);
          if (vscode.window.activeTextEditor?.document === document) {
            void vscode.commands.executeCommand("setContext", KERNEL_CONTEXT, kernel);
          }
          return this.routeLenses(lenses);
        },
        resolveCodeLens: async (lens, token, next) => {
          const resolved = await next(lens, token);
          return resolved ? (this.routeLenses([resolved])[0] ?? resolved) : resolved;
        },
        executeCommand: async (command, args, next) => {
          const refusal = refuseServerCommand(command, vscode.workspace.isTrusted);
          if (refusal !== undefined) {
            void vscode.window.showWarningMessage(refusal);
            return undefined;
          }
          if (command === SERVER_RULE_DOCS_COMMAND && typeof args[0] === "string") {
            return this.openRuleDocs(args[0]); // rendered here, not opened as a text file
          }
          return next(command, args);
        },
      },
    };
  }

  private routeLenses(lenses: vscode.CodeLens[]): vscode.CodeLens[] {
    const trusted = features(vscode.workspace.isTrusted).traceCodeLens;
    const routed: vscode.CodeLens[] = [];
    for (const lens of lenses) {
      const command = routeLensCommand(lens.command, trusted);
      if (command === null) continue;
      lens.command = command;
      routed.push(lens);
    }
    return routed;
  }

  /**
   * A rule's page: a web page (the `pallas.docsUrl` setting) in the browser; the page shipped with
   * the server rendered in Markdown preview (never as an editable text file).
   */
  async openRuleDocs(href: string): Promise<void> {
    const uri = vscode.Uri.parse(href);
    if (uri.scheme === "http" || uri.scheme === "https") {
      await vscode.env.openExternal(uri);
      return;
    }
    await vscode.commands.executeCommand("markdown.showPreview", uri);
  }

  private onConfigurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (event.affectsConfiguration("pallasLsp")) void this.migrateSettings();
    if (!event.affectsConfiguration(SECTION)) return;
    const settings = this.settings();
    if (this.client === undefined || changeNeedsRestart((key) => event.affectsConfiguration(`${SECTION}.${key}`), settings)) {
      void this.restart("settings changed");
      return;
    }
    // The server asks for section `pallas` again (workspace/configuration), answered by the middleware.
    const options = toServerOptions(settings, this.interpreter?.path ?? "python3", vscode.workspace.isTrusted);
    void this.client.sendNotification("workspace/didChangeConfiguration", { settings: { [SERVER_SECTION]: options } });
  }

  /**
   * `pallas-lsp: Select Interpreter`: picks the interpreter and writes `pallas.interpreter`, which
   * restarts the server on it (interpreter.ts says where it is written, and why).
   */
  async pickInterpreter(): Promise<string | undefined> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const candidates = interpreterCandidates({
      workspaceFolders: folders,
      exists: (file) => fs.existsSync(file),
      current: this.interpreter?.path,
      virtualEnv: process.env.VIRTUAL_ENV,
      pythonExtensionPath: this.python?.environments.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri)?.path,
    });
    const picked = await vscode.window.showQuickPick(
      candidates.map((candidate) => ({ label: candidate.label, description: candidate.description, candidate })),
      { title: "pallas-lsp: Select Interpreter", placeHolder: "The Python (with jax) of the project to analyse and trace", ignoreFocusOut: true },
    );
    if (picked === undefined) return undefined;
    const chosen = await this.interpreterPath(picked.candidate);
    if (chosen === undefined) return undefined;
    const config = vscode.workspace.getConfiguration(SECTION);
    const trusted = vscode.workspace.isTrusted;
    if (chosen === null) {
      if (trusted && folders.length > 0) await config.update("interpreter", undefined, vscode.ConfigurationTarget.Workspace);
      await config.update("interpreter", undefined, vscode.ConfigurationTarget.Global);
      this.output.appendLine("[client] pallas.interpreter cleared: the Python extension's interpreter applies");
      return "";
    }
    const target = interpreterSettingTarget(trusted, folders.length > 0);
    await config.update("interpreter", chosen, target === "workspace" ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
    this.output.appendLine(`[client] pallas.interpreter set to ${chosen} in the ${target === "workspace" ? "workspace" : "user"} settings`);
    return chosen;
  }

  /** The path a candidate stands for: null clears the setting, undefined is a change of mind. */
  private async interpreterPath(candidate: InterpreterCandidate): Promise<string | null | undefined> {
    switch (candidate.choice.kind) {
      case "path":
        return candidate.choice.path;
      case "clear":
        return null;
      case "enter": {
        const typed = await vscode.window.showInputBox({ title: "pallas-lsp: interpreter path", prompt: "A Python executable, or a virtual environment's bin/python", ignoreFocusOut: true });
        return typed?.trim() ? typed.trim() : undefined;
      }
      case "browse": {
        const browsed = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: "Use this Python", title: "Python interpreter for pallas-lsp" });
        return browsed?.[0]?.fsPath;
      }
    }
  }

  /** What a click on the status item offers. */
  private async statusMenu(): Promise<void> {
    const items = [
      { label: "$(symbol-namespace) Select Interpreter", command: SELECT_INTERPRETER_COMMAND },
      { label: "$(output) Show Output", command: "pallas.showOutput" },
      { label: "$(debug-restart) Restart Server", command: "pallas.restartServer" },
    ];
    const picked = await vscode.window.showQuickPick(items, { title: `pallas-lsp: ${this.interpreter?.path ?? "no interpreter"}` });
    if (picked !== undefined) await vscode.commands.executeCommand(picked.command);
  }

  /** `pallas-lsp: Trace Kernel`: at the cursor, or with the arguments of the server's code lens. */
  async traceKernel(arg?: unknown): Promise<{ report: TraceReport; text: string } | undefined> {
    if (!features(vscode.workspace.isTrusted).trace) {
      void vscode.window.showWarningMessage(UNTRUSTED_TRACE_MESSAGE);
      return undefined;
    }
    await this.ready();
    const client = this.client;
    if (client === undefined || !client.isRunning()) {
      void this.notify("error", "pallas-lsp: the server is not running; see the output.", "Show Output").then((a) => a && this.output.show(true));
      return undefined;
    }
    let where: unknown[];
    let label: string;
    if (isLensArgument(arg)) {
      where = arg.serverArguments;
      label = typeof where[1] === "string" ? where[1] : "the kernel";
    } else {
      const editor = vscode.window.activeTextEditor;
      if (editor === undefined || editor.document.languageId !== "python") {
        void vscode.window.showWarningMessage("pallas-lsp: open a Python file and put the cursor in a kernel to trace it.");
        return undefined;
      }
      const position = editor.selection.active;
      where = [editor.document.uri.toString(), { line: position.line, character: position.character }];
      label = `${vscode.workspace.asRelativePath(editor.document.uri)}:${position.line + 1}`;
    }
    // The trace imports the file from disk: unsaved edits would be traced as they were. A notebook's
    // cells are traced as the editor has them (the server writes them to a module): nothing to save.
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === where[0]);
    if (document?.uri.scheme !== "vscode-notebook-cell" && document?.isDirty && !(await document.save())) {
      void vscode.window.showWarningMessage("pallas-lsp: save the file to trace it (the trace imports the saved file).");
      return undefined;
    }
    const settings = this.settings(document?.uri);
    const uri = String(where[0]);
    let answer = await this.runTrace(client, traceArguments(where, settings), label);
    let report = answer === undefined ? undefined : normalizeTrace(answer, label, cellNumber);
    let asked: string | undefined;
    // Unknown arguments: what the user gave for this function before, else ask (prefilled with the
    // server's guess), and trace again with them. Never a diagnostic: the code is not at fault.
    if (report !== undefined && isArgsNotFound(answer) && report.function !== undefined) {
      const remembered = this.context.workspaceState.get<Record<string, string>>(TRACE_ARGS_KEY, {})[`${uri}#${report.function}`];
      const args = remembered ?? (asked = await this.askArguments(report));
      if (args !== undefined) {
        const [, , options] = traceArguments(where, settings) as [unknown, unknown, Record<string, unknown>];
        answer = await this.runTrace(client, [uri, report.function, { ...options, args }], label);
        report = answer === undefined ? undefined : normalizeTrace(answer, label, cellNumber);
      }
    }
    if (report === undefined) {
      this.output.appendLine("[client] trace cancelled or gave no answer");
      return undefined;
    }
    const text = renderReportText(report);
    this.output.appendLine(text);
    this.showReport(report, uri);
    if (asked !== undefined && report.ok && report.function !== undefined) {
      await this.rememberArguments(uri, report.function, asked);
      void this.offerTraceComment(uri, report, asked);
    }
    return { report, text };
  }

  private runTrace(client: LanguageClient, serverArguments: unknown[], label: string): Promise<unknown> {
    return Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `pallas-lsp: tracing ${label}`, cancellable: true },
        async (progress, token) => {
          const workDoneToken = `pallas-trace-${Date.now()}-${Math.random().toString(36).slice(2)}`;
          const listener = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
            if (value.kind !== "end" && value.message) progress.report({ message: value.message });
          });
          try {
            return await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_TRACE_COMMAND, arguments: serverArguments, workDoneToken }, token);
          } catch (error) {
            if (token.isCancellationRequested) return undefined;
            throw error;
          } finally {
            listener.dispose();
          }
        },
      ),
    ).then(
      (answer) => answer ?? undefined,
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        void this.notify("error", `pallas-lsp: the trace failed: ${message}`);
        return undefined;
      },
    );
  }

  /** The argument form: `DTYPE[DIMS], ...`, prefilled with the server's guess (module-level ShapeDtypeStructs). */
  private askArguments(report: TraceReport): Thenable<string | undefined> {
    return vscode.window.showInputBox({
      title: `pallas-lsp: arguments to trace ${report.function}`,
      prompt: "Shapes and dtypes of the arguments, as it is called: f32[128,128], i32[8] (i32[] for a scalar)",
      value: report.suggestedArgs ?? "",
      ignoreFocusOut: true,
      validateInput: (value) =>
        /^\s*([A-Za-z_][A-Za-z0-9_]*\[\s*(\d+\s*(,\s*\d+\s*)*)?\]\s*(,\s*|$))*$/.test(value)
          ? undefined
          : "Write DTYPE[DIM,...] for each argument, separated by commas: f32[128,128], i32[8]",
    });
  }

  private async rememberArguments(uri: string, fn: string, args: string): Promise<void> {
    const all = this.context.workspaceState.get<Record<string, string>>(TRACE_ARGS_KEY, {});
    await this.context.workspaceState.update(TRACE_ARGS_KEY, { ...all, [`${uri}#${fn}`]: args });
  }

  /** Offers to write `# pallas-lsp: trace(...)` above the function: the code lens and other editors then know the arguments. */
  private async offerTraceComment(uri: string, report: TraceReport, args: string): Promise<void> {
    const line = report.definitionLine;
    if (line === undefined) return;
    const answer = await vscode.window.showInformationMessage(
      shownText(`pallas-lsp: write "# pallas-lsp: trace(${args})" above ${report.function}, so that its code lens and other editors trace it with these arguments?`),
      WRITE_COMMENT,
    );
    if (answer !== WRITE_COMMENT) return;
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const indent = /^\s*/.exec(document.lineAt(Math.min(line, document.lineCount - 1)).text)?.[0] ?? "";
    const edit = new vscode.WorkspaceEdit();
    edit.insert(document.uri, new vscode.Position(line, 0), `${indent}# pallas-lsp: trace(${args})\n`);
    if (await vscode.workspace.applyEdit(edit)) await document.save();
  }

  private showReport(report: TraceReport, uri: string): void {
    if (this.reportPanel === undefined) {
      this.reportPanel = vscode.window.createWebviewPanel("pallasTraceReport", report.title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: true,
        localResourceRoots: [],
      });
      this.reportPanel.onDidDispose(() => {
        this.reportPanel = undefined;
        this.report = undefined;
      });
      this.reportPanel.webview.onDidReceiveMessage(async (message: { type: string } & SourceLocation) => {
        if (message.type !== "open") return;
        await this.openLocation(message);
      });
    }
    this.report = { report, uri, stale: false };
    this.renderReport();
    this.reportPanel.reveal(undefined, true);
  }

  private renderReport(): void {
    if (this.reportPanel === undefined || this.report === undefined) return;
    this.reportPanel.title = this.report.stale ? `${this.report.report.title} (stale)` : this.report.report.title;
    const nonce = Math.random().toString(36).slice(2) + Date.now().toString(36);
    this.reportPanel.webview.html = renderReportHtml(this.report.report, { cspSource: this.reportPanel.webview.cspSource, nonce, stale: this.report.stale });
  }

  /** An edit of the traced file makes its report stale (the trace saw the file as it was). */
  private markReportStale(document: vscode.TextDocument): void {
    if (this.report === undefined || this.report.stale || document.uri.toString() !== this.report.uri) return;
    this.report.stale = true;
    this.renderReport();
  }

  /** A location of the report in its editor; in a notebook, the cell's (the notebook shown, the cell's line selected). */
  async openLocation(location: SourceLocation): Promise<vscode.TextEditor> {
    const uri = vscode.Uri.parse(location.uri);
    const position = new vscode.Position(location.line, location.character);
    const selection = new vscode.Range(position, position);
    if (location.cell === undefined) {
      const document = await vscode.workspace.openTextDocument(uri);
      return vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.One, selection });
    }
    const notebook = vscode.workspace.notebookDocuments.find((n) => n.uri.toString() === uri.toString()) ?? (await vscode.workspace.openNotebookDocument(uri));
    const byUri = notebook.getCells().findIndex((c) => c.document.uri.toString() === location.cellUri);
    const index = byUri >= 0 ? byUri : Math.min(location.cell, notebook.cellCount) - 1;
    await vscode.window.showNotebookDocument(notebook, { viewColumn: vscode.ViewColumn.One, selections: [new vscode.NotebookRange(index, index + 1)] });
    return vscode.window.showTextDocument(notebook.cellAt(index).document, { viewColumn: vscode.ViewColumn.One, selection });
  }

  reportState(): ReturnType<PallasApi["report"]> {
    if (this.report === undefined) return undefined;
    return { title: this.reportPanel?.title ?? this.report.report.title, stale: this.report.stale, text: renderReportText(this.report.report, this.report.stale) };
  }

  private showRunning(): void {
    const facts = this.facts;
    const trust = vscode.workspace.isTrusted ? "" : " (untrusted: static diagnostics only)";
    const where = `Python ${facts?.version.join(".") ?? "?"}: ${facts?.executable ?? this.interpreter?.path}`;
    if (facts !== undefined && !facts.jax) {
      this.setStatus(
        "$(warning) pallas-lsp · no jax",
        `pallas-lsp is running${trust}, on an interpreter without jax\n${where}\n` +
          "Kernels are checked with names resolved from import statements only, and cannot be traced: select the interpreter of your JAX project.\nClick to select the interpreter, show the output or restart the server.",
        "warning",
      );
      return;
    }
    this.setStatus(
      `$(check) pallas-lsp · jax ${facts?.jax ?? "?"}`,
      `pallas-lsp is running${trust}\n${where}\nanalysing against jax ${facts?.jax ?? "?"}\nClick to select the interpreter, show the output or restart the server.`,
    );
  }

  private setStatus(text: string, tooltip: string, severity?: "error" | "warning"): void {
    this.statusItem.text = text;
    this.statusItem.tooltip = tooltip;
    this.statusItem.backgroundColor = severity ? new vscode.ThemeColor(`statusBarItem.${severity}Background`) : undefined;
  }

  status(): ReturnType<PallasApi["status"]> {
    return {
      text: this.statusItem.text,
      tooltip: typeof this.statusItem.tooltip === "string" ? this.statusItem.tooltip : "",
      interpreter: this.facts?.executable,
      jax: this.facts?.jax,
      visible: this.statusVisible,
    };
  }

  private async stop(): Promise<void> {
    const client = this.client;
    const server = this.server;
    this.client = undefined;
    if (client === undefined) return;
    if (server !== undefined) this.stopping.add(server);
    await client.stop(5000).catch(() => undefined);
    // The server exits on the client's `exit` notification; one still busy after that is ended.
    if (server !== undefined && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      const late = await Promise.race([exited.then(() => false), new Promise((resolve) => setTimeout(() => resolve(true), 5000))]);
      if (late) server.kill();
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.reportPanel?.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }
}

function isArgsNotFound(answer: unknown): boolean {
  const error = typeof answer === "object" && answer !== null ? (answer as { error?: { type?: unknown } }).error : undefined;
  return error?.type === "ArgsNotFound";
}

function isLensArgument(arg: unknown): arg is { serverArguments: unknown[] } {
  return typeof arg === "object" && arg !== null && Array.isArray((arg as { serverArguments?: unknown }).serverArguments);
}

function probe(interpreter: string): Promise<{ error?: { code?: string | number; message: string }; stdout?: string; stderr?: string }> {
  return new Promise((resolve) => {
    execFile(interpreter, ["-c", PROBE_SCRIPT], { timeout: 20000 }, (error, stdout, stderr) => {
      resolve({
        error: error ? { code: (error as NodeJS.ErrnoException).code, message: error.message } : undefined,
        stdout,
        stderr,
      });
    });
  });
}

async function loadPythonExtension(output: vscode.OutputChannel): Promise<PythonApi | undefined> {
  if (vscode.extensions.getExtension("ms-python.python") === undefined) {
    output.appendLine("[client] the Python extension is not installed: using pallas.interpreter or python3");
    return undefined;
  }
  try {
    const { PythonExtension } = await import("@vscode/python-extension");
    return (await PythonExtension.api()) as unknown as PythonApi;
  } catch (error) {
    output.appendLine(`[client] the Python extension's API is not available: ${String(error)}`);
    return undefined;
  }
}

/** A cell document's number among its notebook's cells, as VS Code shows them (the server is sent the Python cells only). */
function cellNumber(cellUri: string): number | undefined {
  for (const notebook of vscode.workspace.notebookDocuments) {
    const index = notebook.getCells().findIndex((cell) => cell.document.uri.toString() === cellUri);
    if (index >= 0) return index + 1;
  }
  return undefined;
}

let extension: PallasExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<PallasApi> {
  extension = new PallasExtension(context);
  context.subscriptions.push({ dispose: () => void extension?.dispose() });
  await extension.activate();
  const current = extension;
  return { ready: () => current.ready(), status: () => current.status(), report: () => current.reportState(),
    openLocation: (location) => current.openLocation(location) };
}

export async function deactivate(): Promise<void> {
  await extension?.dispose();
  extension = undefined;
}
