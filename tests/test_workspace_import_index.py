"""The workspace import index: who imports a module (from import statements), and which files can matter."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import at, jax_python, publish_for
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.analysis.import_index import scan

HEADER = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n"
SEM = "pl.get_global(plgpu.SemaphoreType.REGULAR)"
BODY = f"def body(o_ref):\n    s = {SEM}\n    pl.semaphore_signal(s)\n    pl.semaphore_wait(s)\n"
LAUNCH = "def run(x):\n    return plgpu.kernel(example.body, out_type=(), interpret=True)(x)\n"


def test_scan_reads_import_statements_not_mentions():
    facts = scan(b'"""Mentions example and get_global in prose."""\n'
                 b"import os.path as osp, sys  # a comment\n"
                 b"from .pkg import (a as b,  # why\n    c)\n"
                 b"from .. import up\n"
                 b"x = 1; import late\n"
                 b"def f():\n    from deep.module import thing\n"
                 b"text = 'example'\n"
                 b"important = 'not an import'\n")
    assert facts.imports == ("os.path", "sys", ".pkg", ".pkg.a", ".pkg.c", "..", "..up", "late",
                             "deep.module", "deep.module.thing")
    assert (facts.mentions_pallas, facts.mentions_interpret) == (True, False)


def workspace(tmp_path, files: dict[str, str]) -> Project:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Project(root=str(tmp_path), python=jax_python())


def names(models) -> list[str]:
    return [m.path.rsplit("/", 1)[-1] for m in models]


def test_importers_are_the_modules_importing_it_not_those_naming_it(tmp_path):
    project = workspace(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/example.py": HEADER + BODY,
        "pkg/relative.py": "from . import example\n",
        "pkg/from_module.py": "from .example import body\n",
        "absolute.py": "import pkg.example as ex\n",
        "mentions.py": "import os\n# see example.py; example = 1\n",
        "other_example.py": "from somewhere_else import example\n",
        "docs.py": '"""Run: python -m example"""\nimport sys\n',
    })
    model = project.model(str(tmp_path / "pkg" / "example.py"))
    assert names(project.importers(model)) == ["absolute.py", "from_module.py", "relative.py"]
    # Modules that only mention it were neither parsed into models nor shown to jedi.
    assert not {"mentions.py", "other_example.py", "docs.py"} & {p.rsplit("/", 1)[-1] for p in project._models}


def test_files_that_cannot_matter_are_only_compiled(tmp_path):
    project = workspace(tmp_path, {
        "helpers.py": HEADER + f"def grab():\n    return {SEM}\n",
        "reexport.py": "from helpers import grab as take\n",
        "user.py": "from reexport import take\n\ndef body(o_ref):\n    take()\n",
        "plain.py": "import os\n\ndef body(o_ref):\n    os.getcwd()\n",
        "broken.py": "import os\ndef f(:\n",
    })
    assert [project.can_matter(str(tmp_path / name)) for name in ("helpers.py", "reexport.py", "user.py", "plain.py")] \
        == [True, True, True, False]
    assert analyze(project, str(tmp_path / "plain.py")) == []
    assert str(tmp_path / "plain.py") not in project._models
    assert [(f.code, f.span.line) for f in analyze(project, str(tmp_path / "broken.py"))] == [("PAL000", 1)]


def test_unsaved_texts_and_file_events_update_the_index(tmp_path):
    project = workspace(tmp_path, {"example.py": HEADER + BODY, "launch.py": "import os\n"})
    kernel, launch = str(tmp_path / "example.py"), str(tmp_path / "launch.py")
    model = project.model(kernel)
    project.index.trust_events = True  # as in a server whose client reports file events
    assert project.importers(model) == []
    project.set_text(launch, HEADER + "import example\n" + LAUNCH)
    assert names(project.importers(model)) == ["launch.py"]
    project.set_text(launch, None)
    assert project.importers(model) == []
    (tmp_path / "new.py").write_text(HEADER + "import example\n" + LAUNCH)
    assert project.importers(model) == []  # no event yet: trusted
    project.file_changed(str(tmp_path / "new.py"))
    assert names(project.importers(model)) == ["new.py"]
    (tmp_path / "new.py").unlink()
    project.file_changed(str(tmp_path / "new.py"))
    assert project.importers(model) == []


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("watched")
    (root / "example.py").write_text(HEADER + BODY)
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        lsp_client.registrations.extend(params.registrations)

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True))),
        root_uri=root.as_uri(), initialization_options={"python": jax_python(), "debounceMs": 0}))
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_server_learns_of_a_new_importer_from_a_file_event(client: LanguageClient):
    root = client.root
    uri = (root / "example.py").as_uri()
    text = (root / "example.py").read_text()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    assert list((await publish_for(client, uri, 1)).diagnostics) == []
    assert [(r.method, r.register_options["watchers"][0]["globPattern"]) for r in client.registrations] == [
        (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, "**/*.py")]

    (root / "launch.py").write_text(HEADER + "import example\n" + LAUNCH)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(root / "launch.py").as_uri(), type=types.FileChangeType.Created)]))
    (diagnostic,) = (await publish_until(client, uri, lambda diagnostics: diagnostics)).diagnostics
    start, end = at(text, SEM).split("-")
    assert (diagnostic.code, diagnostic.severity) == ("PAL002", types.DiagnosticSeverity.Error)
    assert (f"{diagnostic.range.start.line + 1}:{diagnostic.range.start.character + 1}",
            f"{diagnostic.range.end.line + 1}:{diagnostic.range.end.character + 1}") == (start, end)

    (root / "launch.py").unlink()
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(root / "launch.py").as_uri(), type=types.FileChangeType.Deleted)]))
    assert list((await publish_until(client, uri, lambda diagnostics: not diagnostics)).diagnostics) == []


async def publish_until(client, uri, wanted, timeout: float = 60.0):
    """The first publish for `uri` whose diagnostics are `wanted` (an open may publish more than once)."""
    import asyncio

    async def wait():
        while True:
            params = await publish_for(client, uri, 1, timeout)
            if wanted(list(params.diagnostics)):
                return params
    return await asyncio.wait_for(wait(), timeout)


def test_walks_leave_out_what_is_not_the_projects_code(tmp_path):
    (tmp_path / ".git").mkdir()  # a git repository: its .gitignore files apply
    files = ["kernel.py", "pkg/mod.py", "pkg/generated/out.py", "pkg/keep.log.py", "notes/draft.py",
             "build/lib/kernel.py", "dist/x.py", "node_modules/a/b.py", "lib/site-packages/jax/c.py",
             "myenv/lib/d.py", ".venv/lib/e.py", "third_party/f.py", "tests/fixtures/deep/g.py", "tests/test_h.py"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import os\n")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / ".gitignore").write_text("# generated code\ngenerated/\n*.log.py\n/notes\n")
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\nextend-exclude = ["third_party", "tests/fixtures/**"]\n')
    from pallas_lsp.analysis.project import iter_python_files

    walked = sorted(str(p.relative_to(tmp_path)) for p in map(Path, iter_python_files(str(tmp_path))))
    assert walked == ["kernel.py", "pkg/mod.py", "tests/test_h.py"]
    project = Project(root=str(tmp_path), python=jax_python())
    assert [project.is_workspace_file(str(tmp_path / name)) for name in ("pkg/mod.py", "pkg/generated/out.py",
                                                                          "third_party/f.py", "myenv/lib/d.py")] \
        == [True, False, False, False]

    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\nexclude = ["pkg"]\n')
    walked = sorted(str(p.relative_to(tmp_path)) for p in map(Path, iter_python_files(str(tmp_path))))
    assert walked == ["build/lib/kernel.py", "dist/x.py", "kernel.py", "lib/site-packages/jax/c.py",
                      "node_modules/a/b.py", "tests/fixtures/deep/g.py", "tests/test_h.py", "third_party/f.py"]


def test_check_skips_excluded_folders_but_checks_a_file_named_explicitly(tmp_path):
    bad = HEADER + "def body(o_ref):\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n"
    (tmp_path / "pyproject.toml").write_text(f'[tool.pallas-lsp]\npython = "{jax_python()}"\n')
    for name in ("kernel.py", "build/kernel.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(bad)

    def check(*paths):
        run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", *paths],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300)
        return sorted((f["path"], f["code"]) for f in json.loads(run.stdout))

    assert check(".") == [("kernel.py", "PAL001")]
    assert check(".", "build/kernel.py") == [("build/kernel.py", "PAL001"), ("kernel.py", "PAL001")]


IMPORTS_EXAMPLE = HEADER + "import example\n" + LAUNCH


def unscanned(project, name) -> bool:
    from pallas_lsp.analysis.import_index import Unscanned

    return isinstance(project.index._disk[str(project.root) + "/" + name][1], Unscanned)


def test_an_importer_question_scans_only_files_whose_imports_name_the_module(tmp_path, monkeypatch):
    """The first diagnostics of a kernel file in a big workspace wait for the files whose import
    statements name its module, not for every file's facts; those come later, the same as a whole scan."""
    from pallas_lsp.analysis import import_index

    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    files = {"example.py": HEADER + BODY, "launch.py": IMPORTS_EXAMPLE,
             "prose.py": '"""An example: import example first."""\nimport os\nexample = 1\n',
             "unrelated.py": "import os\n", "pkg/__init__.py": "", "pkg/helper.py": HEADER + "from .unrelated import x\n"}
    project = workspace(tmp_path / "ws", files)
    model = project.model(str(tmp_path / "ws" / "example.py"))
    assert names(project.importers(model)) == ["launch.py"]
    assert [unscanned(project, name) for name in ("launch.py", "prose.py", "unrelated.py", "pkg/helper.py")] \
        == [False, True, True, True]

    steps = 1
    while not project.index.complete_some(limit=2):
        steps += 1
    assert steps == 3  # five files (the kernel file's own imports do not name it either), two per step
    for name, text in files.items():
        assert project.index.facts(str(tmp_path / "ws" / name)) == import_index.scan(text.encode())
    project.save_caches()

    # The next process asks the same question (and the whole-workspace one) without reading a file.
    monkeypatch.setattr(import_index, "_read", lambda path: pytest.fail(f"read {path}"))
    again = Project(root=str(tmp_path / "ws"), python=jax_python())
    assert names(again.importers(again.model(str(tmp_path / "ws" / "example.py")))) == ["launch.py"]
    assert [again.can_matter(str(tmp_path / "ws" / name)) for name in ("unrelated.py", "pkg/helper.py")] == [False, True]


@pytest.mark.parametrize("trust_events", [False, True])
def test_a_file_left_unscanned_that_starts_importing_the_module_is_found(tmp_path, monkeypatch, trust_events):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    project = workspace(root, {"example.py": HEADER + BODY, "launch.py": "import os\n", "prose.py": "example = 1\n"})
    project.index.trust_events = trust_events
    model = project.model(str(root / "example.py"))
    assert project.importers(model) == []
    assert unscanned(project, "launch.py") and unscanned(project, "prose.py")
    project.set_text(str(root / "prose.py"), IMPORTS_EXAMPLE)  # an unsaved text
    assert names(project.importers(model)) == ["prose.py"]
    project.set_text(str(root / "prose.py"), None)
    assert project.importers(model) == []
    (root / "launch.py").write_text(IMPORTS_EXAMPLE + "\n")  # saved: a new stamp (and, trusted, an event)
    project.file_changed(str(root / "launch.py"))
    assert names(project.importers(model)) == ["launch.py"]
    project.save_caches()
    # A process started from that cache file finds the same.
    again = Project(root=str(root), python=jax_python())
    again.index.trust_events = trust_events
    assert names(again.importers(again.model(str(root / "example.py")))) == ["launch.py"]
    # What the earlier process left unscanned is scanned in this one's idle time.
    assert not again.index.complete_some(limit=0)
    assert again.index.complete_some() and not unscanned(again, "prose.py")


def test_cache_writes_of_processes_at_the_same_time_are_merged(tmp_path, monkeypatch):
    """A process that left files unscanned does not overwrite another's facts of them."""
    from pallas_lsp.analysis.import_index import FileFacts

    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    files = {"example.py": HEADER + BODY, "launch.py": IMPORTS_EXAMPLE, "a.py": "import os\n", "b.py": "import sys\n"}
    first = workspace(root, files)
    first.importers(first.model(str(root / "example.py")))  # a.py and b.py left unscanned
    second = Project(root=str(root), python=jax_python())
    assert not second.can_matter(str(root / "a.py"))  # a question about every file: all scanned
    second.save_caches()
    (root / "c.py").write_text("import re\n")
    first.file_changed(str(root / "c.py"))
    first.importers(first.model(str(root / "example.py")))  # dirty again (c.py): written after the other
    first.save_caches()
    third = Project(root=str(root), python=jax_python())
    third.index._load()
    assert {Path(path).name: isinstance(facts, FileFacts) for path, (_, facts) in third.index._disk.items()} == {
        "example.py": True, "launch.py": True, "a.py": True, "b.py": True, "c.py": False}


def test_check_writes_each_cache_file_once(tmp_path, monkeypatch):
    """Not after every analysed file: a big workspace's index is megabytes."""
    from pallas_lsp import cli
    from pallas_lsp.analysis import disk_cache

    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    # Kernel files without a get_global: no question about the whole workspace, so each file's own
    # facts (and jedi's answers for its own imports) were new after every analysis.
    workspace(root, {f"k{i}.py": HEADER + ("import functools\n", "import math\n", "import os\n")[i]
                     + "def body(o_ref):\n    o_ref[...] = 1\n" for i in range(3)})
    writes = []
    write = disk_cache.write
    monkeypatch.setattr(disk_cache, "write", lambda kind, *args: (writes.append(kind), write(kind, *args)))
    assert cli.main(["check", "--jobs", "1", "--python", jax_python(), str(root)]) == 0
    assert sorted(set(writes)) == sorted(writes) and "imports" in writes


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def plain_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("unwatched")
    for name, text in {"example.py": HEADER + BODY, "prose.py": "example = 1\n", "other.py": "import os\n"}.items():
        (root / name).write_text(text)
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 0}))
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_server_completes_and_writes_the_index_after_the_first_diagnostics(plain_client: LanguageClient):
    """The first diagnostics waited only for the files naming the module; the rest of the index is
    scanned afterwards and written for the next start."""
    import asyncio

    from pallas_lsp.analysis import disk_cache

    root = plain_client.root
    uri = (root / "example.py").as_uri()
    plain_client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=(root / "example.py").read_text())))
    assert list((await publish_for(plain_client, uri, 1)).diagnostics) == []
    for _ in range(600):
        stored = disk_cache.read("imports", str(root)) or {}
        if len(stored) == 2 and all(len(entry) == 5 for entry in stored.values()):
            break
        await asyncio.sleep(0.1)
    # The open document's facts come from its text, never from the cache file.
    assert {Path(path).name: entry[2:] for path, entry in stored.items()} == {
        "prose.py": [False, False, []], "other.py": [False, False, ["os"]]}


def test_the_walk_leaves_out_what_excludes_says_in_os_walk_order(tmp_path):
    """The walk decides per folder listing (no stat per file, .gitignore and pyvenv.cfg seen in the
    listing); it must give what asking `excludes` of every path in `os.walk` order gives."""
    import os

    from pallas_lsp.analysis.exclusions import Exclusions

    (tmp_path / ".git").mkdir()
    for name in ["a.py", "b/c.py", "b/skip.py", "b/d/e.py", "b/d/gen_x.py", "env2/lib/f.py", ".hidden/g.py",
                 "node_modules/h.py", "k/l/m.py", "k/n.txt", "z.py", "b/d/keep/o.py", "b/d/out/p.py"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import os\n")
    (tmp_path / "env2" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / ".gitignore").write_text("skip.py\n/k/l\n")
    (tmp_path / "b" / "d" / ".gitignore").write_text("gen_*.py\nout/\n")
    (tmp_path / "b" / "loop").symlink_to(tmp_path / "b")
    (tmp_path / "b" / "linked.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\nextend-exclude = ["b/d/keep"]\n')

    def reference(exclusions, folder):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not exclusions.excludes(os.path.join(dirpath, d), True))
            yield from (os.path.join(dirpath, name) for name in sorted(filenames)
                        if name.endswith(".py") and not exclusions.excludes(os.path.join(dirpath, name), False))

    walked = list(Exclusions.for_folder(str(tmp_path)).walk(str(tmp_path)))
    assert walked == list(reference(Exclusions.for_folder(str(tmp_path)), str(tmp_path)))
    assert [str(Path(p).relative_to(tmp_path)) for p in walked] == ["a.py", "z.py", "b/c.py", "b/linked.py", "b/d/e.py"]


def test_a_file_changed_between_two_processes_is_read_again_when_events_are_trusted(tmp_path, monkeypatch):
    """Trusting file events (a server whose client sends them, `check`) holds within a process: what
    the cache file says of a file is checked against its stamp once in the next one."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    first = workspace(root, {"example.py": HEADER + BODY, "launch.py": "import os\n"})
    first.index.trust_events = True
    assert first.importers(first.model(str(root / "example.py"))) == [] and first.can_matter(str(root / "launch.py")) is False
    first.save_caches()
    (root / "launch.py").write_text(IMPORTS_EXAMPLE)  # while no process runs
    second = Project(root=str(root), python=jax_python())
    second.index.trust_events = True
    assert names(second.importers(second.model(str(root / "example.py")))) == ["launch.py"]


def test_questions_about_many_modules_scan_every_file_once(tmp_path, monkeypatch):
    """A check of many files asks about many modules: after a few, every file is scanned once
    instead of being read again for each module."""
    from pallas_lsp.analysis import import_index

    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    modules = [f"m{i}" for i in range(import_index.PREFILTERED_MODULES + 2)]
    project = workspace(root, {**{f"{m}.py": HEADER + BODY for m in modules}, "user.py": "import m0\n",
                               **{f"other{i}.py": "import os\n" for i in range(5)}})
    reads = []
    read = import_index._read
    monkeypatch.setattr(import_index, "_read", lambda path: (reads.append(path), read(path))[1])
    found = {m: names(project.importers(project.model(str(root / f"{m}.py")))) for m in modules}
    assert found == {m: ["user.py"] if m == "m0" else [] for m in modules}
    files = len(modules) + 6
    # The first pass reads every file (user.py is scanned then), the next ones and the whole scan
    # the others; the last module's question reads nothing.
    assert len(reads) == files + import_index.PREFILTERED_MODULES * (files - 1)
    assert not any(unscanned(project, f"other{i}.py") for i in range(5))


# A vendored package whose modules import a `core` of their own (jax's `from . import core`, `from
# jax._src import core`), beside a top-level kernel file named core.py.
VENDORED_CORE = {
    "core.py": HEADER + BODY,
    "vendored/__init__.py": "",
    "vendored/core.py": "INTERPRET = True\n",
    "vendored/relative.py": "from . import core\nfrom .core import INTERPRET\ninterpret = INTERPRET\n",
    "vendored/absolute.py": "from vendored import core\nimport vendored.core as c\ninterpret = True\n",
    "vendored/sub/__init__.py": "",
    "vendored/sub/up.py": "from .. import core\ninterpret = True\n",
    # Not a package (no __init__.py): Python refuses its relative import, and `lib.core` is no file here.
    "scripts/tool.py": "from . import core\nfrom lib import core as other\ninterpret = True\n",
}


def test_a_vendored_packages_own_core_imports_are_not_importers_of_a_top_level_core(tmp_path):
    project = workspace(tmp_path, VENDORED_CORE)
    assert project.importers(project.model(str(tmp_path / "core.py"))) == []
    assert sorted(p.rsplit("/", 1)[-1] for p in project._models) == ["core.py"]  # nothing else modelled
    vendored_core = project.model(str(tmp_path / "vendored" / "core.py"))
    assert names(project.importers(vendored_core)) == ["absolute.py", "relative.py", "up.py"]

    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--verbose", "--python", jax_python(), "core.py"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert (run.returncode, run.stdout) == (0, "All checks passed! (1 file checked)\n"), run.stderr
    assert ("pallas-lsp: debug: importers of core: 0 of the 4 files whose imports name a 'core' import this one "
            "(only those are modelled)") in run.stderr


def test_a_real_importer_of_a_top_level_core_still_gives_its_pal002(tmp_path):
    files = {**VENDORED_CORE, "launch.py": HEADER + "import core\n" + LAUNCH.replace("example.", "core.")}
    project = workspace(tmp_path, files)
    assert names(project.importers(project.model(str(tmp_path / "core.py")))) == ["launch.py"]
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--verbose", "--format", "json", "--python",
                          jax_python(), "core.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 1, run.stderr
    (finding,) = json.loads(run.stdout)
    assert (finding["path"], finding["code"], finding["line"]) == ("core.py", "PAL002", 4)
    # Through launch.py only: without it the same core.py passes (the test above).
    assert finding["message"].startswith("JAX: \"TypeError: No ir_type_handler for aval type")
    assert "importers of core: 1 of the 5 files whose imports name a 'core' import this one" in run.stderr
