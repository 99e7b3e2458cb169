"""`check` starts worker processes only for work that outweighs starting them (check_jobs.py): the
parent analyses files too, a worker needs a share of `BYTES_PER_WORKER` of Pallas code, no more
processes than one group of files lets work, and no CPU that other processes keep busy."""

import json
import os
import subprocess
import sys

import pytest

from pallas_lsp import check_jobs
from pallas_lsp.check_jobs import BYTES_PER_WORKER, extra_workers
from test_cli import BAD, GOOD


def test_a_small_check_starts_no_worker(tmp_path, jax_env):
    """A dozen kernel files: a worker would start a process and an interpreter, and model the
    modules they read again, for less work than that: one process, whatever `--jobs` says."""
    (tmp_path / "pyproject.toml").write_text(f'[tool.pallas-lsp]\npython = "{jax_env}"\n')
    for index in range(12):
        (tmp_path / f"kernel_{index:02}.py").write_text(BAD if index % 2 else GOOD)
    env = {key: value for key, value in os.environ.items() if key != "PALLAS_LSP_CHECK_WORKERS"}
    runs = [subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--verbose", "--format", "json", "--jobs", jobs, "."],
                           capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env) for jobs in ("1", "8")]
    assert runs[1].stdout == runs[0].stdout and len(json.loads(runs[0].stdout)) == 6
    assert "worker processes started" not in runs[1].stderr


@pytest.fixture
def idle_machine(monkeypatch):
    """Eight CPUs, none busy but for this process."""
    monkeypatch.delenv("PALLAS_LSP_CHECK_WORKERS", raising=False)
    monkeypatch.setattr(check_jobs, "default_jobs", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))


TENTH = BYTES_PER_WORKER // 10  # a folder's files that can matter, say


def test_a_worker_for_each_share_of_work(idle_machine):
    assert extra_workers([TENTH] * 30, jobs=8) == 3
    assert extra_workers([TENTH] * 300, jobs=8) == 7  # --jobs 8: the parent and seven workers
    assert extra_workers([TENTH] * 300, jobs=3) == 2
    assert extra_workers([TENTH] * 9, jobs=8) == 0  # less than a share beyond the parent's


def test_no_more_workers_than_the_heaviest_group_lets_work(idle_machine):
    """One group of files (a folder) is analysed by one process: with half of the work in it, a
    second process can take the rest, a third would wait."""
    assert extra_workers([12 * TENTH, 4 * TENTH, 4 * TENTH, 4 * TENTH], jobs=8) == 1
    assert extra_workers([20 * TENTH, TENTH], jobs=8) == 0


def test_no_worker_for_cpus_other_processes_keep_busy(monkeypatch, idle_machine):
    monkeypatch.setattr(os, "getloadavg", lambda: (6.0, 6.0, 6.0))  # this process and five others
    assert extra_workers([TENTH] * 300, jobs=8) == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (7.5, 7.5, 7.5))
    assert extra_workers([TENTH] * 300, jobs=8) == 0


def test_the_environment_chooses_instead(monkeypatch, idle_machine):
    monkeypatch.setenv("PALLAS_LSP_CHECK_WORKERS", "3")
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert extra_workers([10] * 2, jobs=8, pieces=12) == 3
    assert extra_workers([10] * 2, jobs=2, pieces=12) == 1


def test_a_folders_files_that_can_matter_are_one_task(tmp_path):
    """A kernel's module, its tests and its helpers sit in one folder and read each other: one process
    analyses them all, so their models are made once (in 150 kB groups a worker modelled again two
    thirds of what the parent did on tokamax). Files that cannot matter go in batches."""
    files = []
    for folder, count, size in (("big", 12, 40_000), ("small", 3, 1_000)):
        (tmp_path / folder).mkdir()
        for index in range(count):
            path = tmp_path / folder / f"m{index}.py"
            path.write_text("x = 1\n" + "#" * size)
            files.append(str(path))
    cheap = list(range(len(files), len(files) + 70))
    files += [str(tmp_path / f"plain_{index}.py") for index in range(70)]
    tasks = check_jobs._tasks(files, list(range(15)), cheap)
    groups = [sorted(task) for _, task in tasks]
    assert groups[0] == list(range(12)) and tasks[0][0] > 12 * 40_000  # the heaviest first, whole
    assert list(range(12, 15)) in groups
    assert sorted(len(task) for _, task in tasks if task[0] >= 15) == [6, check_jobs.CHEAP_BATCH]


def test_a_forked_worker_asks_its_own_jedi_interpreter(tmp_path, jax_env):
    """A worker forked from the parent must not write to the parent's pipe to jedi's interpreter (their
    questions would interleave): it keeps the parent's handle (letting it go would end that process),
    drops the jedi states made on it, and its next question starts an interpreter of its own."""
    import jedi

    from pallas_lsp.analysis import Project

    project = Project(root=str(tmp_path), python=jax_env)
    jedi_env = project.environment.jedi_env

    def ask():  # a compiled module's value: answered by jedi's interpreter
        script = jedi.Script("import sys\nsys.maxsize\n", environment=jedi_env)
        return [name.name for name in script.infer(2, 5)]

    assert ask() == ["int"]
    parents = jedi_env._subprocess
    try:
        check_jobs._own_jedi(project)
        assert jedi_env._subprocess is None and check_jobs._inherited_jedi[-1] is parents
        assert not project.resolver._probe_scripts
        assert ask() == ["int"]
        assert jedi_env._subprocess is not parents
        assert jedi_env._subprocess._get_process().pid != parents._get_process().pid
        assert parents._get_process().poll() is None  # the parent's interpreter still runs
    finally:
        check_jobs._inherited_jedi.remove(parents)


def test_no_worker_that_would_model_again_more_than_it_takes_over(tmp_path):
    """Two folders that both import the package's big core module: a worker checking one of them models
    the core again (as maxtext's folders all import its layers), for less work than that: not started.
    Folders that import nothing of each other's keep their worker."""
    from pallas_lsp.analysis import Project

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("x = 1\n" + "#" * 400_000)
    files = []
    for folder in ("a", "b"):
        (package / folder).mkdir()
        (package / folder / "__init__.py").write_text("")
        for index in range(3):
            path = package / folder / f"m{index}.py"
            path.write_text(f"from pkg import core\nfrom .. import {folder}\n" + "#" * 50_000)
            files.append(str(path))
    project = Project(root=str(tmp_path))
    tasks = check_jobs._tasks(files, list(range(len(files))), [])
    assert check_jobs._not_repeating_more(project, files, tasks, 1) == 0
    (package / "core.py").write_text("x = 1\n")
    project = Project(root=str(tmp_path))
    assert check_jobs._not_repeating_more(project, files, tasks, 1) == 1


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_forked_and_spawned_workers_find_what_one_process_finds(tmp_path, monkeypatch, start):
    """Linux forks the workers, other systems spawn them: both give the findings one process gives."""
    import multiprocessing

    from pallas_lsp.analysis import Project, reads
    from pallas_lsp.engine import selected_codes

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for index in range(3):
            (tmp_path / folder / f"kernel_{index}.py").write_text(BAD if index % 2 else GOOD)
    files = sorted(str(path) for path in tmp_path.rglob("*.py"))
    codes = selected_codes(None, None)
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(tmp_path / "cache"))
    with reads.not_tracking():
        alone = check_jobs.analyze_files(Project(root=str(tmp_path), use_jedi=False), files, codes, 1)
        monkeypatch.setenv("PALLAS_LSP_CHECK_WORKERS", "1")
        monkeypatch.setattr(check_jobs, "_worker_context", lambda: multiprocessing.get_context(start))
        together = check_jobs.analyze_files(Project(root=str(tmp_path), use_jedi=False), files, codes, 2)
    assert [[(f.code, f.span, f.message) for f in found] for found, _ in together] == \
        [[(f.code, f.span, f.message) for f in found] for found, _ in alone]
    assert sum(len(found) for found, _ in alone) == 2
