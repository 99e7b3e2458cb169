"""`pallas-lsp check` over many files on every core: worker processes over files, as ruff does.

The parent sorts the files with the import index: files that can matter (a few expensive analyses
each) go out one at a time, the rest (only compiled, for PAL000) in batches. Each worker has its own
`Project` on the same root and interpreter; the index, the interpreter's `sys.path` and jax's version
come from the cache files the parent just wrote, and the import answers a worker learns go back to
the parent, which writes them once. Findings come back per file and are put together in the order of
the files, so the output is the one a single process gives. One file, `--jobs 1`, or too little work: one process.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from .analysis import Finding, Project
from .engine import analyze
from .analysis.exclusions import Exclusions
from .analysis.jax_version import jax_version
from .analysis.notebooks import InvalidNotebook, invalid_notebook_finding, is_notebook
from .source_text import quiet_compile_warnings, skip_reason

log = logging.getLogger(__name__)

CHEAP_BATCH = 64  # files that cannot matter, per task
# A worker costs a process start, imports and its own interpreter for jedi: worth it for this many
# files that can matter, or this many that cannot.
RELEVANT_PER_WORKER = 4
CHEAP_PER_WORKER = 200

_worker_project: Project | None = None

# Python collects its youngest generation every 700 allocations, and the whole heap every hundred
# of those once it has grown by a quarter: a check allocates millions of objects that live until
# it ends (trees, models, answers), and those collections cost a quarter of its CPU (0.45 s of
# 1.9 s for a 17k-line module). A check's objects are rarely garbage cycles; as mypy does, collect less often.
BATCH_GC_THRESHOLD = (50_000, 20, 20)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def analyze_file(project: Project, file: str, codes: set[str]) -> tuple[list[Finding], str | None]:
    """A file's findings (sorted, as `analyze` gives them), or why it was skipped (unreadable, too large, gone).
    A notebook is analysed as the module its code cells make; one that is no notebook is a PAL000 finding."""
    try:
        if is_notebook(file):
            return analyze(project, file, project.text(file), codes=codes), None
        return analyze(project, file, codes=codes), None
    except InvalidNotebook as exc:
        return ([invalid_notebook_finding(file, exc)] if "PAL000" in codes else []), None
    except OSError as exc:
        return [], skip_reason(exc)


def analyze_files(project: Project, files: list[str], codes: set[str], jobs: int) -> list[tuple[list[Finding], str | None]]:
    """`analyze_file` of every file, in file order."""
    if jobs <= 1 or len(files) <= 1 or sys.version_info < (3, 11):  # 3.10 has no PYTHONSAFEPATH: see _safe_path
        return [analyze_file(project, file, codes) for file in files]
    relevant = [i for i, file in enumerate(files) if project.can_matter(file)]
    chosen = set(relevant)
    cheap = [i for i in range(len(files)) if i not in chosen]
    workers = min(jobs, -(-len(relevant) // RELEVANT_PER_WORKER) + len(cheap) // CHEAP_PER_WORKER)
    if workers <= 1:
        return [analyze_file(project, file, codes) for file in files]
    project.index.save()  # the workers read the index from the cache file instead of scanning again
    _learn_run_facts(project)
    tasks = [[i] for i in relevant] + [cheap[start:start + CHEAP_BATCH] for start in range(0, len(cheap), CHEAP_BATCH)]
    results: dict[int, tuple[list[Finding], str | None]] = {}
    context = multiprocessing.get_context("spawn")  # a fork would share jedi's environment process
    with _safe_path(), ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                             initargs=(project.root, project.python, project.use_jedi, project.platform,
                                       project.exclusions.arguments)) as pool:
        for found, answers in pool.map(_analyze_task, [[(i, files[i]) for i in task] for task in tasks],
                                       [codes] * len(tasks)):
            results.update(found)
            project.resolver.library_answers.take(answers)  # written once, with the parent's caches
        log.debug("%d worker processes started for %d files (%d that can matter)",
                  len(pool._processes or ()), len(files), len(relevant))
    return [results[i] for i in range(len(files))]


@contextlib.contextmanager
def _safe_path():
    """Workers start as `python -c ...`, which puts the working folder first on `sys.path` while
    multiprocessing imports `pickle`, `struct` and the rest: a checked repository's `struct.py` would
    run in every worker. PYTHONSAFEPATH (3.11+) leaves it out; the parent's `sys.path` follows anyway."""
    before = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = before


def _learn_run_facts(project: Project) -> None:
    """Ask the analysed interpreter its `sys.path` and jax's version once, here, before the workers
    start: both go to the cache files, which every worker reads instead of starting the interpreter."""
    if project.use_jedi and project.resolver.workspace_imports is not None:
        project.resolver.workspace_imports.search_path()
    jax_version(project)


def _start_worker(root: str, python: str, use_jedi: bool, platform: str, exclusions: tuple) -> None:
    global _worker_project
    quiet_compile_warnings()  # a spawned worker starts with Python's default filters
    # The parent's exclusions, not the settings read again: a `python` setting costs git calls.
    _worker_project = Project(root=root, python=python, use_jedi=use_jedi, platform=platform,
                              exclusions=Exclusions(*exclusions))
    _worker_project.index.trust_events = True  # files do not change during a check
    _worker_project.defer_cache_writes = True  # the index after each task, the answers by the parent
    collect_less_often()
    atexit.register(_end_worker_now)


def _end_worker_now() -> None:
    """Its results are with the parent and its index entries on disk by then. Runs once the
    worker's loop has returned (the pool shut it down), before the interpreter's teardown."""
    end_process_now(0)


def collect_less_often() -> None:
    """For a process that only checks (the CLI's, a worker): fewer garbage collections (above)."""
    gc.set_threshold(*BATCH_GC_THRESHOLD)


def end_process_now(code: int):
    """Exit without tearing the interpreter down: freeing every model, tree and answer one by one
    costs as much CPU as a third of the analyses (0.5 s a worker on jax's Pallas files, first run;
    0.5 s after a 17k-line module's 1.8 s). For a process whose output is written and whose caches
    are saved: nothing is lost. jedi's interpreter process ends when its pipe closes."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: the status the interpreter's own exit gives then
        code = 120
    os._exit(code)


def _analyze_task(task: list[tuple[int, str]], codes: set[str]) -> tuple[dict[int, tuple[list[Finding], str | None]], dict]:
    """The task's findings, and the import answers learnt meanwhile: the parent writes those once, at
    the end (each worker rewrote the whole answer file after every task, read by no other worker:
    they read it only at start)."""
    # What quick fixes are built from is not printed by check: it stays behind (models and trees,
    # which do not pickle).
    results = {}
    for i, file in task:
        found, skip = analyze_file(_worker_project, file, codes)
        results[i] = ([replace(f, facts={}) for f in found], skip)
    _worker_project.index.save()  # merged with what the other workers wrote meanwhile
    return results, _worker_project.resolver.library_answers.hand_over()
