/**
 * Workspace trust: in an untrusted workspace only static diagnostics run. Tracing imports and
 * lowers the workspace's code, so it is refused there, and the server's trace code lenses are not
 * shown. Pure functions, unit-tested; extension.ts applies them.
 */

/** Server commands (workspace/executeCommand) that run the workspace's code. */
export const CODE_RUNNING_SERVER_COMMANDS: ReadonlySet<string> = new Set(["pallas.trace"]);

/** The extension command that traces with progress and a report (wraps `pallas.trace`). */
export const TRACE_COMMAND = "pallas.traceKernel";

export const UNTRUSTED_TRACE_MESSAGE =
  "pallas-lsp: tracing a kernel runs this workspace's code, so it is off until you trust the workspace. Static diagnostics keep working.";

export interface Features {
  staticDiagnostics: boolean;
  trace: boolean;
  traceCodeLens: boolean;
  workspaceInterpreterSetting: boolean;
}

export function features(trusted: boolean): Features {
  return { staticDiagnostics: true, trace: trusted, traceCodeLens: trusted, workspaceInterpreterSetting: trusted };
}

/** Whether a server command may be sent; `undefined` means yes, a string is the refusal shown. */
export function refuseServerCommand(command: string, trusted: boolean): string | undefined {
  return !trusted && CODE_RUNNING_SERVER_COMMANDS.has(command) ? UNTRUSTED_TRACE_MESSAGE : undefined;
}

export interface LensCommand {
  title: string;
  command: string;
  arguments?: unknown[];
  tooltip?: string;
}

/**
 * The server's `Trace kernel` lens names the raw server command; clicking it would trace with no
 * progress and no report. It is pointed at the extension's command instead, with the same
 * arguments; in an untrusted workspace it is dropped.
 */
export function routeLensCommand<T extends LensCommand>(command: T | undefined, trusted: boolean): T | undefined | null {
  if (command === undefined || !CODE_RUNNING_SERVER_COMMANDS.has(command.command)) {
    return command;
  }
  if (!trusted) {
    return null; // drop the lens
  }
  return { ...command, command: TRACE_COMMAND, arguments: [{ serverArguments: command.arguments ?? [] }] };
}

/**
 * A notification's text as VS Code shows nothing but text: it turns `[label](command:ID?ARGS)` in a
 * message into a link that runs that command (Restricted Mode too), and messages quote repository
 * text (an interpreter path from workspace settings, what a traced program printed). A link's `](`
 * is split and control characters are written as escapes (as the server does for its own).
 */
export function shownText(message: string): string {
  // eslint-disable-next-line no-control-regex
  const escaped = message.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return escaped.split("](").join("] (");
}
