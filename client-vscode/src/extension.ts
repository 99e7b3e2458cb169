/**
 * The VS Code side of pallas-lsp: starts the bundled server on the user's interpreter, keeps it in
 * step with settings, the Python extension and workspace trust, and shows trace reports. The
 * decisions live in interpreter.ts, settings.ts, trust.ts and traceReport.ts (unit-tested);
 * this file wires them to VS Code.
 */
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  State,
  WorkDoneProgress,
  type ServerOptions as ClientServerOptions,
} from "vscode-languageclient/node";
import { chooseInterpreter, judgeProbe, PROBE_SCRIPT, type InterpreterChoice, type InterpreterFacts } from "./interpreter";
import { changeNeedsRestart, readSettings, serverLaunch, toServerOptions, traceArguments, type ServerOptions } from "./settings";
import { features, refuseServerCommand, routeLensCommand, TRACE_COMMAND, UNTRUSTED_TRACE_MESSAGE } from "./trust";
import { normalizeTrace, renderReportHtml, renderReportText, type TraceReport } from "./traceReport";

const SECTION = "pallasLsp";
const SERVER_SECTION = "pallas";
const SERVER_TRACE_COMMAND = "pallas.trace";
const PICK_INTERPRETER = "Select Interpreter";

/** What `activate` returns: enough for the integration tests to wait for the server. */
export interface PallasApi {
  ready(): Promise<void>;
  status(): { text: string; tooltip: string; interpreter?: string; jax?: string | null };
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
  private readonly output = vscode.window.createOutputChannel("Pallas LSP");
  private readonly statusItem = vscode.window.createStatusBarItem("pallasLsp.status", vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [];
  private chain: Promise<void> = Promise.resolve();
  private started: Promise<void> = Promise.resolve();
  private reportPanel: vscode.WebviewPanel | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.statusItem.name = "Pallas LSP";
    this.statusItem.command = "pallasLsp.showOutput";
    this.setStatus("$(sync~spin) Pallas", "Pallas LSP: starting");
    this.statusItem.show();
  }

  async activate(): Promise<void> {
    this.disposables.push(
      this.output,
      this.statusItem,
      vscode.commands.registerCommand(TRACE_COMMAND, (arg?: unknown) => this.traceKernel(arg)),
      vscode.commands.registerCommand("pallasLsp.restartServer", () => this.restart("restart requested")),
      vscode.commands.registerCommand("pallasLsp.showOutput", () => this.output.show(true)),
      vscode.workspace.onDidChangeConfiguration((event) => this.onConfigurationChanged(event)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.restart("workspace trusted")),
    );
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

  private async doRestart(reason: string): Promise<void> {
    this.output.appendLine(`[client] starting the server (${reason})`);
    this.setStatus("$(sync~spin) Pallas", `Pallas LSP: starting (${reason})`);
    await this.stop();
    const trusted = vscode.workspace.isTrusted;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    const choice = chooseInterpreter({
      setting: config.inspect<string>("interpreter") ?? {},
      trusted,
      pythonExtensionPath: this.python?.environments.getActiveEnvironmentPath(folder?.uri)?.path,
      workspaceFolder: folder?.uri.fsPath,
    });
    if (choice.ignoredWorkspaceValue !== undefined) {
      this.output.appendLine(`[client] untrusted workspace: ignoring its pallasLsp.interpreter "${choice.ignoredWorkspaceValue}"`);
    }
    this.interpreter = choice;
    this.facts = undefined;
    const verdict = judgeProbe(choice.path, await probe(choice.path));
    if (!verdict.ok) {
      this.output.appendLine(`[client] ${verdict.message}`);
      this.setStatus("$(error) Pallas", verdict.message, true);
      void vscode.window.showErrorMessage(verdict.message, PICK_INTERPRETER, "Show Output").then((answer) => {
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
    const serverOptions: ClientServerOptions = {
      command: launch.command,
      args: launch.args, // no `transport`: stdio, without the `--stdio` flag the server does not take
      options: { env: launch.env, cwd: folder?.uri.fsPath },
    };
    const client = new LanguageClient("pallasLsp", "Pallas LSP", serverOptions, this.clientOptions(choice.path));
    this.client = client;
    client.onDidChangeState((event) => {
      if (client !== this.client) return;
      if (event.newState === State.Running) this.showRunning();
      else if (event.newState === State.Stopped) this.setStatus("$(circle-slash) Pallas", "Pallas LSP: the server stopped. Click for its output.", true);
    });
    this.started = client.start().catch((error) => {
      this.output.appendLine(`[client] the server did not start: ${String(error)}`);
      this.setStatus("$(error) Pallas", `Pallas LSP: the server did not start (${String(error)})`, true);
    });
    await this.started;
  }

  private clientOptions(interpreter: string): LanguageClientOptions {
    const options = (scope?: vscode.Uri): ServerOptions =>
      toServerOptions(readSettings((key) => vscode.workspace.getConfiguration(SECTION, scope).get(key)), interpreter);
    return {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      outputChannel: this.output,
      initializationOptions: options(vscode.workspace.workspaceFolders?.[0]?.uri),
      middleware: {
        workspace: {
          // The server asks for section `pallas`; it is computed from `pallasLsp.*` for that scope.
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

  private onConfigurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration(SECTION)) return;
    const settings = readSettings((key) => vscode.workspace.getConfiguration(SECTION).get(key));
    if (this.client === undefined || changeNeedsRestart((key) => event.affectsConfiguration(`${SECTION}.${key}`), settings)) {
      void this.restart("settings changed");
      return;
    }
    // The server asks for section `pallas` again (workspace/configuration), answered by the middleware.
    const options = toServerOptions(settings, this.interpreter?.path ?? "python3");
    void this.client.sendNotification("workspace/didChangeConfiguration", { settings: { [SERVER_SECTION]: options } });
  }

  private async pickInterpreter(): Promise<void> {
    if (this.python !== undefined) {
      await vscode.commands.executeCommand("python.setInterpreter");
      return;
    }
    const picked = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: "Use this Python", title: "Python interpreter for Pallas LSP" });
    if (picked?.[0] !== undefined) {
      await vscode.workspace.getConfiguration(SECTION).update("interpreter", picked[0].fsPath, vscode.ConfigurationTarget.Global);
    }
  }

  /** `Pallas: Trace Kernel`: at the cursor, or with the arguments of the server's code lens. */
  async traceKernel(arg?: unknown): Promise<{ report: TraceReport; text: string } | undefined> {
    if (!features(vscode.workspace.isTrusted).trace) {
      void vscode.window.showWarningMessage(UNTRUSTED_TRACE_MESSAGE);
      return undefined;
    }
    await this.ready();
    const client = this.client;
    if (client === undefined || !client.isRunning()) {
      void vscode.window.showErrorMessage("Pallas: the server is not running; see the output.", "Show Output").then((a) => a && this.output.show(true));
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
        void vscode.window.showWarningMessage("Pallas: open a Python file and put the cursor in a kernel to trace it.");
        return undefined;
      }
      const position = editor.selection.active;
      where = [editor.document.uri.toString(), { line: position.line, character: position.character }];
      label = `${vscode.workspace.asRelativePath(editor.document.uri)}:${position.line + 1}`;
    }
    // The trace imports the file from disk: unsaved edits would be traced as they were.
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === where[0]);
    if (document?.isDirty && !(await document.save())) {
      void vscode.window.showWarningMessage("Pallas: save the file to trace it (the trace imports the saved file).");
      return undefined;
    }
    const settings = readSettings((key) => vscode.workspace.getConfiguration(SECTION, document?.uri).get(key));
    const serverArguments = traceArguments(where, settings);
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Pallas: tracing ${label}`, cancellable: true },
      async (progress, token) => {
        const workDoneToken = `pallas-trace-${Date.now()}-${Math.random().toString(36).slice(2)}`;
        const listener = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
          if (value.kind !== "end" && value.message) progress.report({ message: value.message });
        });
        try {
          return await client.sendRequest(
            ExecuteCommandRequest.type,
            { command: SERVER_TRACE_COMMAND, arguments: serverArguments, workDoneToken },
            token,
          );
        } catch (error) {
          if (token.isCancellationRequested) return undefined;
          throw error;
        } finally {
          listener.dispose();
        }
      },
    ).then(undefined, (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`Pallas: the trace failed: ${message}`);
      this.output.appendLine(`[client] trace failed: ${message}`);
      return undefined;
    });
    if (answer === undefined || answer === null) {
      this.output.appendLine("[client] trace cancelled or gave no answer");
      return undefined;
    }
    const report = normalizeTrace(answer, label);
    const text = renderReportText(report);
    this.output.appendLine(text);
    this.showReport(report);
    return { report, text };
  }

  private showReport(report: TraceReport): void {
    if (this.reportPanel === undefined) {
      this.reportPanel = vscode.window.createWebviewPanel("pallasTraceReport", report.title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: true,
        localResourceRoots: [],
      });
      this.reportPanel.onDidDispose(() => (this.reportPanel = undefined));
      this.reportPanel.webview.onDidReceiveMessage(async (message: { type: string; uri: string; line: number; character: number }) => {
        if (message.type !== "open") return;
        const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(message.uri));
        const position = new vscode.Position(message.line, message.character);
        await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(position, position) });
      });
    }
    this.reportPanel.title = report.title;
    const nonce = Math.random().toString(36).slice(2) + Date.now().toString(36);
    this.reportPanel.webview.html = renderReportHtml(report, { cspSource: this.reportPanel.webview.cspSource, nonce });
    this.reportPanel.reveal(undefined, true);
  }

  private showRunning(): void {
    const facts = this.facts;
    const jax = facts?.jax ? `jax ${facts.jax}` : "no jax";
    const trust = vscode.workspace.isTrusted ? "" : " (untrusted: static diagnostics only)";
    this.setStatus(
      `$(check) Pallas · ${jax}`,
      `Pallas LSP is running${trust}\nPython ${facts?.version.join(".") ?? "?"}: ${facts?.executable ?? this.interpreter?.path}\n` +
        `analysing against ${facts?.jax ? `jax ${facts.jax}` : "an environment without jax"}\nClick for the output.`,
    );
  }

  private setStatus(text: string, tooltip: string, error = false): void {
    this.statusItem.text = text;
    this.statusItem.tooltip = tooltip;
    this.statusItem.backgroundColor = error ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  status(): ReturnType<PallasApi["status"]> {
    return {
      text: this.statusItem.text,
      tooltip: typeof this.statusItem.tooltip === "string" ? this.statusItem.tooltip : "",
      interpreter: this.facts?.executable,
      jax: this.facts?.jax,
    };
  }

  private async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      await client.stop(5000).catch(() => undefined);
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.reportPanel?.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }
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
    output.appendLine("[client] the Python extension is not installed: using pallasLsp.interpreter or python3");
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

let extension: PallasExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<PallasApi> {
  extension = new PallasExtension(context);
  context.subscriptions.push({ dispose: () => void extension?.dispose() });
  await extension.activate();
  const current = extension;
  return { ready: () => current.ready(), status: () => current.status() };
}

export async function deactivate(): Promise<void> {
  await extension?.dispose();
  extension = undefined;
}
