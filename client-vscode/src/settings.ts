/**
 * The extension's settings (`pallasLsp.*`) and what the server is told: its initialization
 * options and its `workspace/configuration` section `pallas`. Pure, so it is unit-tested.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";

export type LogLevel = "error" | "warning" | "info" | "debug";
export type TracePlatform = "cuda" | "host";

export interface ExtensionSettings {
  select: string[];
  ignore: string[];
  traceTimeout: number;
  tracePlatform: TracePlatform;
  logLevel: LogLevel;
}

export const DEFAULT_SETTINGS: ExtensionSettings = {
  select: [],
  ignore: [],
  traceTimeout: 120,
  tracePlatform: "cuda",
  logLevel: "info",
};

const LOG_LEVELS: readonly LogLevel[] = ["error", "warning", "info", "debug"];
const PLATFORMS: readonly TracePlatform[] = ["cuda", "host"];

/** Reads the settings through a getter (VS Code's `WorkspaceConfiguration.get`), dropping bad values. */
export function readSettings(get: (key: string) => unknown): ExtensionSettings {
  const codes = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((c): c is string => typeof c === "string" && c.trim() !== "").map((c) => c.trim()) : [];
  const timeout = get("trace.timeout");
  const platform = get("trace.platform");
  const level = get("logLevel");
  return {
    select: codes(get("select")),
    ignore: codes(get("ignore")),
    traceTimeout: typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_SETTINGS.traceTimeout,
    tracePlatform: PLATFORMS.includes(platform as TracePlatform) ? (platform as TracePlatform) : DEFAULT_SETTINGS.tracePlatform,
    logLevel: LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : DEFAULT_SETTINGS.logLevel,
  };
}

/** The keys the server reads (server.py `Settings.from_options`). */
export interface ServerOptions {
  python: string;
  select?: string[];
  ignore?: string[];
  traceTimeout: number;
  tracePlatform: TracePlatform;
  logLevel: LogLevel;
}

/**
 * Empty select/ignore lists are left out, so the project's `[tool.pallas-lsp]` still applies
 * (an empty `select` sent to the server would mean "report nothing").
 */
export function toServerOptions(settings: ExtensionSettings, interpreter: string): ServerOptions {
  const options: ServerOptions = {
    python: interpreter,
    traceTimeout: settings.traceTimeout,
    tracePlatform: settings.tracePlatform,
    logLevel: settings.logLevel,
  };
  if (settings.select.length > 0) {
    options.select = settings.select;
  }
  if (settings.ignore.length > 0) {
    options.ignore = settings.ignore;
  }
  return options;
}

/** How the server process is started: the user's interpreter running the bundled launcher. */
export interface ServerLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export function serverLaunch(interpreter: string, extensionPath: string, baseEnv: NodeJS.ProcessEnv): ServerLaunch {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(baseEnv)) {
    // The launcher puts the bundled libraries on sys.path itself; a PYTHONPATH from the editor's
    // own environment would shadow them, and it would leak into the trace runner too.
    if (value !== undefined && key !== "PYTHONPATH" && key !== "PYTHONHOME") {
      env[key] = value;
    }
  }
  env.PYTHONUNBUFFERED = "1";
  // Diagnostic codes link to the rule pages shipped in the extension (readable offline).
  env.PALLAS_LSP_DOCS_URL ??= pathToFileURL(path.join(extensionPath, "bundled", "docs", "rules")).href;
  return {
    command: interpreter,
    args: [path.join(extensionPath, "bundled", "tool", "launch_server.py")],
    env,
  };
}

/**
 * Arguments of the server's `pallas.trace`: `[uri, position or function name, options]`. The code
 * lens gives the first two; the platform setting goes in the options unless they already name one.
 */
export function traceArguments(where: unknown[], settings: ExtensionSettings): unknown[] {
  const [uri, target, options] = where;
  const given = typeof options === "object" && options !== null ? (options as Record<string, unknown>) : {};
  return [uri, target, { platform: settings.tracePlatform, ...given }];
}

/**
 * Whether a settings change needs a new server rather than a configuration update. The server
 * keeps a key that a configuration answer leaves out at its previous value, so a rule list that
 * goes back to empty (left out, so that pyproject.toml applies again) is only forgotten by a
 * restart; the interpreter and the log level are fixed when the server starts.
 */
export function changeNeedsRestart(changed: (key: string) => boolean, settings: ExtensionSettings): boolean {
  return (
    changed("interpreter") ||
    changed("logLevel") ||
    (changed("select") && settings.select.length === 0) ||
    (changed("ignore") && settings.ignore.length === 0)
  );
}
