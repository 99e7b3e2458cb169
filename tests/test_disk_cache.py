"""Answers kept on disk between runs: jedi's library import answers (keyed by interpreter, checked
against file stamps) and the import index; a damaged cache file is ignored."""

import os

from conftest import jax_python
from pallas_lsp.analysis import Project, analyze

KERNEL = ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
          "def body():\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n")


def findings(root, path):
    project = Project(root=str(root), python=jax_python())
    return project, [(f.code, f.span.line, f.message) for f in analyze(project, str(path))]


def test_second_run_answers_imports_from_disk_without_starting_the_interpreter(tmp_path, monkeypatch):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    first, expected = findings(tmp_path, path)
    assert [code for code, _, _ in expected] == ["PAL001"]
    assert first._environment is not None  # jedi answered
    second, again = findings(tmp_path, path)
    assert again == expected
    assert second._environment is None  # every import answered from the cache file

    # A module appearing beside the importer may shadow the library: the folder's stamp changed, jedi is asked.
    (tmp_path / "helper.py").write_text("X = 1\n")
    os.utime(tmp_path, ns=(1, 1))
    third, still = findings(tmp_path, path)
    assert still == expected and third._environment is not None


def test_damaged_cache_files_are_ignored(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(cache))
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    _, expected = findings(tmp_path, path)
    written = sorted(p.name.split("-")[0] for p in cache.iterdir())
    assert written == ["imports", "jedi"]
    for file in cache.iterdir():
        file.write_text('{"format": 1, "key": ')
    _, again = findings(tmp_path, path)
    assert again == expected
