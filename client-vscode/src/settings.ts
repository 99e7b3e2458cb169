/**
 * The extension's settings (`pallas.*`, one namespace, as ruff's `ruff.*`) and what the server is
 * told: its initialization options and its `workspace/configuration` section `pallas`. Pure, so it
 * is unit-tested. `pallas.trace.server` is the language client's own LSP message log.
 */
import * as path from "node:path";

export type LogLevel = "error" | "warning" | "info" | "debug";
/** "auto": as the kernel runs (the server traces interpret-mode kernels on the host, the others for cuda). */
export type TracePlatform = "auto" | "cuda" | "host";
/** What a bare `pl.pallas_call` is analysed as lowered for; "project": `[tool.pallas-lsp] platform`, else gpu. */
export type AnalysisPlatform = "project" | "gpu" | "tpu";
export type NotificationLevel = "off" | "onError" | "onWarning" | "always";
/** "onSave": after a save the server runs the project's tests and `__main__` blocks (its code: trusted workspaces only). */
export type TraceEntryPoints = "off" | "onSave";

export interface ExtensionSettings {
  enable: boolean;
  select: string[];
  ignore: string[];
  platform: AnalysisPlatform;
  inlayHints: boolean;
  docsUrl: string;
  showNotifications: NotificationLevel;
  traceTimeout: number;
  tracePlatform: TracePlatform;
  traceEntryPoints: TraceEntryPoints;
  logLevel: LogLevel;
}

export const DEFAULT_SETTINGS: ExtensionSettings = {
  enable: true,
  select: [],
  ignore: [],
  platform: "project",
  inlayHints: true,
  docsUrl: "",
  showNotifications: "onWarning",
  traceTimeout: 120,
  tracePlatform: "auto",
  traceEntryPoints: "off",
  logLevel: "info",
};

const LOG_LEVELS: readonly LogLevel[] = ["error", "warning", "info", "debug"];
const PLATFORMS: readonly TracePlatform[] = ["auto", "cuda", "host"];
const ANALYSIS_PLATFORMS: readonly AnalysisPlatform[] = ["project", "gpu", "tpu"];
const NOTIFICATION_LEVELS: readonly NotificationLevel[] = ["off", "onError", "onWarning", "always"];

/** Reads the settings through a getter (VS Code's `WorkspaceConfiguration.get` of `pallas`), dropping bad values. */
export function readSettings(get: (key: string) => unknown): ExtensionSettings {
  const codes = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((c): c is string => typeof c === "string" && c.trim() !== "").map((c) => c.trim()) : [];
  const flag = (value: unknown, fallback: boolean): boolean => (typeof value === "boolean" ? value : fallback);
  const timeout = get("kernelTrace.timeout");
  const platform = get("kernelTrace.platform");
  const level = get("logLevel");
  const notifications = get("showNotifications");
  const docsUrl = get("docsUrl");
  const analysisPlatform = get("platform");
  const entryPoints = get("traceEntryPoints");
  return {
    enable: flag(get("enable"), DEFAULT_SETTINGS.enable),
    select: codes(get("select")),
    ignore: codes(get("ignore")),
    platform: ANALYSIS_PLATFORMS.includes(analysisPlatform as AnalysisPlatform)
      ? (analysisPlatform as AnalysisPlatform)
      : DEFAULT_SETTINGS.platform,
    inlayHints: flag(get("inlayHints.enable"), DEFAULT_SETTINGS.inlayHints),
    docsUrl: typeof docsUrl === "string" ? docsUrl.trim() : DEFAULT_SETTINGS.docsUrl,
    showNotifications: NOTIFICATION_LEVELS.includes(notifications as NotificationLevel)
      ? (notifications as NotificationLevel)
      : DEFAULT_SETTINGS.showNotifications,
    traceTimeout: typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_SETTINGS.traceTimeout,
    tracePlatform: PLATFORMS.includes(platform as TracePlatform) ? (platform as TracePlatform) : DEFAULT_SETTINGS.tracePlatform,
    traceEntryPoints: entryPoints === "onSave" || entryPoints === "off" ? entryPoints : DEFAULT_SETTINGS.traceEntryPoints,
    logLevel: LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : DEFAULT_SETTINGS.logLevel,
  };
}

/** Whether a notification of this severity is shown (`pallas.showNotifications`, as ruff's). */
export function shouldNotify(severity: "error" | "warning" | "info", level: NotificationLevel): boolean {
  const rank = { off: 0, onError: 1, onWarning: 2, always: 3 }[level];
  return rank >= { error: 1, warning: 2, info: 3 }[severity];
}

/** The keys the server reads (lsp/settings.py `Settings.from_options`). */
export interface ServerOptions {
  python: string;
  select?: string[];
  ignore?: string[];
  platform?: "gpu" | "tpu";
  inlayHints: boolean;
  docsUrl?: string;
  showTraceResults: boolean;
  traceTimeout: number;
  tracePlatform: TracePlatform;
  traceEntryPoints: TraceEntryPoints;
  logLevel: LogLevel;
}

/**
 * Empty select/ignore lists and platform "project" are left out, so the project's `[tool.pallas-lsp]`
 * still applies (an empty `select` sent to the server would mean "report nothing"). The extension shows trace
 * results in its own report, so the server sends no message for them.
 */
export function toServerOptions(settings: ExtensionSettings, interpreter: string, trusted = true): ServerOptions {
  const options: ServerOptions = {
    python: interpreter,
    inlayHints: settings.inlayHints,
    showTraceResults: false,
    traceTimeout: settings.traceTimeout,
    tracePlatform: settings.tracePlatform,
    // Running the project's entry points runs its code: never in an untrusted workspace.
    traceEntryPoints: trusted ? settings.traceEntryPoints : "off",
    logLevel: settings.logLevel,
  };
  if (settings.select.length > 0) {
    options.select = settings.select;
  }
  if (settings.ignore.length > 0) {
    options.ignore = settings.ignore;
  }
  if (settings.docsUrl !== "") {
    options.docsUrl = settings.docsUrl;
  }
  if (settings.platform !== "project") {
    options.platform = settings.platform;
  }
  return options;
}

/** Settings of the extension's first releases (`pallasLsp.*`), and where they live now. */
export const LEGACY_SETTINGS: Readonly<Record<string, string>> = {
  "pallasLsp.interpreter": "pallas.interpreter",
  "pallasLsp.select": "pallas.select",
  "pallasLsp.ignore": "pallas.ignore",
  "pallasLsp.trace.timeout": "pallas.kernelTrace.timeout",
  "pallasLsp.trace.platform": "pallas.kernelTrace.platform",
  "pallasLsp.logLevel": "pallas.logLevel",
};

export type SettingTarget = "global" | "workspace" | "workspaceFolder";

export interface SettingValues {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export interface SettingMove {
  from: string;
  to: string;
  target: SettingTarget;
  /** Undefined: the new name already has a value there; the old one is only removed. */
  value?: unknown;
}

/**
 * How to move old settings to their new names, at each level where one is set: its value goes to
 * the new name unless that is set there already (the newer choice wins), and the old one is removed.
 * Workspace levels only when `workspaceToo` (an untrusted workspace's files are left alone).
 */
export function planMigration(inspect: (key: string) => SettingValues | undefined, workspaceToo: boolean): SettingMove[] {
  const moves: SettingMove[] = [];
  const levels: Array<[SettingTarget, keyof SettingValues]> = [["global", "globalValue"]];
  if (workspaceToo) levels.push(["workspace", "workspaceValue"], ["workspaceFolder", "workspaceFolderValue"]);
  for (const [from, to] of Object.entries(LEGACY_SETTINGS)) {
    const old = inspect(from);
    const current = inspect(to);
    for (const [target, key] of levels) {
      if (old?.[key] === undefined) continue;
      moves.push(current?.[key] === undefined ? { from, to, target, value: old[key] } : { from, to, target });
    }
  }
  return moves;
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
  return {
    command: interpreter,
    args: [path.join(extensionPath, "bundled", "tool", "launch_server.py")],
    env,
  };
}

/**
 * Arguments of the server's `pallas.trace`: `[uri, position or function name, options]`. The code
 * lens gives the first two; the platform setting goes in the options unless they already name one,
 * or it is "auto" (left out: the server picks the platform the kernel runs on and says why).
 */
export function traceArguments(where: unknown[], settings: ExtensionSettings): unknown[] {
  const [uri, target, options] = where;
  const given = typeof options === "object" && options !== null ? (options as Record<string, unknown>) : {};
  const platform = settings.tracePlatform === "auto" ? {} : { platform: settings.tracePlatform };
  return [uri, target, { ...platform, ...given }];
}

/**
 * Whether a settings change needs a new server rather than a configuration update (keys of `pallas`). The server
 * keeps a key that a configuration answer leaves out at its previous value, so a rule list that
 * goes back to empty, or a platform that goes back to "project" (left out, so that pyproject.toml
 * applies again) is only forgotten by a restart; the interpreter and the log level are fixed when the server starts.
 */
export function changeNeedsRestart(changed: (key: string) => boolean, settings: ExtensionSettings): boolean {
  return (
    changed("enable") ||
    changed("interpreter") ||
    changed("logLevel") ||
    (changed("select") && settings.select.length === 0) ||
    (changed("ignore") && settings.ignore.length === 0) ||
    (changed("platform") && settings.platform === "project")
  );
}
