import { test } from "node:test";
import * as assert from "node:assert/strict";
import { changeNeedsRestart, planMigration, readSettings, serverLaunch, shouldNotify, toServerOptions, traceArguments, DEFAULT_SETTINGS } from "../../src/settings";

const from = (values: Record<string, unknown>) => readSettings((key) => values[key]);

test("defaults when nothing is set", () => {
  assert.deepEqual(from({}), DEFAULT_SETTINGS);
});

test("settings become the server's option keys; empty rule lists are left to pyproject.toml", () => {
  const settings = from({ select: [], ignore: [], "kernelTrace.timeout": 30, "kernelTrace.platform": "host", logLevel: "debug", "inlayHints.enable": false });
  assert.deepEqual(toServerOptions(settings, "/venv/bin/python"), {
    python: "/venv/bin/python",
    inlayHints: false,
    showTraceResults: false, // the extension shows each trace in its report
    traceTimeout: 30,
    tracePlatform: "host",
    traceEntryPoints: "off",
    logLevel: "debug",
  });
});

test("entry points run after a save only where the workspace is trusted", () => {
  const settings = from({ traceEntryPoints: "onSave" });
  assert.equal(toServerOptions(settings, "python3").traceEntryPoints, "onSave");
  assert.equal(toServerOptions(settings, "python3", false).traceEntryPoints, "off");
  assert.equal(from({ traceEntryPoints: "always" }).traceEntryPoints, "off");
});

test("rule lists are passed through, trimmed, without blanks or non-strings", () => {
  const settings = from({ select: [" PAL001 ", "", 3, "PAL002"], ignore: ["PAL002"] });
  const options = toServerOptions(settings, "python3");
  assert.deepEqual(options.select, ["PAL001", "PAL002"]);
  assert.deepEqual(options.ignore, ["PAL002"]);
});

test("bad values fall back to the defaults", () => {
  const settings = from({ "kernelTrace.timeout": -1, "kernelTrace.platform": "gpu", logLevel: "verbose", select: "PAL001", enable: "yes", showNotifications: "loud", traceEntryPoints: true });
  assert.deepEqual(settings, DEFAULT_SETTINGS);
});

test("the server runs the bundled launcher on the chosen interpreter without the editor's PYTHONPATH", () => {
  const launch = serverLaunch("/venv/bin/python", "/ext", { PATH: "/usr/bin", PYTHONPATH: "/elsewhere", PYTHONHOME: "/x", HOME: "/home/u" });
  assert.equal(launch.command, "/venv/bin/python");
  assert.deepEqual(launch.args, ["/ext/bundled/tool/launch_server.py"]);
  assert.deepEqual(launch.env, { PATH: "/usr/bin", HOME: "/home/u", PYTHONUNBUFFERED: "1" });
});

test("the analysis platform is passed on only when chosen (\"project\": pyproject.toml, else gpu)", () => {
  assert.equal(from({}).platform, "project");
  assert.equal(toServerOptions(DEFAULT_SETTINGS, "python3").platform, undefined);
  assert.equal(toServerOptions(from({ platform: "tpu" }), "python3").platform, "tpu");
  assert.equal(toServerOptions(from({ platform: "gpu" }), "python3").platform, "gpu");
  assert.equal(from({ platform: "cuda" }).platform, "project"); // a trace platform is not an analysis platform
});

test("a docs URL is passed on only when set (else the rule pages shipped with the server)", () => {
  assert.equal(toServerOptions(DEFAULT_SETTINGS, "python3").docsUrl, undefined);
  assert.equal(toServerOptions(from({ docsUrl: " https://example.org/rules " }), "python3").docsUrl, "https://example.org/rules");
});

test("notifications follow pallas.showNotifications, as ruff's", () => {
  assert.deepEqual(["error", "warning", "info"].map((s) => shouldNotify(s as "error", "onWarning")), [true, true, false]);
  assert.deepEqual(["error", "warning", "info"].map((s) => shouldNotify(s as "error", "off")), [false, false, false]);
  assert.deepEqual(["error", "warning", "info"].map((s) => shouldNotify(s as "error", "onError")), [true, false, false]);
  assert.deepEqual(["error", "warning", "info"].map((s) => shouldNotify(s as "error", "always")), [true, true, true]);
});

test("old pallasLsp.* settings move to pallas.*; a value under the new name wins", () => {
  const values: Record<string, { globalValue?: unknown; workspaceValue?: unknown }> = {
    "pallasLsp.ignore": { globalValue: ["PAL001"], workspaceValue: ["PAL002"] },
    "pallasLsp.trace.timeout": { globalValue: 30 },
    "pallas.kernelTrace.timeout": { globalValue: 60 },
  };
  assert.deepEqual(planMigration((key) => values[key], true), [
    { from: "pallasLsp.ignore", to: "pallas.ignore", target: "global", value: ["PAL001"] },
    { from: "pallasLsp.ignore", to: "pallas.ignore", target: "workspace", value: ["PAL002"] },
    { from: "pallasLsp.trace.timeout", to: "pallas.kernelTrace.timeout", target: "global" },
  ]);
  // An untrusted workspace's own files are left alone.
  assert.deepEqual(planMigration((key) => values[key], false).map((m) => m.target), ["global", "global"]);
});

test("trace arguments: the platform setting is added to what the cursor or the code lens gives", () => {
  const settings = from({ "kernelTrace.platform": "host" });
  assert.deepEqual(traceArguments(["file:///k.py", { line: 27, character: 0 }], settings), ["file:///k.py", { line: 27, character: 0 }, { platform: "host" }]);
  // "auto" (the default) names none: the server traces the kernel as it runs (interpret mode on the host).
  assert.equal(DEFAULT_SETTINGS.tracePlatform, "auto");
  assert.deepEqual(traceArguments(["file:///k.py", "ordered_double"], DEFAULT_SETTINGS), ["file:///k.py", "ordered_double", {}]);
  assert.deepEqual(traceArguments(["file:///k.py", "ordered_double"], from({ "kernelTrace.platform": "cuda" })), ["file:///k.py", "ordered_double", { platform: "cuda" }]);
  assert.deepEqual(traceArguments(["file:///k.py", "f", { args: "f32[8]", platform: "cuda" }], settings), ["file:///k.py", "f", { args: "f32[8]", platform: "cuda" }]);
});

test("restart for a new interpreter or log level, or a rule list cleared; other changes go live", () => {
  const only = (key: string) => (k: string) => k === key;
  assert.equal(changeNeedsRestart(only("interpreter"), DEFAULT_SETTINGS), true);
  assert.equal(changeNeedsRestart(only("logLevel"), DEFAULT_SETTINGS), true);
  assert.equal(changeNeedsRestart(only("ignore"), DEFAULT_SETTINGS), true);
  assert.equal(changeNeedsRestart(only("ignore"), from({ ignore: ["PAL002"] })), false);
  assert.equal(changeNeedsRestart(only("select"), from({ select: ["PAL001"] })), false);
  assert.equal(changeNeedsRestart(only("kernelTrace.timeout"), DEFAULT_SETTINGS), false);
  assert.equal(changeNeedsRestart(only("enable"), DEFAULT_SETTINGS), true);
  assert.equal(changeNeedsRestart(only("platform"), DEFAULT_SETTINGS), true); // back to "project"
  assert.equal(changeNeedsRestart(only("platform"), from({ platform: "tpu" })), false);
});
