"""Every editor setting and every `PALLAS_LSP_*` variable is checked: a bad value is clamped or
replaced by the default, and the user is told which setting, what value and what is used instead,
in the editor (window/showMessage) and on stderr in the CLI. Before: `traceTimeout: 10**400` failed
`initialize` (OverflowError), `debounceMs: 10**12` stopped diagnostics, `PALLAS_LSP_TRACE_MEMORY_MB=abc`
printed a traceback, `PALLAS_LSP_PROBE_TIMEOUT=0` called a healthy Python one that does not answer,
and bad `platform`, `logLevel` and `debounceMs` values were dropped without a word."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, jax_python
from lsp_wire import WireServer
from pallas_lsp.lsp.settings import Settings

KERNEL = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


def body(o_ref):
    buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
"""
PACKAGED_PAGE = (REPO / "docs" / "rules" / "PAL001-get-global-not-semaphore.md").as_uri()
PUBLISH = "textDocument/publishDiagnostics"

# initializationOptions, and exactly what the editor then shows.
BAD_SETTINGS = {
    "the issue's": ({"traceTimeout": 10**400, "debounceMs": 10**12, "platform": "cuda", "logLevel": "verbose"}, [
        "setting pallas.traceTimeout = about 10**400 is over the maximum of 86,400 s: using 86,400 s",
        "setting pallas.debounceMs = 1000000000000 is over the maximum of 60,000 ms: using 60,000 ms",
        'setting pallas.platform = "cuda" is not one of "gpu", "tpu": using [tool.pallas-lsp] platform, else "gpu"',
        'setting pallas.logLevel = "verbose" is not one of "error", "warning", "info", "debug": using "info"',
    ]),
    "strings and objects": ({"debounceMs": "fast", "traceTimeout": {"seconds": 5}, "select": "PAL001",
                             "ignore": [1, [2]], "python": 5, "docsUrl": "docs"}, [
        'setting pallas.debounceMs = "fast" is not a number of milliseconds, 0 or more: using 150 ms',
        'setting pallas.traceTimeout = {"seconds": 5} is not a number of seconds, above 0: using 120 s',
        'setting pallas.select = "PAL001" is not a list of rule codes (strings): using [tool.pallas-lsp] select, '
        "else the default",
        "setting pallas.ignore = [1, a list of 1 item] is not a list of rule codes (strings): using "
        "[tool.pallas-lsp] ignore, else the default",
        "setting pallas.python = 5 is not a path to a Python interpreter: using the default",
        'setting pallas.docsUrl = "docs" is not an http, https or file address: the rule links go to the pages '
        "shipped with pallas-lsp",
    ]),
    "booleans, NaN, negatives, a typo": ({"debounceMs": True, "traceTimeout": float("nan"), "inlayHints": "yes",
                                          "showTraceResults": 1, "debounceMS": 5, "logLevel": -1}, [
        "setting pallas.debounceMs = true is not a number of milliseconds, 0 or more: using 150 ms",
        "setting pallas.traceTimeout = nan is not a number of seconds, above 0: using 120 s",
        'setting pallas.inlayHints = "yes" is not true or false: using true',
        "setting pallas.showTraceResults = 1 is not true or false: using true",
        "unknown setting pallas.debounceMS (did you mean debounceMs?): it is ignored",
        'setting pallas.logLevel = -1 is not one of "error", "warning", "info", "debug": using "info"',
    ]),
    "infinity, zero, below zero": ({"traceTimeout": float("inf"), "debounceMs": -1}, [
        "setting pallas.traceTimeout = inf is over the maximum of 86,400 s: using 86,400 s",
        "setting pallas.debounceMs = -1 is not a number of milliseconds, 0 or more: using 150 ms",
    ]),
    "a zero timeout": ({"traceTimeout": 0}, ["setting pallas.traceTimeout = 0 is not a number of seconds, above 0: using 120 s"]),
    "not an object": ("fast", ['settings "fast" are not an object of settings: they are ignored']),
    "a NUL in a path": ({"python": "/usr/bin/py\x00thon\n"}, [
        'setting pallas.python = "/usr/bin/py\\u0000thon\\n" is not a path to a Python interpreter: using the default']),
    "a long string": ({"platform": "x" * 5000}, [
        'setting pallas.platform = "' + "x" * 40 + '…" (5,000 characters) is not one of "gpu", "tpu": using '
        '[tool.pallas-lsp] platform, else "gpu"']),
}


class Editor:
    """A real server over stdio, driven as a push client; `configuration` answers workspace/configuration."""

    def __init__(self, root, options, env=None, configuration=None):
        self.server = WireServer(env=env)
        self.root = root
        capabilities = {"workspace": {"configuration": True}} if configuration is not None else {}
        answer = self.server.request(0, "initialize", {
            "processId": None, "rootUri": root.as_uri(), "capabilities": capabilities,
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}], "initializationOptions": options})
        assert "result" in answer and answer["result"]["capabilities"], answer  # initialize succeeded
        self.notify("initialized", {})
        if configuration is not None:
            asked = self.server.wait_for(lambda m: m.get("method") == "workspace/configuration")
            self.server.send({"jsonrpc": "2.0", "id": asked["id"],
                              "result": [configuration for _ in asked["params"]["items"]]})

    def notify(self, method: str, params) -> None:
        self.server.send({"jsonrpc": "2.0", "method": method, "params": params})

    def shown(self) -> list[str]:
        with self.server.changed:
            return [m["params"]["message"] for m in self.server.messages if m.get("method") == "window/showMessage"]

    def logged(self) -> list[str]:
        with self.server.changed:
            return [m["params"]["message"] for m in self.server.messages if m.get("method") == "window/logMessage"]

    def diagnostics(self, uri: str, version: int, timeout: float = 60) -> list[dict]:
        found = self.server.wait_for(lambda m: m.get("method") == PUBLISH and m["params"]["uri"] == uri
                                     and m["params"].get("version") == version, timeout)
        assert found is not None, "the server exited"
        return found["params"]["diagnostics"]

    def open_kernel(self, name: str = "k.py") -> str:
        path = self.root / name
        path.write_text(KERNEL)
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": KERNEL}})
        return uri

    def edit(self, uri: str, version: int) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "#\n"}]})

    def close(self) -> None:
        self.server.kill()


def pal001_lines(diagnostics: list[dict]) -> list[tuple[str, int]]:
    return [(d["code"], d["range"]["start"]["line"]) for d in diagnostics]


def after_settings(editor: Editor, count: int) -> list[str]:
    """The messages shown once `count` of them have come (the settings are read during initialize)."""
    editor.server.wait_for(lambda m: len(editor.shown()) >= count)
    return editor.shown()


@pytest.mark.parametrize("case", sorted(BAD_SETTINGS))
def test_a_bad_setting_is_said_and_initialize_and_diagnostics_still_work(tmp_path, case):
    options, expected = BAD_SETTINGS[case]
    editor = Editor(tmp_path, options)
    try:
        uri = editor.open_kernel()
        assert pal001_lines(editor.diagnostics(uri, 1)) == [("PAL001", 6)]
        assert editor.shown() == [f"pallas-lsp: {message}" for message in expected]
    finally:
        editor.close()


@pytest.mark.slow
def test_a_huge_debounce_is_clamped_so_edits_still_get_diagnostics(tmp_path):
    """10**12 ms slept for 31 years after each edit; now the edit's diagnostics come after 60 s at most."""
    editor = Editor(tmp_path, {"debounceMs": 10**12})
    try:
        uri = editor.open_kernel()
        assert pal001_lines(editor.diagnostics(uri, 1)) == [("PAL001", 6)]
        editor.edit(uri, 2)
        assert pal001_lines(editor.diagnostics(uri, 2, timeout=60 + 60)) == [("PAL001", 7)]
        assert editor.shown() == [
            "pallas-lsp: setting pallas.debounceMs = 1000000000000 is over the maximum of 60,000 ms: using 60,000 ms"]
    finally:
        editor.close()


def test_a_bad_value_from_did_change_configuration_is_said_once(tmp_path):
    """A client without workspace/configuration sends its settings with the notification."""
    editor = Editor(tmp_path, {"debounceMs": 0})
    try:
        uri = editor.open_kernel()
        editor.diagnostics(uri, 1)
        for _ in range(2):  # the same bad value sent twice is said once
            editor.notify("workspace/didChangeConfiguration", {"settings": {"pallas": {"debounceMs": "soon",
                                                                                       "logLevel": "loud"}}})
        editor.edit(uri, 2)
        assert pal001_lines(editor.diagnostics(uri, 2)) == [("PAL001", 7)]
        assert editor.shown() == [
            'pallas-lsp: setting pallas.debounceMs = "soon" is not a number of milliseconds, 0 or more: using 0 ms',
            'pallas-lsp: setting pallas.logLevel = "loud" is not one of "error", "warning", "info", "debug": '
            'using "info"']
    finally:
        editor.close()


def test_a_bad_value_in_the_workspace_configuration_is_said_once_for_all_folders(tmp_path):
    """The global answer and the folder's repeat each other: one message, not one per scope."""
    editor = Editor(tmp_path, {"debounceMs": 0}, configuration={"traceTimeout": -5, "platform": "TPU"})
    try:
        uri = editor.open_kernel()
        editor.diagnostics(uri, 1)
        assert after_settings(editor, 2) == [
            "pallas-lsp: setting pallas.traceTimeout = -5 is not a number of seconds, above 0: using 120 s",
            'pallas-lsp: setting pallas.platform = "TPU" is not one of "gpu", "tpu": using [tool.pallas-lsp] '
            'platform, else "gpu"']
    finally:
        editor.close()


def test_bad_environment_values_are_said_by_the_server_and_a_healthy_python_is_used(tmp_path):
    env = {**os.environ, "PALLAS_LSP_TRACE_MEMORY_MB": "abc", "PALLAS_LSP_PROBE_TIMEOUT": "0",
           "PALLAS_LSP_DOCS_URL": "docs"}
    editor = Editor(tmp_path, {"python": jax_python(), "debounceMs": 0}, env=env)
    try:
        uri = editor.open_kernel()
        (diagnostic,) = editor.diagnostics(uri, 1)
        assert diagnostic["codeDescription"]["href"] == PACKAGED_PAGE
        assert editor.shown()[:3] == [
            'pallas-lsp: PALLAS_LSP_PROBE_TIMEOUT="0" is not a number of seconds, above 0: using 10 s',
            'pallas-lsp: PALLAS_LSP_TRACE_MEMORY_MB="abc" is not a whole number of MB, 0 or more: using 8,192 MB',
            'pallas-lsp: PALLAS_LSP_DOCS_URL="docs" is not an http, https or file address: the rule links go to their '
            "default pages"]
        editor.server.wait_for(lambda m: any("analysing against" in line for line in editor.logged()))
        assert any(f"analysing against {jax_python()} (Python 3.12" in line for line in editor.logged())
        assert not [m for m in editor.shown() if "did not answer" in m]
    finally:
        editor.close()


# ---- the CLI ----------------------------------------------------------------------------------------


def cli(*args, cwd, env_values: dict[str, str], timeout=120):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **env_values})


@pytest.mark.parametrize("value, warning", [
    ("0", 'PALLAS_LSP_PROBE_TIMEOUT="0" is not a number of seconds, above 0: using 10 s'),
    ("0.001", 'PALLAS_LSP_PROBE_TIMEOUT="0.001" is below the minimum of 1 s: using 1 s'),
    ("-3", 'PALLAS_LSP_PROBE_TIMEOUT="-3" is not a number of seconds, above 0: using 10 s'),
    ("nan", 'PALLAS_LSP_PROBE_TIMEOUT="nan" is not a number of seconds, above 0: using 10 s'),
    ("abc", 'PALLAS_LSP_PROBE_TIMEOUT="abc" is not a number of seconds, above 0: using 10 s'),
    ("1e400", 'PALLAS_LSP_PROBE_TIMEOUT="1e400" is over the maximum of 3,600 s: using 3,600 s'),
])
def test_a_bad_probe_timeout_is_said_and_a_healthy_python_still_answers(tmp_path, value, warning):
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("check", "--python", jax_python(), "k.py", cwd=tmp_path, env_values={"PALLAS_LSP_PROBE_TIMEOUT": value})
    assert run.stderr == f"pallas-lsp: warning: {warning}\n"
    assert (run.returncode, run.stdout.splitlines()[-1]) == (1, "Found 1 error.")


@pytest.mark.parametrize("value, warning", [
    ("abc", 'PALLAS_LSP_TRACE_MEMORY_MB="abc" is not a whole number of MB, 0 or more: using 8,192 MB'),
    ("-1", 'PALLAS_LSP_TRACE_MEMORY_MB="-1" is not a whole number of MB, 0 or more: using 8,192 MB'),
    ("1.5", 'PALLAS_LSP_TRACE_MEMORY_MB="1.5" is not a whole number of MB, 0 or more: using 8,192 MB'),
    ("1" + "0" * 30, 'PALLAS_LSP_TRACE_MEMORY_MB="1000000000000000000000000000000" is over the maximum of '
                     "4,194,304 MB: using 4,194,304 MB"),
])
def test_a_bad_trace_memory_limit_is_a_warning_not_a_traceback(tmp_path, value, warning):
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("check", "--no-jedi", "k.py", cwd=tmp_path, env_values={"PALLAS_LSP_TRACE_MEMORY_MB": value})
    assert run.stderr == f"pallas-lsp: warning: {warning}\n"
    assert run.returncode == 1


@pytest.mark.slow
def test_trace_runs_with_the_default_memory_limit_when_the_variable_is_bad(tmp_path):
    """Before: `pallas-lsp: internal error:` and a ValueError traceback, exit 2, nothing traced."""
    example = REPO / "examples" / "kernels" / "pal001_global_buffer.py"
    run = cli("trace", "--format", "json", "--python", jax_python(), f"{example}::scale", cwd=tmp_path,
              env_values={"PALLAS_LSP_TRACE_MEMORY_MB": "abc"}, timeout=300)
    assert run.stderr == ('pallas-lsp: warning: PALLAS_LSP_TRACE_MEMORY_MB="abc" is not a whole number of MB, '
                          "0 or more: using 8,192 MB\n")
    result = json.loads(run.stdout)
    assert (run.returncode, result["error"]["type"], result["error"]["stage"]) == (1, "NotImplementedError", "lower")


def test_a_docs_url_that_is_no_address_is_said_and_the_packaged_pages_are_linked(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("check", "--no-jedi", "--format", "sarif", "k.py", cwd=tmp_path,
              env_values={"PALLAS_LSP_DOCS_URL": "docs.example.com"})
    assert run.stderr == ('pallas-lsp: warning: PALLAS_LSP_DOCS_URL="docs.example.com" is not an http, https or file '
                          "address: the rule links go to their default pages\n")
    rules = json.loads(run.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"]: rule["helpUri"] for rule in rules}["PAL001"] == (
        "https://github.com/pallas-lsp/pallas-lsp/blob/main/docs/rules/PAL001-get-global-not-semaphore.md")


def test_good_values_are_taken_as_they_are(tmp_path):
    """The checks refuse nothing a user means: in-range numbers, floats for whole milliseconds, a docs site."""
    problems: list[str] = []
    settings = Settings.from_options({"pallas": {"debounceMs": 250.0, "traceTimeout": 0.5, "platform": "tpu",
                                                 "logLevel": "debug", "docsUrl": " https://docs.example.com/rules ",
                                                 "select": ["PAL00"], "token": "t", "tracePlatform": "host"}},
                                     problems=problems)
    assert problems == []
    assert (settings.debounce_ms, settings.trace_timeout, settings.platform, settings.log_level, settings.docs_url,
            settings.select) == (250, 0.5, "tpu", "debug", "https://docs.example.com/rules", ["PAL00"])
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("check", "--no-jedi", "k.py", cwd=tmp_path, env_values={
        "PALLAS_LSP_PROBE_TIMEOUT": "2.5", "PALLAS_LSP_TRACE_MEMORY_MB": "0", "PALLAS_LSP_DOCS_URL": "https://x.org/r"})
    assert (run.returncode, run.stderr) == (1, "")


def test_a_number_too_long_for_python_is_clamped_like_any_huge_one(tmp_path):
    """More than 4,300 digits: `int()` refuses it, so `json.loads` did, and `initialize` got a
    ParseError with `id: null` that answers no request."""
    server = WireServer()
    try:
        options = b'{"traceTimeout": 1' + b"0" * 5000 + b'}'
        server.send(b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": null, "rootUri": '
                    + json.dumps(tmp_path.as_uri()).encode() + b', "capabilities": {}, "initializationOptions": '
                    + options + b"}}")
        answer = server.response(0)
        assert answer is not None and "result" in answer, answer
        shown = server.wait_for(lambda m: m.get("method") == "window/showMessage")
        assert shown["params"]["message"] == \
            "pallas-lsp: setting pallas.traceTimeout = inf is over the maximum of 86,400 s: using 86,400 s"
    finally:
        server.kill()
