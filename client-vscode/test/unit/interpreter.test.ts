import { test } from "node:test";
import * as assert from "node:assert/strict";
import { chooseInterpreter, interpreterCandidates, interpreterSettingTarget, judgeProbe, noJaxMessage, resolveInterpreterPath } from "../../src/interpreter";

const folder = "/home/u/project";

test("the setting wins over the Python extension and the default", () => {
  const choice = chooseInterpreter({ setting: { globalValue: "/opt/py/bin/python" }, trusted: true, pythonExtensionPath: "/venv/bin/python" });
  assert.deepEqual(choice, { path: "/opt/py/bin/python", source: "setting" });
});

test("a folder value wins over a workspace value, which wins over the user value", () => {
  const setting = { globalValue: "/user/python", workspaceValue: "/ws/python", workspaceFolderValue: "/folder/python" };
  assert.equal(chooseInterpreter({ setting, trusted: true }).path, "/folder/python");
  assert.equal(chooseInterpreter({ setting: { ...setting, workspaceFolderValue: undefined }, trusted: true }).path, "/ws/python");
});

test("the Python extension's active environment is used when the setting is empty", () => {
  const choice = chooseInterpreter({ setting: { globalValue: "  " }, trusted: true, pythonExtensionPath: "/venv/bin/python" });
  assert.deepEqual(choice, { path: "/venv/bin/python", source: "python-extension" });
});

test("python3 from PATH when nothing else is there", () => {
  assert.deepEqual(chooseInterpreter({ setting: {}, trusted: true }), { path: "python3", source: "default" });
});

test("an untrusted workspace's interpreter setting is ignored and reported; the user's still counts", () => {
  const choice = chooseInterpreter({
    setting: { globalValue: "/user/python", workspaceValue: "./evil/python" },
    trusted: false,
    workspaceFolder: folder,
  });
  assert.deepEqual(choice, { path: "/user/python", source: "setting", ignoredWorkspaceValue: "./evil/python" });
  const fallback = chooseInterpreter({ setting: { workspaceFolderValue: "/x/python" }, trusted: false, pythonExtensionPath: "/venv/bin/python" });
  assert.deepEqual(fallback, { path: "/venv/bin/python", source: "python-extension", ignoredWorkspaceValue: "/x/python" });
});

test("paths: ${workspaceFolder}, ~, relative paths; bare commands stay for PATH lookup", () => {
  const inputs = { workspaceFolder: folder, home: "/home/u" };
  assert.equal(resolveInterpreterPath("${workspaceFolder}/.venv/bin/python", inputs), "/home/u/project/.venv/bin/python");
  assert.equal(resolveInterpreterPath("~/.pyenv/shims/python", inputs), "/home/u/.pyenv/shims/python");
  assert.equal(resolveInterpreterPath("${userHome}/py/bin/python", inputs), "/home/u/py/bin/python");
  assert.equal(resolveInterpreterPath(".venv/bin/python", inputs), "/home/u/project/.venv/bin/python");
  assert.equal(resolveInterpreterPath("python3.12", inputs), "python3.12");
});

test("probe: a good interpreter gives its version and jax version", () => {
  const verdict = judgeProbe("/venv/bin/python", { stdout: '{"executable": "/venv/bin/python", "version": [3, 12, 4], "jax": "0.12.0.1"}\n' });
  assert.deepEqual(verdict, { ok: true, facts: { executable: "/venv/bin/python", version: [3, 12, 4], jax: "0.12.0.1" } });
});

test("probe: a missing interpreter is named in the message", () => {
  const verdict = judgeProbe("/nope/python", { error: { code: "ENOENT", message: "spawn /nope/python ENOENT" } });
  assert.equal(verdict.ok, false);
  assert.ok(!verdict.ok && verdict.problem === "missing");
  assert.ok(!verdict.ok && verdict.message.includes('"/nope/python" was not found'));
});

test("probe: Python older than 3.10 is refused with both versions in the message", () => {
  const verdict = judgeProbe("/usr/bin/python3.9", { stdout: '{"executable": "/usr/bin/python3.9", "version": [3, 9, 18], "jax": null}' });
  assert.ok(!verdict.ok);
  assert.equal(verdict.problem, "too-old");
  assert.equal(verdict.message, 'pallas-lsp needs Python 3.10 or newer; "/usr/bin/python3.9" is Python 3.9.18. Pick a newer interpreter to start the server.');
});

test("probe: a program that is not Python, or a crash, is reported as broken", () => {
  const notPython = judgeProbe("/bin/echo", { stdout: "-c import json\n" });
  assert.ok(!notPython.ok && notPython.problem === "broken");
  const crash = judgeProbe("/venv/bin/python", { error: { code: 1, message: "Command failed" }, stderr: "Traceback...\nSyntaxError: invalid syntax\n" });
  assert.ok(!crash.ok && crash.problem === "broken" && crash.message.includes("SyntaxError: invalid syntax"));
});

test("an interpreter without jax gets a warning that says what still works", () => {
  assert.equal(
    noJaxMessage({ executable: "/usr/bin/python3", version: [3, 12, 1], jax: null }),
    "pallas-lsp: /usr/bin/python3 (Python 3.12.1) has no jax. Kernels are still checked, with names resolved from import statements only, but cannot be traced. Select the interpreter of your JAX project.",
  );
});

test("Select Interpreter offers the folders' virtual environments, $VIRTUAL_ENV, the Python extension's, python3, then a path", () => {
  const present = new Set([`${folder}/.venv/bin/python`, "/envs/jax/bin/python"]);
  const candidates = interpreterCandidates({
    workspaceFolders: [folder],
    exists: (file) => present.has(file),
    current: `${folder}/.venv/bin/python`,
    virtualEnv: "/envs/jax",
    pythonExtensionPath: "/usr/bin/python3.12",
  });
  assert.deepEqual(candidates.map((c) => [c.label, c.description, c.choice]), [
    [`${folder}/.venv/bin/python`, "virtual environment of project · in use", { kind: "path", path: `${folder}/.venv/bin/python` }],
    ["/envs/jax/bin/python", "$VIRTUAL_ENV", { kind: "path", path: "/envs/jax/bin/python" }],
    ["Python extension's interpreter", "/usr/bin/python3.12", { kind: "clear" }],
    ["python3", "from PATH", { kind: "path", path: "python3" }],
    ["Enter interpreter path…", "", { kind: "enter" }],
    ["Browse…", "", { kind: "browse" }],
  ]);
  // A virtual environment that is not there is not offered.
  assert.deepEqual(interpreterCandidates({ workspaceFolders: [folder], exists: () => false }).map((c) => c.label), ["python3", "Enter interpreter path…", "Browse…"]);
});

test("the chosen interpreter goes in the workspace's settings only when it is trusted (its own settings are ignored otherwise)", () => {
  assert.equal(interpreterSettingTarget(true, true), "workspace");
  assert.equal(interpreterSettingTarget(false, true), "global");
  assert.equal(interpreterSettingTarget(true, false), "global");
  // What was written for an untrusted workspace is the user's value: chooseInterpreter uses it there.
  assert.equal(chooseInterpreter({ setting: { globalValue: `${folder}/.venv/bin/python` }, trusted: false }).path, `${folder}/.venv/bin/python`);
});
