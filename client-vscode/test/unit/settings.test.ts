import { test } from "node:test";
import * as assert from "node:assert/strict";
import { changeNeedsRestart, readSettings, serverLaunch, toServerOptions, traceArguments, DEFAULT_SETTINGS } from "../../src/settings";

const from = (values: Record<string, unknown>) => readSettings((key) => values[key]);

test("defaults when nothing is set", () => {
  assert.deepEqual(from({}), DEFAULT_SETTINGS);
});

test("settings become the server's option keys; empty rule lists are left to pyproject.toml", () => {
  const settings = from({ select: [], ignore: [], "trace.timeout": 30, "trace.platform": "host", logLevel: "debug" });
  assert.deepEqual(toServerOptions(settings, "/venv/bin/python"), {
    python: "/venv/bin/python",
    traceTimeout: 30,
    tracePlatform: "host",
    logLevel: "debug",
  });
});

test("rule lists are passed through, trimmed, without blanks or non-strings", () => {
  const settings = from({ select: [" PAL001 ", "", 3, "PAL002"], ignore: ["PAL002"] });
  const options = toServerOptions(settings, "python3");
  assert.deepEqual(options.select, ["PAL001", "PAL002"]);
  assert.deepEqual(options.ignore, ["PAL002"]);
});

test("bad values fall back to the defaults", () => {
  const settings = from({ "trace.timeout": -1, "trace.platform": "gpu", logLevel: "verbose", select: "PAL001" });
  assert.deepEqual(settings, DEFAULT_SETTINGS);
});

test("the server runs the bundled launcher on the chosen interpreter without the editor's PYTHONPATH", () => {
  const launch = serverLaunch("/venv/bin/python", "/ext", { PATH: "/usr/bin", PYTHONPATH: "/elsewhere", PYTHONHOME: "/x", HOME: "/home/u" });
  assert.equal(launch.command, "/venv/bin/python");
  assert.deepEqual(launch.args, ["/ext/bundled/tool/launch_server.py"]);
  assert.deepEqual(launch.env, {
    PATH: "/usr/bin",
    HOME: "/home/u",
    PYTHONUNBUFFERED: "1",
    PALLAS_LSP_DOCS_URL: "file:///ext/bundled/docs/rules",
  });
});

test("a docs URL set by the user is kept", () => {
  const launch = serverLaunch("python3", "/ext", { PALLAS_LSP_DOCS_URL: "https://example.org/rules" });
  assert.equal(launch.env.PALLAS_LSP_DOCS_URL, "https://example.org/rules");
});

test("trace arguments: the platform setting is added to what the cursor or the code lens gives", () => {
  const settings = from({ "trace.platform": "host" });
  assert.deepEqual(traceArguments(["file:///k.py", { line: 27, character: 0 }], settings), ["file:///k.py", { line: 27, character: 0 }, { platform: "host" }]);
  assert.deepEqual(traceArguments(["file:///k.py", "ordered_double"], DEFAULT_SETTINGS), ["file:///k.py", "ordered_double", { platform: "cuda" }]);
  assert.deepEqual(traceArguments(["file:///k.py", "f", { args: "f32[8]", platform: "cuda" }], settings), ["file:///k.py", "f", { args: "f32[8]", platform: "cuda" }]);
});

test("restart for a new interpreter or log level, or a rule list cleared; other changes go live", () => {
  const only = (key: string) => (k: string) => k === key;
  assert.equal(changeNeedsRestart(only("interpreter"), DEFAULT_SETTINGS), true);
  assert.equal(changeNeedsRestart(only("logLevel"), DEFAULT_SETTINGS), true);
  assert.equal(changeNeedsRestart(only("ignore"), DEFAULT_SETTINGS), true);
  assert.equal(changeNeedsRestart(only("ignore"), from({ ignore: ["PAL002"] })), false);
  assert.equal(changeNeedsRestart(only("select"), from({ select: ["PAL001"] })), false);
  assert.equal(changeNeedsRestart(only("trace.timeout"), DEFAULT_SETTINGS), false);
});
