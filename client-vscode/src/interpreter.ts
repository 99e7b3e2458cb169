/**
 * Which Python runs the server and is analysed: a pure decision, so it can be unit-tested without
 * VS Code. The server runs on the user's own interpreter (with the bundled libraries on its path),
 * so the environment it analyses and traces is the one the user's code really runs in.
 */
import * as path from "node:path";
import * as os from "node:os";

/** The oldest Python the server runs on (pyproject.toml `requires-python`). */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** The layers of `pallas.interpreter`, as `WorkspaceConfiguration.inspect` reports them. */
export interface SettingLayers {
  globalValue?: string;
  workspaceValue?: string;
  workspaceFolderValue?: string;
}

export type InterpreterSource = "setting" | "python-extension" | "default";

export interface InterpreterChoice {
  path: string;
  source: InterpreterSource;
  /** Why a workspace value was passed over (untrusted workspace), for the output channel. */
  ignoredWorkspaceValue?: string;
}

export interface InterpreterInputs {
  setting: SettingLayers;
  trusted: boolean;
  /** The Python extension's active environment for the folder, if the extension is there. */
  pythonExtensionPath?: string;
  workspaceFolder?: string;
  home?: string;
}

/**
 * `pallas.interpreter` (a workspace value only in a trusted workspace: it names a program to
 * run), else the Python extension's active environment, else `python3` from PATH.
 */
export function chooseInterpreter(inputs: InterpreterInputs): InterpreterChoice {
  const { setting, trusted } = inputs;
  const workspaceValue = nonEmpty(setting.workspaceFolderValue) ?? nonEmpty(setting.workspaceValue);
  const ignored = !trusted && workspaceValue !== undefined ? workspaceValue : undefined;
  const fromSetting = (trusted ? workspaceValue : undefined) ?? nonEmpty(setting.globalValue);
  if (fromSetting !== undefined) {
    return withIgnored({ path: resolveInterpreterPath(fromSetting, inputs), source: "setting" }, ignored);
  }
  const fromExtension = nonEmpty(inputs.pythonExtensionPath);
  if (fromExtension !== undefined) {
    return withIgnored({ path: fromExtension, source: "python-extension" }, ignored);
  }
  return withIgnored({ path: "python3", source: "default" }, ignored);
}

/** Expands `${workspaceFolder}`, `${userHome}` and `~`; makes a relative path absolute against the folder. */
export function resolveInterpreterPath(value: string, inputs: { workspaceFolder?: string; home?: string }): string {
  const home = inputs.home ?? os.homedir();
  let result = value.trim();
  if (inputs.workspaceFolder !== undefined) {
    result = result.replace(/\$\{workspaceFolder\}/g, inputs.workspaceFolder);
  }
  result = result.replace(/\$\{userHome\}/g, home);
  if (result === "~" || result.startsWith("~/")) {
    result = path.join(home, result.slice(1));
  }
  const bareCommand = !result.includes("/") && !result.includes("\\");
  if (!bareCommand && !path.isAbsolute(result) && inputs.workspaceFolder !== undefined) {
    result = path.resolve(inputs.workspaceFolder, result);
  }
  return result;
}

/** What the probe script prints (see `PROBE_SCRIPT`). */
export interface InterpreterFacts {
  executable: string;
  version: [number, number, number];
  jax: string | null;
}

/** Asks the interpreter for its version and its jax version without importing jax (fast). */
export const PROBE_SCRIPT = [
  "import json, sys",
  "try:",
  "    from importlib.metadata import version",
  "    jax = version('jax')",
  "except Exception:",
  "    jax = None",
  "print(json.dumps({'executable': sys.executable, 'version': list(sys.version_info[:3]), 'jax': jax}))",
].join("\n");

export type ProbeVerdict =
  | { ok: true; facts: InterpreterFacts }
  | { ok: false; problem: "missing" | "too-old" | "broken"; message: string };

/** Judges the probe's outcome: the words here are what the user reads in the notification. */
export function judgeProbe(
  interpreter: string,
  outcome: { error?: { code?: string | number; message: string }; stdout?: string; stderr?: string },
): ProbeVerdict {
  if (outcome.error !== undefined) {
    if (outcome.error.code === "ENOENT" || outcome.error.code === "EACCES") {
      return {
        ok: false,
        problem: "missing",
        message: `pallas-lsp: the Python interpreter "${interpreter}" was not found. Pick an interpreter (Python ${MIN_PYTHON.join(".")} or newer) to start the server.`,
      };
    }
    const detail = lastLine(outcome.stderr) ?? outcome.error.message;
    return {
      ok: false,
      problem: "broken",
      message: `pallas-lsp: the Python interpreter "${interpreter}" did not run (${detail}). Pick another interpreter to start the server.`,
    };
  }
  let facts: InterpreterFacts;
  try {
    facts = JSON.parse(lastLine(outcome.stdout) ?? "") as InterpreterFacts;
  } catch {
    return {
      ok: false,
      problem: "broken",
      message: `pallas-lsp: "${interpreter}" did not answer like a Python interpreter. Pick another interpreter to start the server.`,
    };
  }
  const [major, minor] = facts.version;
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    return {
      ok: false,
      problem: "too-old",
      message: `pallas-lsp needs Python ${MIN_PYTHON.join(".")} or newer; "${interpreter}" is Python ${facts.version.join(".")}. Pick a newer interpreter to start the server.`,
    };
  }
  return { ok: true, facts };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value : undefined;
}

function withIgnored(choice: InterpreterChoice, ignored: string | undefined): InterpreterChoice {
  return ignored === undefined ? choice : { ...choice, ignoredWorkspaceValue: ignored };
}

function lastLine(text: string | undefined): string | undefined {
  const lines = (text ?? "").split(/\r?\n/).filter((line) => line.trim() !== "");
  return lines.length > 0 ? lines[lines.length - 1] : undefined;
}

/**
 * What the user reads when the interpreter runs but has no jax: the server still checks (names are
 * resolved from import statements), but cannot see jax's own code and cannot trace. A warning, not
 * an error: the code is not at fault.
 */
export function noJaxMessage(facts: InterpreterFacts): string {
  return (
    `pallas-lsp: ${facts.executable} (Python ${facts.version.join(".")}) has no jax. Kernels are still checked, ` +
    `with names resolved from import statements only, but cannot be traced. Select the interpreter of your JAX project.`
  );
}

/** One entry of `pallas-lsp: Select Interpreter`. */
export interface InterpreterCandidate {
  label: string;
  description: string;
  /** What choosing it does: use this path, clear the setting (the Python extension's choice applies), or ask. */
  choice: { kind: "path"; path: string } | { kind: "clear" } | { kind: "browse" } | { kind: "enter" };
}

/** Virtual environments a project usually has, relative to a workspace folder. */
const VENV_PYTHONS = [".venv/bin/python", "venv/bin/python", ".env/bin/python", "env/bin/python", ".venv/Scripts/python.exe", "venv/Scripts/python.exe"];

/**
 * What `pallas-lsp: Select Interpreter` offers, in order: the workspace folders' virtual environments
 * that exist, `$VIRTUAL_ENV`, the Python extension's active environment (choosing it clears
 * `pallas.interpreter`, so it follows the Python extension), `python3` from PATH, then a path typed
 * in or browsed for. The one in use is marked. Nothing here runs: the list names files only.
 */
export function interpreterCandidates(inputs: {
  workspaceFolders: string[];
  exists: (file: string) => boolean;
  current?: string;
  virtualEnv?: string;
  pythonExtensionPath?: string;
}): InterpreterCandidate[] {
  const found: InterpreterCandidate[] = [];
  const seen = new Set<string>();
  const mark = (file: string, description: string) => (file === inputs.current ? `${description} · in use` : description);
  const add = (file: string, description: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    found.push({ label: file, description: mark(file, description), choice: { kind: "path", path: file } });
  };
  for (const folder of inputs.workspaceFolders) {
    for (const relative of VENV_PYTHONS) {
      const file = path.join(folder, relative);
      if (inputs.exists(file)) add(file, `virtual environment of ${path.basename(folder)}`);
    }
  }
  const virtualEnv = nonEmpty(inputs.virtualEnv);
  if (virtualEnv !== undefined) {
    const file = path.join(virtualEnv, "bin", "python");
    if (inputs.exists(file)) add(file, "$VIRTUAL_ENV");
  }
  const fromExtension = nonEmpty(inputs.pythonExtensionPath);
  if (fromExtension !== undefined) {
    seen.add(fromExtension);
    found.push({ label: "Python extension's interpreter", description: mark(fromExtension, fromExtension), choice: { kind: "clear" } });
  }
  add("python3", "from PATH");
  found.push({ label: "Enter interpreter path…", description: "", choice: { kind: "enter" } });
  found.push({ label: "Browse…", description: "", choice: { kind: "browse" } });
  return found;
}

/**
 * Where the chosen interpreter is written. In a trusted workspace: the workspace's settings (a
 * project's own environment, as the Python extension keeps its choice per workspace). Otherwise
 * the user's settings, with an absolute path: an untrusted workspace's own settings never choose a
 * program to run (they are ignored), and the user has named this one themselves.
 */
export function interpreterSettingTarget(trusted: boolean, hasWorkspace: boolean): "workspace" | "global" {
  return trusted && hasWorkspace ? "workspace" : "global";
}
