"""Imports into workspace modules answered without jedi (analysis/workspace_imports.py): the same
answers as jedi's, the same findings, and a changed module changes the answer."""

import ast
import os
import subprocess

import jedi
import pytest

from conftest import at, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.analysis import resolver as project_module  # the resolver, moved out of project.py
from pallas_lsp.analysis.workspace_imports import module_exports
from pallas_lsp.analysis.values import Api, ClassValue


def jax_package() -> str:
    code = "import importlib.util as u; print(u.find_spec('jax').submodule_search_locations[0])"
    return subprocess.run([jax_python(), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def import_bindings(model):
    """Each import statement of a module once (as the resolver's probe has it), with a binding."""
    found = {}
    for scope in model.scopes.values():
        for bindings in scope.bindings.values():
            for binding in bindings:
                statement = project_module._probe_statement(binding) if binding.kind == "import" else None
                if statement is not None:
                    found.setdefault(statement[0], (binding, statement[1]))
    return found


def answers_beside_jedis(project, path, installed=False):
    """{statement: (binding, ours, jedi's)} for each import statement of the module at `path`:
    `workspace_imports`' answer and a fresh jedi probe's (beside the module, as the resolver's)."""
    bindings = import_bindings(project.model(path))
    script = jedi.Script("".join(s + "\n" for s in bindings),
                         path=os.path.join(os.path.dirname(path), project_module.PROBE_NAME),
                         project=project.jedi_project(), environment=project.environment.jedi_env)
    found = {}
    for line, (statement, (binding, column)) in enumerate(bindings.items(), 1):
        ours = project.resolver.workspace_imports.targets(path, binding, installed)
        found[statement] = (binding, ours, tuple(project_module.ImportTarget.of(d)
                                                 for d in script.goto(line, column, follow_imports=True)))
    return found


def answered_as_jedi_answers(root, files: dict, importers: list[str]) -> dict:
    """Write `files` under `root`; the imports of `importers` answered without jedi, as (line, type,
    full name), each checked to be what jedi's goto answers (or left to jedi: None, not listed)."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    project = Project(root=str(root), python=jax_python())
    answered = {}
    for file in importers:
        for statement, (_, answer, jedis) in answers_beside_jedis(project, str(root / file)).items():
            assert answer in (None, jedis), statement
            if answer is not None:
                answered[statement] = [(t.line, t.type, t.full_name) for t in answer]
    return answered


@pytest.mark.slow
def test_answers_are_jedis_for_the_jax_package_as_workspace():
    """Every import of these jax modules that is answered without jedi is answered as jedi's goto
    answers it on a fresh probe (module, name, line, type, dotted names), re-exports included.
    (On the whole package, while developing: 7,653 answers, all equal.)"""
    root = jax_package()
    project = Project(root=root, python=jax_python())
    answered = 0
    for relative in ("experimental/pallas/ops/gpu/collective_matmul_mgpu.py", "experimental/pallas/__init__.py",
                     "experimental/pallas/mosaic_gpu.py", "_src/pallas/mosaic_gpu/primitives.py",
                     "experimental/mosaic/gpu/layout_inference.py", "extend/core/__init__.py"):  # relative ones too
        path = os.path.join(root, relative)
        for statement, (_, ours, jedis) in answers_beside_jedis(project, path).items():
            if ours is not None:
                answered += 1
                assert ours == jedis, (relative, statement)
    assert answered >= 100


PACKAGE = {
    "pkg/__init__.py": "from pkg.bodies import body as body\nfrom pkg import launch as launch\n",
    "pkg/bodies.py": ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
                      "def body(o_ref):\n    s = pl.get_global(plgpu.SemaphoreType.REGULAR)\n"
                      "    pl.semaphore_signal(s)\n    pl.semaphore_wait(s)\n\n"
                      "def bad():\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n"),
    "pkg/launch.py": "from jax.experimental.pallas import mosaic_gpu as plgpu\nfrom pkg.bodies import body\n\n"
                     "k = plgpu.kernel(body, out_type=(), interpret=True)\n",
    "main.py": ("import pkg.bodies as bodies\nfrom pkg import body, launch\nfrom pkg.launch import k\n"
                "from jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
                "k2 = plgpu.kernel(body, out_type=(), interpret=True)\nk3 = plgpu.kernel(bodies.body, out_type=())\n"),
}


def findings(root, name, jedi_free: bool):
    project = Project(root=str(root), python=jax_python())
    if not jedi_free:
        project.resolver.workspace_imports = None
    return [(f.code, f.span.line, f.message) for f in analyze(project, str(root / name))], project


def test_findings_are_the_same_with_and_without_jedi(tmp_path, monkeypatch):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    for name, text in PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for name in PACKAGE:
        ours, project = findings(tmp_path, name, jedi_free=True)
        jedis, _ = findings(tmp_path, name, jedi_free=False)
        assert ours == jedis, name
    assert {code for code, _, _ in findings(tmp_path, "pkg/bodies.py", True)[0]} == {"PAL001", "PAL002"}
    # and main.py's workspace imports were answered without jedi
    model = project.model(str(tmp_path / "main.py"))
    answered = {s for s, (b, _) in import_bindings(model).items()
                if project.resolver.workspace_imports.targets(model.path, b) is not None}
    assert answered == {"import pkg.bodies as bodies", "from pkg import body", "from pkg import launch",
                        "from pkg.launch import k"}


def test_a_changed_module_changes_the_answer(tmp_path, monkeypatch):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    helper = tmp_path / "pkg" / "helper.py"
    helper.write_text("def f():\n    pass\n")
    (tmp_path / "user.py").write_text("from pkg.helper import f\n")
    project = Project(root=str(tmp_path), python=jax_python())
    answers = project.resolver.workspace_imports

    def answer():
        model = project.model(str(tmp_path / "user.py"))
        (binding, _), = import_bindings(model).values()
        return answers.targets(model.path, binding)

    assert [(t.line, t.type, t.full_name) for t in answer()] == [(1, "function", "pkg.helper.f")]
    helper.write_text("\n\nclass f:\n    pass\n")
    assert [(t.line, t.type, t.full_name) for t in answer()] == [(3, "class", "pkg.helper.f")]
    project.set_text(str(helper), "import os\nf = os.getcwd\n")  # unsaved text of an open module
    assert [(t.line, t.type) for t in answer()] == [(2, "statement")]
    helper.write_text("try:\n    from os import getcwd as f\nexcept ImportError:\n    f = None\n")
    project.set_text(str(helper), None)
    assert answer() is None  # bound twice, conditionally: jedi decides


def test_names_jedi_may_resolve_differently_are_left_to_it():
    exports = module_exports(
        "import os\nfrom a.b import c as d\ndef f(): pass\nclass K: pass\nx = 1\ny: int = 2\nz: int\n"
        "twice = 1\ntwice = 2\nif os: cond = 1\ntable = {}\ntable[1] = 2\nn = 0\nn += 1\n"
        "def g():\n    global glob\n    glob = 1\nglob = 0\n(w := 3)\n")
    assert exports.names == {"os": ("module", "os", 1), "d": ("from", 0, "a.b", "c", 2), "f": ("function", 3),
                             "K": ("class", 4), "x": ("statement", 5), "y": ("statement", 6), "g": ("function", 15),
                             "twice": ("statement", 9)}  # the last binding: jedi's flow analysis stops there
    assert {"z", "cond", "table", "n", "glob", "w"} <= exports.unclear and exports.multiple == {"twice"}
    assert not exports.star and module_exports("from m import *\n").star
    assert module_exports("def __getattr__(name): ...\n").star
    assert module_exports("def broken(:\n") is None


def test_global_statements_are_found_however_they_are_written():
    """The tree is walked for `global` statements only where the text may hold one: every spelling
    Python accepts still makes the name jedi's, and the word elsewhere ("get_global") walks nothing."""
    spellings = ["def g():\n    global glob\n", "def g(): global glob\n", "def g():\n    x = 1; global glob\n",
                 "def g():\n\tglobal\tglob\n", "def g():\n    global \\\n        glob\n",
                 "def g():\r    global glob\r", "def g():\r\n    global other, glob\r\n"]
    for text in spellings:
        assert "glob" in module_exports(text + "glob = 0\n").unclear, text
    quiet = module_exports("# the global step\nsem = get_global(1)\nglob = 0\nglobal_step = 1\n")
    assert {"glob", "global_step"} <= set(quiet.names) and not {"glob", "global_step"} & quiet.unclear


TYPING_FLOWS = {
    "lib/__init__.py": "",
    "lib/api.py": ("from typing import TYPE_CHECKING, overload\n\n@overload\ndef jit(f: int) -> int: ...\n"
                   "@overload\ndef jit(f: str) -> str: ...\ndef jit(f):\n    return f\n\n"
                   "if TYPE_CHECKING:\n    def zip2(a): ...\n    def zip2(a, b): ...\nelse:\n    zip2 = zip\n\n"
                   "if not TYPE_CHECKING:\n    jit = staticmethod(jit)\n    hidden = 1\nelse:\n    shown = 2\n"
                   "if TYPE_CHECKING:\n    from lib.space.inner import leaf as leaf\n"),
    "lib/fake.py": "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    def f(): ...\nelse:\n    f = None\n",
    "lib/space/inner/leaf.py": "value = 1\n",  # namespace packages (no __init__) inside a package
    "user.py": ("from lib.api import jit, zip2, shown, hidden, leaf\nfrom lib.fake import f\n"
                "from lib.space.inner import leaf as leaf2\nimport lib.space.inner.leaf as leaf3\n"
                "from lib.space import inner\n"),
}


def test_overloads_type_checking_and_namespace_packages_answered_as_jedi_does(tmp_path, monkeypatch):
    """The last of several top-level bindings, `if [not] TYPE_CHECKING:` branches and namespace
    packages inside a package: answered without jedi where (and only where) jedi's fresh answer is
    surely the same."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    assert answered_as_jedi_answers(tmp_path, TYPING_FLOWS, ["user.py"]) == {
        "from lib.api import jit": [(7, "function", "lib.api.jit")],
        "from lib.api import zip2": [(12, "function", "lib.api.zip2")],
        "from lib.api import shown": [(20, "statement", "lib.api.shown")],
        "from lib.api import leaf": [(1, "module", "lib.space.inner.leaf")],
        "from lib.space.inner import leaf as leaf2": [(1, "module", "lib.space.inner.leaf")],
        "import lib.space.inner.leaf as leaf3": [(1, "module", "lib.space.inner.leaf")],
    }  # `hidden` (unreachable for jedi), `f` (not typing's TYPE_CHECKING), `inner` (a namespace) are jedi's


RELATIVE = {
    "app/__init__.py": "from .bodies import body as body\n",
    "app/bodies.py": "from jax.experimental import pallas as pl\n\ndef body(o_ref):\n    pass\n\nSCALE = 2\n",
    "app/kernels/__init__.py": "",
    "app/kernels/launch.py": ("from .. import bodies\nfrom ..bodies import body, SCALE\nfrom . import helpers as h\n"
                              "from .helpers import tile\nfrom ...outside import nothing\nfrom .missing import gone\n"),
    "app/kernels/helpers.py": "def tile(n):\n    return n\n",
    "loose/script.py": "from . import sibling\n",  # no package: Python refuses it, jedi guesses by folders
    "loose/sibling.py": "",
}


def test_relative_imports_answered_as_jedi_does(tmp_path, monkeypatch):
    """`from .. import m`, `from ..m import name`, `from . import m as h`, `from .m import name`:
    answered without jedi, as jedi's goto answers them (its names for the modules: the importer's
    package as jedi names the file, less the level); a level above the top package, a module that is
    not there and an importer outside any package are left to jedi."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    assert answered_as_jedi_answers(tmp_path, RELATIVE, ["app/kernels/launch.py", "loose/script.py"]) == {
        "from .. import bodies": [(1, "module", "app.bodies")],
        "from ..bodies import body": [(3, "function", "app.bodies.body")],
        "from ..bodies import SCALE": [(6, "statement", "app.bodies.SCALE")],
        "from . import helpers as h": [(1, "module", "app.kernels.helpers")],
        "from .helpers import tile": [(1, "function", "app.kernels.helpers.tile")],
    }


def test_c_modules_answered_with_their_stubs_as_jedi_does(tmp_path, monkeypatch):
    """`import itertools` (built in), `import math`, an extension module with a stub beside it:
    jedi answers the stub module; so do we, without it. Their names stay jedi's."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ext.cpython-312-x86_64-linux-gnu.so").write_bytes(b"")  # not loadable
    (tmp_path / "pkg" / "ext.pyi").write_text("def f() -> int: ...\n")
    (tmp_path / "user.py").write_text("import itertools\nimport itertools as it\nimport gc\nimport math\n"
                                      "from pkg import ext\nimport pkg.ext as ext2\nfrom pkg.ext import f\n"
                                      "from itertools import chain\n")
    project = Project(root=str(tmp_path), python=jax_python())
    path = str(tmp_path / "user.py")
    answered = {}
    for statement, (_, ours, jedis) in answers_beside_jedis(project, path, installed=True).items():
        assert ours in (None, jedis), statement
        if ours is not None:
            answered[statement] = [(os.path.basename(t.module_path), t.line, t.type, t.full_name) for t in ours]
    assert answered == {"import itertools": [("itertools.pyi", 1, "module", "itertools")],
                        "import itertools as it": [("itertools.pyi", 1, "module", "itertools")],
                        "import gc": [("gc.pyi", 1, "module", "gc")],
                        "import math": [("math.pyi", 1, "module", "math")],
                        "from pkg import ext": [("ext.pyi", 1, "module", "pkg.ext")],
                        "import pkg.ext as ext2": [("ext.pyi", 1, "module", "pkg.ext")]}


def test_a_second_start_asks_no_interpreter_for_workspace_and_missing_modules(tmp_path, monkeypatch, interpreter_runs):
    """jax's own modules as the workspace (here a copy of its shape), an import of a module that is
    installed nowhere (jedi answers nothing: it was asked again at every start)."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "project"
    for name, text in PACKAGE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    user = root / "pkg" / "bodies.py"
    user.write_text("import not_installed_anywhere\n" + PACKAGE["pkg/bodies.py"])
    first, expected = findings(root, "pkg/bodies.py", True)
    assert {code for code, _, _ in first} == {"PAL001", "PAL002"} and len(interpreter_runs) == 1  # for its path
    assert expected._environment is None  # the missing module is missing from that path: no jedi
    interpreter_runs.clear()
    interpreter_runs.new_process()
    again, second = findings(root, "pkg/bodies.py", True)
    assert again == first and second._environment is None and interpreter_runs == []

    # An installed module appears: the folders' stamps changed, the interpreter is asked its path again.
    key = second.interpreter_key()
    from pallas_lsp.analysis import disk_cache

    stored = disk_cache.read("sys-path", *key)
    stored[-1][1] = [1, 1]
    disk_cache.write("sys-path", stored, *key)
    interpreter_runs.new_process()
    third_findings, third = findings(root, "pkg/bodies.py", True)
    assert third_findings == first and len(interpreter_runs) == 1


def test_get_global_through_a_workspace_reexport(ws):
    """A body module reached through the package's `__init__` re-export (no jedi for it)."""
    ws.write("kernels/__init__.py", "from kernels.common import pl, plgpu\n")
    ws.write("kernels/common.py", "from jax.experimental import pallas as pl\n"
                                  "from jax.experimental.pallas import mosaic_gpu as plgpu\n")
    source = "from kernels import pl, plgpu\n\ndef body():\n    pl.get_global(plgpu.SemaphoreType.BARRIER)\n"
    assert [(code, span) for code, span, _ in ws.check(source=source)] == [
        ("PAL001", at(source, "pl.get_global(plgpu.SemaphoreType.BARRIER)"))]


CONDITIONAL = "import sys\nif sys.version_info >= (3, 8):\n    def f():\n        pass\nelse:\n    f = None\n"


def test_jedis_workspace_answers_are_kept_on_disk_until_a_file_it_read_changes(tmp_path, monkeypatch):
    """Names `workspace_imports` leaves to jedi (here bound conditionally, re-exported by the
    package): jedi's answer is kept on disk with the stamps of every module it had loaded, so the
    next process asks no interpreter; an edit of the re-exporting `__init__.py` (not the file the
    answer points into) makes jedi answer again, and the new answer is the new file's."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("from pkg.util import f\n")
    (root / "pkg" / "util.py").write_text(CONDITIONAL)
    (root / "pkg" / "other.py").write_text("\n\n" + CONDITIONAL)
    (root / "user.py").write_text("from pkg import f\n")

    def answer():
        project = Project(root=str(root), python=jax_python())
        model = project.model(str(root / "user.py"))
        (binding, _), = import_bindings(model).values()
        assert project.resolver.workspace_imports.targets(model.path, binding) is None  # left to jedi
        targets = project.resolver._import_targets(model, binding)
        project.save_caches()
        return [(os.path.basename(t.module_path), t.line) for t in targets], project._environment is not None

    assert answer() == ([("util.py", 3)], True)
    assert answer() == ([("util.py", 3)], False)  # from disk: no interpreter
    (root / "pkg" / "__init__.py").write_text("from pkg.other import f\n")  # one byte longer: a new stamp
    assert answer() == ([("other.py", 5)], True)
    assert answer() == ([("other.py", 5)], False)


@pytest.mark.slow
def test_jedi_still_answers_after_parsos_cache_was_trimmed(monkeypatch):
    """Trimming parso's cache between answers dropped trees a live probe had loaded; jedi then
    failed (`KeyError`) on later statements of the same probe, whose answer became the import
    statement's fallback (and jedi's own in the next process). Every import of a module with many,
    all sent to jedi here, gets the answer a fresh jedi gives."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    root = jax_package()
    project = Project(root=root, python=jax_python())
    project.resolver.workspace_imports = None  # every import to jedi: dozens of trees loaded and trimmed
    path = os.path.join(root, "_src/pallas/mosaic/lowering.py")
    model = project.model(path)
    bindings = import_bindings(model)
    ours = {statement: project.resolver._import_targets(model, binding) for statement, (binding, _) in bindings.items()}
    statements = list(bindings)
    script = jedi.Script("".join(s + "\n" for s in statements),
                         path=os.path.join(os.path.dirname(path), project_module.PROBE_NAME),
                         project=project.jedi_project(), environment=project.environment.jedi_env)
    fresh = {s: tuple(project_module.ImportTarget.of(d) for d in script.goto(line, bindings[s][1], follow_imports=True))
             for line, s in enumerate(statements, 1)}
    assert ours == fresh
    assert sum(1 for answer in fresh.values() if answer) >= 50


def test_an_unusable_interpreter_leaves_every_answer_to_the_fallback_as_before(tmp_path, monkeypatch):
    """No search path without the interpreter: nothing is answered without jedi, and the analysis
    gives what it gave before (jedi failing too, the import statements decide)."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    for name, text in PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    missing = str(tmp_path / "no-such-env" / "bin" / "python")
    results = []
    for jedi_free in (True, False):
        project = Project(root=str(tmp_path), python=missing)
        if not jedi_free:
            project.resolver.workspace_imports = None
        results.append([(f.code, f.span.line) for name in PACKAGE for f in analyze(project, str(tmp_path / name))])
    assert results[0] == results[1] and results[0] == [("PAL002", 4), ("PAL001", 9)]


def test_imports_into_installed_jax_are_jedis_answers_without_jedi(tmp_path, monkeypatch):
    """A user project importing the installed jax and standard modules: each import jedi would
    answer into site-packages or the standard library's sources is answered from the modules' statements (a first `check` in CI parsed every target module with
    jedi's parser), equal to a fresh jedi probe's answer, with the same findings; a second process
    reads the answers from disk."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "project"
    root.mkdir()
    examples = os.path.join(os.path.dirname(__file__), "..", "examples", "kernels")
    for name in ("pal001_global_buffer.py", "pal002_interpret_semaphore.py"):
        with open(os.path.join(examples, name)) as source:
            (root / name).write_text(source.read())
    (root / "more.py").write_text("import jax.numpy as jnp\nfrom jax.experimental.pallas import tpu as pltpu\n"
                                  "from jax._src.pallas.mosaic_gpu.primitives import get_global\n"
                                  "from jax.experimental.pallas.mosaic_gpu import SemaphoreType, kernel\n"
                                  "import functools\nimport dataclasses as dc\nfrom typing import assert_never\n"
                                  "from contextlib import contextmanager\n")
    project = Project(root=str(root), python=jax_python())
    answered = 0
    for name in ("pal001_global_buffer.py", "pal002_interpret_semaphore.py", "more.py"):
        path = str(root / name)
        for statement, (binding, ours, jedis) in answers_beside_jedis(project, path, installed=True).items():
            assert project.resolver.workspace_imports.targets(path, binding) is None  # not the workspace's
            if ours is not None:
                answered += 1
                assert ours == jedis, (name, statement)
    assert answered >= 16

    for name in ("pal001_global_buffer.py", "pal002_interpret_semaphore.py"):
        monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
        jedis, _ = findings(root, name, jedi_free=False)
        monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
        ours, first = findings(root, name, jedi_free=True)
        assert ours == jedis and ours, name
        assert not first.resolver._probe_scripts  # jedi was asked nothing
        first.resolver.library_answers.save()
        again, second = findings(root, name, jedi_free=True)
        assert again == ours and second._environment is None  # from disk: no interpreter started


def test_a_namespace_folder_in_the_workspace_gives_way_to_the_installed_package(tmp_path, monkeypatch):
    """jax's tests exported beside a `jax/` folder without `__init__.py` (its Pallas sources): the
    path finder goes on past that namespace portion to the installed jax, and so does jedi. Those
    imports are answered without jedi, as jedi's fresh probe answers them; a name that only such
    folders hold (a namespace package) stays jedi's."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    root = tmp_path / "export"
    for name, text in {"jax/experimental/pallas/ops/helpers.py": "def tile(n):\n    return n\n",
                       "spaced/inner/leaf.py": "value = 1\n",
                       "tests/kernel_test.py": ("from jax._src import core\nimport jax.numpy as jnp\n"
                                                "from jax.experimental import pallas as pl\n"
                                                "from jax.experimental.pallas import tpu as pltpu\n"
                                                "from jax._src.pallas.mosaic_gpu.primitives import get_global\n"
                                                "from spaced.inner import leaf\n")}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    project = Project(root=str(root), python=jax_python())
    path = str(root / "tests" / "kernel_test.py")
    answered = {}
    for statement, (binding, ours, jedis) in answers_beside_jedis(project, path, installed=True).items():
        assert ours in (None, jedis), statement
        if ours is not None:
            assert project.resolver.workspace_imports.targets(path, binding) is None  # not the workspace's
            answered[statement] = ours
    assert set(answered) == {"from jax._src import core", "import jax.numpy as jnp",
                             "from jax.experimental import pallas as pl", "from jax.experimental.pallas import tpu as pltpu"}
    assert all(t.module_path.startswith(jax_package()) for answer in answered.values() for t in answer)


def test_standard_names_through_stub_star_imports_and_c_versions_answered_as_jedi_does(tmp_path, monkeypatch):
    """`collections.abc`'s names come through its stub's star import (typeshed's `_collections_abc`,
    then `typing`): jedi's answer is typing.py's binding, and so is ours. `functools.partial` and
    `reduce` are a def/class and then their C version's import: jedi gives both, in an order that
    changes between runs; ours are the same two (the def first), and either order is the same value.
    None of them starts a jedi probe."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    statements = ["from collections.abc import Sequence", "from collections.abc import Callable",
                  "from collections.abc import Iterator as It", "from functools import partial",
                  "from functools import reduce", "from functools import partialmethod"]
    (tmp_path / "user.py").write_text("".join(s + "\n" for s in statements))
    project = Project(root=str(tmp_path), python=jax_python())
    path = str(tmp_path / "user.py")
    model = project.model(path)
    answered = {}
    for statement, (binding, ours, jedis) in answers_beside_jedis(project, path, installed=True).items():
        assert ours is not None and sorted(ours, key=repr) == sorted(jedis, key=repr), statement
        values = {project.resolver._value_from_definition(model, order, binding.lineno)
                  for order in (ours, jedis, jedis[::-1])}
        assert len(values) == 1, statement
        answered[statement] = [(os.path.basename(t.module_path), t.type, t.full_name) for t in ours]
    assert answered == {
        "from collections.abc import Sequence": [("typing.py", "statement", "typing.Sequence")],
        "from collections.abc import Callable": [("typing.py", "statement", "typing.Callable")],
        "from collections.abc import Iterator as It": [("typing.py", "statement", "typing.Iterator")],
        "from functools import partial": [("functools.py", "class", "functools.partial")] * 2,
        "from functools import reduce": [("functools.py", "function", "functools.reduce")] * 2,
        "from functools import partialmethod": [("functools.py", "class", "functools.partialmethod")]}
    fresh = Project(root=str(tmp_path), python=jax_python())
    fresh_model = fresh.model(path)
    for binding, _ in import_bindings(fresh_model).values():
        fresh.resolver.import_value(fresh_model, binding)
    assert not fresh.resolver._probe_scripts  # jedi was asked nothing


def test_only_a_plain_def_then_its_c_version_is_taken_as_one():
    """The C-version pattern is a def or class, then `try: from _c import name` / `except
    ImportError: pass`; anything else binding the name leaves it to jedi."""
    plain = "def f(): pass\nclass K: pass\ntry:\n    from _c import f, K\nexcept ImportError:\n    pass\n"
    assert module_exports(plain).accelerated == {"f": ("function", 1, 4), "K": ("class", 2, 4)}
    for other in ("try:\n    from _c import f\nexcept ImportError:\n    pass\ndef f(): pass\n",  # import first
                  "def f(): pass\ntry:\n    from _c import f\nexcept Exception:\n    pass\n",
                  "def f(): pass\ntry:\n    from _c import f\nexcept ImportError:\n    f = None\n",
                  "def f(): pass\ntry:\n    from _c import f as f\nexcept ImportError:\n    pass\n",
                  "f = 1\ndef f(): pass\ntry:\n    from _c import f\nexcept ImportError:\n    pass\n"):
        exports = module_exports(other)
        assert not exports.accelerated and "f" in exports.unclear, other


def test_a_check_keeps_each_answer_until_a_file_or_text_changes(tmp_path, monkeypatch):
    """With file events trusted and no reads recorded (`check`), an import's answer is kept (by the importer's
    folder, which relative imports and the workspace-only question depend on; an absolute import into installed
    modules for every folder), with what it read: the same answers as asked afresh, each module read once,
    and answered again after a file event or an unsaved text."""
    from pallas_lsp.analysis import reads

    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    for folder in ("pkg", "pkg/a", "pkg/b"):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    helper = tmp_path / "pkg" / "helper.py"
    helper.write_text("def f():\n    pass\n")
    imports = "from pkg.helper import f\nfrom ..helper import f as g\nfrom jax.experimental.pallas import get_global\n"
    users = [tmp_path / "pkg" / "a" / "user.py", tmp_path / "pkg" / "b" / "user.py"]
    for user in users:
        user.write_text(imports)
    fresh = Project(root=str(tmp_path), python=jax_python())
    expected = {str(user): {s: (answer, tuple(fresh.resolver.workspace_imports.read))
                            for s, (binding, _) in import_bindings(fresh.model(str(user))).items()
                            for answer in [fresh.resolver.workspace_imports.targets(str(user), binding, True)]}
                for user in users}
    project = Project(root=str(tmp_path), python=jax_python())
    project.index.trust_events = True
    answers = project.resolver.workspace_imports
    asked = []
    original = answers._targets
    monkeypatch.setattr(answers, "_targets", lambda *args: asked.append(args[2].name) or original(*args))

    def answered(user):
        return {s: (answers.targets(str(user), binding, True), tuple(answers.read))
                for s, (binding, _) in import_bindings(project.model(str(user))).items()}

    with reads.not_tracking():
        assert [answered(user) for user in users] == [expected[str(user)] for user in users]
        assert sorted(asked) == ["f", "f", "f", "get_global"]  # the absolute imports (installed=True) once for both folders
        assert answered(users[0]) == expected[str(users[0])] and len(asked) == 4
        helper.write_text("\n\nclass f:\n    pass\n")
        project.file_changed(str(helper))
        assert [(t.line, t.type) for t in answered(users[0])["from pkg.helper import f"][0]] == [(3, "class")]
        project.set_text(str(helper), "import os\nf = os.getcwd\n")
        assert [(t.line, t.type) for t in answered(users[1])["from ..helper import f as g"][0]] == [(2, "statement")]
    asked.clear()
    answered(users[0])  # recording reads (a server): asked again, every time
    answered(users[0])
    assert len(asked) == 6


def test_standard_enum_classes_are_jedis_answer_without_jedi(tmp_path, monkeypatch):
    """`from enum import Enum` (enum.py binds it twice: left to jedi by the tables) gives the value jedi's answer
    gives, without a jedi probe (the one import jedi answered in tpu-inference's first analysis); an `enum.py`
    at the workspace root is what jedi finds instead, and jedi is asked."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    statements = ["from enum import Enum", "from enum import IntEnum as IE", "from enum import Flag",
                  "from enum import IntFlag"]
    (tmp_path / "pkg").mkdir()
    path = str(tmp_path / "pkg" / "user.py")
    (tmp_path / "pkg" / "user.py").write_text("".join(s + "\n" for s in statements))
    jedis_project = Project(root=str(tmp_path), python=jax_python())
    jedis_model = jedis_project.model(path)
    expected = {statement: jedis_project.resolver._value_from_definition(jedis_model, jedis, binding.lineno)
                for statement, (binding, _, jedis) in answers_beside_jedis(jedis_project, path, installed=True).items()}
    assert expected["from enum import Enum"] == Api("enum.Enum") and expected["from enum import IntEnum as IE"] == Api("enum.IntEnum")
    project = Project(root=str(tmp_path), python=jax_python())
    model = project.model(path)
    ours = {statement: project.resolver.import_value(model, binding)
            for statement, (binding, _) in import_bindings(model).items()}
    assert ours == expected
    assert not project.resolver._probe_scripts  # jedi was asked nothing

    (tmp_path / "enum.py").write_text("class Enum:\n    pass\n")
    shadowed = Project(root=str(tmp_path), python=jax_python())
    shadowed_model = shadowed.model(path)
    binding, _ = import_bindings(shadowed_model)["from enum import Enum"]
    value = shadowed.resolver.import_value(shadowed_model, binding)
    assert isinstance(value, ClassValue) and value.model.path == str(tmp_path / "enum.py")
    assert shadowed.resolver._probe_scripts  # jedi's answer


def test_names_jax_binds_only_by_assignments_are_jedis_answer_without_jedi(tmp_path, monkeypatch):
    """`from jax._src.lib import cuda_versions` (assigned in a loop of `try:`s: the tables leave it to jedi) and every
    other name of these jax modules bound only by assignment statements: the value jedi's answer gives, without a
    jedi probe (jla's first analysis asked jedi that one import); a name also bound by an import is left to jedi."""
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    package = jax_package()
    probe = Project(root=str(tmp_path), python=jax_python())
    statements = []
    for module in ("jax._src.lib", "jax._src.dtypes"):
        path = os.path.join(os.path.dirname(package), *module.split("."))
        path = path + ".py" if os.path.isfile(path + ".py") else os.path.join(path, "__init__.py")
        names = sorted({n.id for n in ast.walk(ast.parse(open(path).read()))
                        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)})
        statements += [f"from {module} import {name}" for name in names
                       if probe.resolver.workspace_imports.assigned_only(module, name)]
    assert "from jax._src.lib import cuda_versions" in statements and len(statements) > 5
    assert probe.resolver.workspace_imports.assigned_only("jax._src.lib", "xla_client") is None  # imported there
    (tmp_path / "user.py").write_text("".join(s + "\n" for s in statements))
    path = str(tmp_path / "user.py")
    jedis_project = Project(root=str(tmp_path), python=jax_python())
    jedis_model = jedis_project.model(path)
    expected = {statement: jedis_project.resolver._value_from_definition(jedis_model, jedis, binding.lineno)
                for statement, (binding, _, jedis) in answers_beside_jedis(jedis_project, path, installed=True).items()}
    project = Project(root=str(tmp_path), python=jax_python())
    model = project.model(path)
    assert {statement: project.resolver.import_value(model, binding)
            for statement, (binding, _) in import_bindings(model).items()} == expected
    assert not project.resolver._probe_scripts  # jedi was asked nothing
