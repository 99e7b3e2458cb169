"""Shared test helpers: analyse source text in a temporary project, against a real environment."""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

REPO = Path(__file__).resolve().parents[1]
# The analysis keeps answers in the user's cache folder: tests (and the servers they start) use their own.
os.environ.setdefault("PALLAS_LSP_CACHE_DIR", tempfile.mkdtemp(prefix="pallas-lsp-test-cache-"))
FIXTURES = REPO / "tests" / "fixtures"
# Fixture folders and golden cases may hold a project's own tests (test_*.py a kernel's module ships
# with, run on the CPU under jax): data the analysis reads, not tests.
collect_ignore_glob = ["fixtures/**/test_*.py", "fixes/golden/*/*/test_*.py", "fixes/realistic/*/test_*.py"]


def jax_python() -> str:
    """The Python 3.12 interpreter with jax that the test setup creates (`.venvs/jax`)."""
    path = os.environ.get("PALLAS_LSP_JAX_PYTHON", str(REPO / ".venvs" / "jax" / "bin" / "python"))
    if not os.path.exists(path):
        pytest.fail(f"no jax environment at {path}: run the README's test setup (.ci/run) first", pytrace=False)
    return path


def jax_truth(paths, *options: str) -> dict:
    """What real JAX says about each fixture (`tests/jax_truth.py`), keyed by file name."""
    import json
    import subprocess

    run = subprocess.run([jax_python(), str(REPO / "tests" / "jax_truth.py"), *options, *map(str, paths)],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert run.returncode == 0, run.stderr[-3000:]
    return {Path(k).name: v for k, v in json.loads(run.stdout).items()}


ADDRESS_SPACE = 2 << 30  # what a limited process may map: far above what pallas-lsp needs (~0.4 GiB)


def limit_address_space() -> None:
    """A subprocess's preexec_fn: a memory blow-up fails fast (MemoryError) instead of taking the machine's memory."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# Runs the command as its child and writes the child's peak resident set (KiB) to the file `argv[1]`. A process
# forked from the test process starts with that process's resident pages and keeps them in its peak across
# `exec` (Linux's `maxrss`): after a test that parsed a big text in-process, a 47 MiB `check` read 145 MiB.
# Forked from this small launcher instead, it starts small.
_PEAK_LAUNCHER = """
import os, resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
process = subprocess.Popen(sys.argv[3:])
_, status, usage = os.wait4(process.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_with_peak(args: list[str], cwd) -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, peak resident set in MiB) of a command run under `limit_address_space`:
    its own peak (and its children's), not the largest of every process the test run has waited for, nor
    the test process's own (`_PEAK_LAUNCHER`)."""
    import subprocess

    with tempfile.TemporaryDirectory() as folder:
        peak_file = os.path.join(folder, "peak")
        run = subprocess.run([sys.executable, "-c", _PEAK_LAUNCHER, peak_file, str(ADDRESS_SPACE), *args], cwd=cwd,
                             capture_output=True)
        with open(peak_file) as peak:
            peak_kib = int(peak.read())
    return run.returncode, run.stdout.decode(errors="replace"), run.stderr.decode(errors="replace"), peak_kib / 1024


@pytest.fixture(scope="session")
def jax_env() -> str:
    return jax_python()


@pytest.fixture(scope="session")
def plain_env() -> str:
    """An interpreter without jax: jedi cannot answer, the import fallback must."""
    return sys.executable


def at(source: str, snippet: str, occurrence: int = 1) -> str:
    """1-based `line:col-end_line:end_col` of the n-th occurrence of `snippet` in `source`."""
    source = textwrap.dedent(source)
    index = -1
    for _ in range(occurrence):
        index = source.index(snippet, index + 1)
    line = source.count("\n", 0, index) + 1
    col = index - (source.rfind("\n", 0, index) + 1) + 1
    end = index + len(snippet)
    end_line = source.count("\n", 0, end) + 1
    end_col = end - (source.rfind("\n", 0, end) + 1) + 1
    return f"{line}:{col}-{end_line}:{end_col}"


class Workspace:
    """A temporary project folder; `check` analyses one of its files like `pallas-lsp check` would."""

    def __init__(self, root: Path, python: str, use_jedi: bool = True):
        self.root = root
        self.python = python
        self.use_jedi = use_jedi

    def write(self, name: str, source: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
        return path

    def findings(self, name: str = "kernel.py", source: str | None = None):
        if source is not None:
            self.write(name, source)
        self.project = Project(root=str(self.root), python=self.python, use_jedi=self.use_jedi)
        return analyze(self.project, str(self.root / name))

    def fixes(self, finding):
        """The fixes offered for a finding of the last `findings` call (built on request, verified)."""
        from pallas_lsp.fixes import fixes_for

        return fixes_for(self.project, finding)

    def check(self, name: str = "kernel.py", source: str | None = None) -> list[tuple[str, str, str]]:
        """(code, 1-based range, message) for each finding."""
        result = []
        for f in self.findings(name, source):
            s = f.span
            result.append((f.code, f"{s.line + 1}:{s.column + 1}-{s.end_line + 1}:{s.end_column + 1}", f.message))
        return result


@pytest.fixture
def interpreter_runs(monkeypatch) -> list:
    """The runs of the analysed interpreter (`interpreters.probe_with_path`, which learns its path), as
    they happen; call `.new_process()` on it to forget, as a new process would, the paths learnt."""
    from pallas_lsp import interpreters
    from pallas_lsp.analysis import environment

    class Runs(list):
        def new_process(self) -> None:
            environment._probed.clear()

    runs = Runs()
    runs.new_process()
    real = interpreters._run_bounded
    monkeypatch.setattr(interpreters, "_run_bounded", lambda argv, *a, **k: runs.append(argv) or real(argv, *a, **k))
    return runs


@pytest.fixture
def ws(tmp_path, jax_env) -> Workspace:
    """A workspace analysed against the real jax environment (jedi answers)."""
    return Workspace(tmp_path, jax_env)


@pytest.fixture
def ws_fallback(tmp_path, plain_env) -> Workspace:
    """A workspace whose environment has no jax (jedi cannot answer; imports decide)."""
    return Workspace(tmp_path, plain_env)


ANY_VERSION = object()


def _record_publishes() -> None:
    """Every test client keeps the publishDiagnostics it received, so `publish_for` also finds one
    that arrived before the test started waiting (pytest-lsp's `wait_for_notification` only sees
    the ones after: under load the answer to a request and a publish can come in one read)."""
    import pytest_lsp.client as client_module
    from lsprotocol import types

    original = client_module.DEFAULT_CLIENT_FEATURES[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(ls, params):  # pygls passes the client first to a parameter named `ls`
        ls.__dict__.setdefault("pallas_published", []).append(params)
        arrived = ls.__dict__.get("pallas_published_arrived")
        if arrived is not None:
            arrived.set()
        return original(ls, params)

    client_module.DEFAULT_CLIENT_FEATURES[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record


_record_publishes()


async def publish_for(client, uri: str, version=ANY_VERSION, timeout: float = 30.0):
    """The next publishDiagnostics for `uri` (and `version`, when given) after those an earlier
    call returned or passed over, whether it came before this call or comes later."""
    import asyncio

    async def wait():
        while True:
            log = client.__dict__.setdefault("pallas_published", [])
            for index in range(client.__dict__.get("pallas_published_seen", 0), len(log)):
                params = log[index]
                if params.uri == uri and (version is ANY_VERSION or params.version == version):
                    client.pallas_published_seen = index + 1
                    return params
            client.pallas_published_seen = len(log)
            arrived = client.pallas_published_arrived = asyncio.Event()
            await arrived.wait()
    return await asyncio.wait_for(wait(), timeout)


async def publish_with_findings(client, uri: str, version=ANY_VERSION, timeout: float = 30.0):
    """The next publishDiagnostics for `uri` (and `version`) that holds diagnostics: a document's first
    publish may be a first pass's, which leaves out the rules needing the kernels of the modules
    importing it (analysis/first_pass.py); the whole analysis's follows where it adds something."""
    while True:
        params = await publish_for(client, uri, version, timeout)
        if params.diagnostics:
            return params


async def code_actions_json(client, params, timeout: float = 60.0) -> list[dict]:
    """The code actions as the server sent them (JSON). lsprotocol reads a CodeAction that carries
    a `command` back as a Command (the union's first member), losing its kind."""
    import asyncio
    import uuid

    from lsprotocol import types

    msg_id = str(uuid.uuid4())
    future = client.protocol.send_request(types.TEXT_DOCUMENT_CODE_ACTION, params, msg_id=msg_id)
    client.protocol._result_types[msg_id] = None  # no result type: the response keeps its JSON
    response = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    return response or []
