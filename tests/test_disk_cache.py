"""Answers kept on disk between runs: jedi's library import answers (keyed by interpreter, checked
against file stamps) and the import index; a damaged cache file is ignored."""

import os

from conftest import REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

KERNEL = ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
          "def body():\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n")


def findings(root, path):
    project = Project(root=str(root), python=jax_python())
    return project, [(f.code, f.span.line, f.message) for f in analyze(project, str(path))]


def test_second_run_answers_imports_from_disk_without_starting_the_interpreter(tmp_path, monkeypatch, interpreter_runs):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    runs = interpreter_runs
    first, expected = findings(tmp_path, path)
    assert [code for code, _, _ in expected] == ["PAL001"]
    assert len(runs) == 1  # the interpreter ran once, for its path
    assert first._environment is None  # the installed modules answered, found on that path: no jedi
    runs.clear()
    runs.new_process()
    second, again = findings(tmp_path, path)
    assert again == expected
    assert second._environment is None and runs == []  # every import answered from the cache files

    # A module appearing beside the importer may shadow the library: the folder's stamp changed, the
    # kept answers are not used; they are made again from the installed modules (the interpreter's
    # path is on disk too)...
    (tmp_path / "helper.py").write_text("X = 1\n")
    os.utime(tmp_path, ns=(1, 1))
    runs.new_process()
    third, still = findings(tmp_path, path)
    assert still == expected and third._environment is None
    # ... and one that does shadow `jax` (a module, not a package) is jedi's to answer.
    (tmp_path / "jax.py").write_text("X = 1\n")
    os.utime(tmp_path, ns=(2, 2))
    fourth, _ = findings(tmp_path, path)
    assert fourth._environment is not None


def test_damaged_cache_files_are_ignored(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(cache))
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    _, expected = findings(tmp_path, path)
    written = sorted(p.name.split("-")[0] for p in cache.iterdir())
    assert written == ["imports", "jedi", "sys"]  # sys: the interpreter's path (workspace_imports.py)
    for file in cache.iterdir():
        file.write_text('{"format": 1, "key": ')
    _, again = findings(tmp_path, path)
    assert again == expected


LAUNCHED = (REPO / "examples" / "kernels" / "pal001_global_buffer.py").read_text()  # its kernel model asks jax's version


def test_jax_version_comes_from_disk_and_follows_the_metadata_stamp(tmp_path, monkeypatch, interpreter_runs):
    from pallas_lsp.analysis import disk_cache
    from pallas_lsp.analysis.jax_version import jax_version

    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "project").mkdir()
    path = tmp_path / "project" / "kernel.py"
    path.write_text(LAUNCHED)
    runs = interpreter_runs
    first, expected = findings(path.parent, path)
    assert [code for code, _, _ in expected] == ["PAL001"] and len(runs) == 1
    version = jax_version(first)
    assert version is not None and version >= (0, 11)
    runs.clear()
    runs.new_process()
    second, again = findings(path.parent, path)
    assert again == expected and jax_version(second) == version
    assert second._environment is None and runs == []  # neither the import answers nor the version started the interpreter

    # The METADATA file it was read from is not what it was (jax upgraded): the interpreter is asked again.
    key = second.interpreter_key()
    stored = disk_cache.read("jax-version", *key)
    stored[3] = [1, 1]
    disk_cache.write("jax-version", stored, *key)
    runs.clear()
    runs.new_process()
    third = Project(root=str(path.parent), python=jax_python())
    assert jax_version(third) == version and len(runs) == 1
    assert disk_cache.read("jax-version", *key)[3] != [1, 1]


def test_the_server_imports_no_jedi_parso_or_libcst_until_it_needs_them():
    """A start whose import answers and jax version are on disk analyses without them."""
    import subprocess
    import sys

    code = "import sys, pallas_lsp.lsp.server; print(sorted({'jedi', 'parso', 'libcst'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_a_second_run_does_not_rewrite_the_import_index_it_read(tmp_path, monkeypatch):
    """Each file's facts were computed again when asked before the first whole-workspace question
    (the cache file not read yet), and the file rewritten after every analysis of `check`."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(cache))
    (tmp_path / "project").mkdir()
    path = tmp_path / "project" / "kernel.py"
    path.write_text(KERNEL)
    _, expected = findings(path.parent, path)
    (index,) = cache.glob("imports-*")
    written = index.stat().st_ino
    _, again = findings(path.parent, path)
    assert again == expected and index.stat().st_ino == written
