"""`pallas-lsp check` over many files on several cores: worker processes beside the parent, as ruff does.

The parent sorts the files with the import index: the files that can matter (a few expensive analyses
each) of a folder make one task (they import and launch each other: the process that analyses them
models their helpers once), the rest (only compiled, for PAL000) go in batches. The parent analyses
tasks itself, the smallest first, while workers take the biggest. On Linux each worker is forked from
the parent once the run's facts are learnt: it starts with the modules imported, the index and the
interpreter's `sys.path` and jax's version in memory, and only jedi's interpreter of its own (the
parent's pipe is not shared); elsewhere workers are spawned and read those from the cache files.
What a worker still repeats is the models of the modules that its folders and the parent's both read
(tokamax: 50 of the 119 a worker modelled) and jedi's look at the installed jax, so a worker is
started only for work that outweighs that: `extra_workers` counts what the files weigh (their size),
leaves out a worker whose share would be less than `BYTES_PER_WORKER` or that one task dominates, and
never counts CPUs that other processes keep busy (the load average); `_not_repeating_more` then leaves
out a worker whose share is not 1.5 times the workspace modules that its files and the parent's both
import (from the index: what both would model). Few kernel files, a tree whose folders all read the same
core (maxtext, tpu-inference), or a loaded machine: checked in this one process. The import answers a worker learns go back to the parent,
which writes them once. Findings come back per file and are put together in the order of the files,
so the output is the one a single process gives.
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

from .analysis import Finding, Project, reads
from .engine import analyze
from .analysis.exclusions import Exclusions
from .analysis.jax_version import jax_version
from .analysis.notebooks import InvalidNotebook, invalid_notebook_finding, is_notebook
from .checked_values import check_workers
from .source_text import quiet_compile_warnings, skip_reason

log = logging.getLogger(__name__)

CHEAP_BATCH = 64  # files that cannot matter, per task
# A worker costs a process start, imports, its own interpreter for jedi, and what the parent already
# knows found again: the modules its files read modelled, their imports asked of jedi (measured on
# maxtext: 5 s of CPU for one worker): worth it for about three times that, this much text that
# can matter (on the benchmark machine a check analyses 600 kB of it a second).
BYTES_PER_WORKER = 3_000_000
CHEAP_BYTES = 2_000  # what a file that cannot matter weighs: only compiled

_worker_project: Project | None = None

# Python collects its youngest generation every 700 allocations, and the whole heap every hundred
# of those once it has grown by a quarter: a check allocates millions of objects that live until
# it ends (trees, models, answers), and those collections cost a quarter of its CPU (0.45 s of
# 1.9 s for a 17k-line module). A check's objects are rarely garbage cycles; as mypy does, collect less often.
# At (50_000, 20, 20) the young collections still walked every object a check keeps, most of them
# twice (young, then middle-aged), for nothing: 1.1 CPU s of an 11-15 s check of maxtext or tokamax (in
# process, `gc.callbacks`), and no less memory (peak RSS the same with collections off). Now the young
# generation is collected once 4 M objects more are alive than at the last collection (none in a check of
# the four benchmark trees, 1.7-2.2 M objects each): a bound on garbage cycles, for a tree far bigger.
BATCH_GC_THRESHOLD = (4_000_000, 1_000, 1_000)


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
    tasks = _tasks(files, relevant, cheap)
    workers = extra_workers([weight for weight, _ in tasks], jobs, len(relevant) + -(-len(cheap) // CHEAP_BATCH))
    if workers > 0 and check_workers() is None:
        workers = _not_repeating_more(project, files, tasks, workers)
    if workers < 1:
        return [analyze_file(project, file, codes) for file in files]
    tasks = _spread(tasks, workers + 1)
    _learn_run_facts(project)
    results: dict[int, tuple[list[Finding], str | None]] = {}
    with _forked_from(project) as initargs, ProcessPoolExecutor(workers, mp_context=_worker_context(),
                                                                initializer=_start_worker, initargs=initargs) as pool:
        queue = _Queue([[(i, files[i]) for i in task] for _, task in tasks], pool, workers, codes)
        for task in iter(queue.smallest, None):  # the parent works too, on the smallest groups
            for i, file in task:
                results[i] = analyze_file(project, file, codes)
        for found, answers in queue.finished():
            results.update(found)
            project.resolver.library_answers.take(answers)  # written once, with the parent's caches
        log.debug("%d worker processes started for %d files (%d that can matter)",
                  len(pool._processes or ()), len(files), len(relevant))
    return [results[i] for i in range(len(files))]


def _tasks(files: list[str], relevant: list[int], cheap: list[int]) -> list[tuple[int, list[int]]]:
    """(weight, file indexes) of each task, heaviest first: the files that can matter of each folder
    together, and the others in batches of `CHEAP_BATCH`. A folder is not split (a kernel's module, its
    tests and its helpers are modelled by one process: split in 150 kB groups, two thirds of what a
    worker modelled on tokamax the parent modelled too); `_spread` halves the heaviest only when there
    are fewer tasks than processes."""
    by_folder: dict[str, list[tuple[int, int]]] = {}
    for i in relevant:
        try:
            size = os.path.getsize(files[i])
        except OSError:
            size = 0
        by_folder.setdefault(os.path.dirname(files[i]), []).append((i, size))
    tasks = [(sum(size for _, size in members), [i for i, _ in members]) for members in by_folder.values()]
    tasks += [(CHEAP_BYTES * len(batch), batch) for batch in (cheap[at:at + CHEAP_BATCH]
                                                                for at in range(0, len(cheap), CHEAP_BATCH))]
    tasks.sort(key=lambda task: -task[0])
    return tasks


def _spread(tasks: list[tuple[int, list[int]]], count: int) -> list[tuple[int, list[int]]]:
    """`tasks` with the heaviest groups halved until there are `count` (each process has one)."""
    tasks = list(tasks)
    while len(tasks) < count:
        splittable = [task for task in tasks if len(task[1]) > 1]
        if not splittable:
            break
        weight, group = max(splittable, key=lambda task: task[0])
        tasks.remove((weight, group))
        half = len(group) // 2
        tasks += [(weight // 2, group[:half]), (weight - weight // 2, group[half:])]
    tasks.sort(key=lambda task: -task[0])
    return tasks


def extra_workers(weights: list[int], jobs: int, pieces: int | None = None) -> int:
    """Worker processes to start beside the parent for tasks of these weights (bytes of text):
    one per `BYTES_PER_WORKER` beyond the parent's share, no more than leave each process a
    share at least as heavy as the heaviest task (which one process analyses alone), and no more
    than the CPUs that are free: `jobs` less the parent, less what other processes keep busy.
    `PALLAS_LSP_CHECK_WORKERS` chooses instead (within `jobs`)."""
    total = sum(weights)
    if not weights or total == 0:
        return 0
    chosen = check_workers()
    if chosen is not None:  # as many as asked, the tasks split for them if need be (`pieces`: at most)
        return max(0, min(jobs - 1, chosen, (pieces or len(weights)) - 1))
    wanted = total // BYTES_PER_WORKER
    by_heaviest = total // max(weights) - 1  # processes beyond the parent that the work can keep busy
    try:
        busy = os.getloadavg()[0]  # this process included: it is about to work
    except (AttributeError, OSError):
        busy = 1.0
    free = int(default_jobs() - max(busy, 1.0))  # whole CPUs beside this one that nothing else keeps busy
    return max(0, min(jobs - 1, wanted, by_heaviest, free, len(weights) - 1))


# A worker's share must be this many times the bytes of workspace modules that both its files and the
# parent's import (directly or not), which both model: maxtext's folders all import its layers (3.6 MB
# repeated for a 2.8 MB share: one worker cost 7.8 CPU s more than `--jobs 1`), tokamax's ops share
# little (1.9 MB for 3.2 MB: 0.7–3.7 s more).
SHARE_PER_REPEATED_BYTE = 1.5


def _not_repeating_more(project: Project, files: list[str], tasks: list[tuple[int, list[int]]], workers: int) -> int:
    """`workers`, less those whose share of the work is smaller than what they would model again
    (`SHARE_PER_REPEATED_BYTE`): the workers take the heaviest tasks (as `_Queue` gives them out)."""
    total = sum(weight for weight, _ in tasks)
    dependencies = _Dependencies(project, files)
    while workers > 0:
        taken, theirs, ours = 0, [], []
        for weight, task in tasks:
            if taken + weight <= total * workers / (workers + 1) or not theirs:
                theirs += task
                taken += weight
            else:
                ours += task
        repeated = dependencies.closure(theirs) & dependencies.closure(ours)
        if taken / workers >= SHARE_PER_REPEATED_BYTE * dependencies.size(repeated):
            return workers
        log.debug("%d workers would model %d modules the parent models too: one fewer", workers, len(repeated))
        workers -= 1
    return 0


class _Dependencies:
    """The workspace modules a set of files imports, directly or not, from the import index's facts
    (what a process checking those files may model)."""

    def __init__(self, project: Project, files: list[str]):
        self._project, self._files = project, files
        self._by_name = {}
        for path in project.workspace_files():
            name = project.module_name(path)
            if name:
                self._by_name.setdefault(name, path)
        self._direct: dict[str, frozenset[str]] = {}

    def _imports(self, path: str) -> frozenset[str]:
        found = self._direct.get(path)
        if found is None:
            facts = self._project.index.facts(path)
            package = (self._project.module_name(path) or "").split(".")
            if not path.endswith("__init__.py"):
                package = package[:-1]
            names = set()
            for written in facts.imports if facts is not None else ():
                bare = written.lstrip(".")
                level = len(written) - len(bare)
                if level:  # relative to the file's package
                    if level - 1 > len(package):
                        continue
                    written = ".".join([*package[:len(package) - (level - 1)], *([bare] if bare else [])])
                if written in self._by_name:
                    names.add(self._by_name[written])
            found = self._direct[path] = frozenset(names)
        return found

    def closure(self, indexes: list[int]) -> set[str]:
        seen: set[str] = set()
        todo = [self._files[i] for i in indexes]
        while todo:
            for module in self._imports(todo.pop()):
                if module not in seen:
                    seen.add(module)
                    todo.append(module)
        return seen

    @staticmethod
    def size(paths: set[str]) -> int:
        total = 0
        for path in paths:
            try:
                total += os.path.getsize(path)
            except OSError:
                pass
        return total


class _Queue:
    """Tasks, heaviest first: workers take from the front (each kept busy with one task at a time),
    the parent from the back, until none is left."""

    def __init__(self, tasks: list, pool: ProcessPoolExecutor, workers: int, codes: set[str]):
        import collections
        import threading

        self._tasks = collections.deque(tasks)
        self._pool, self._codes = pool, codes
        self._lock = threading.Lock()
        self._futures: list = []
        for _ in range(workers):
            self._submit()

    def _submit(self, done=None) -> None:
        with self._lock:
            if not self._tasks:
                return
            task = self._tasks.popleft()
            future = self._pool.submit(_analyze_task, task, self._codes)
            self._futures.append(future)
        future.add_done_callback(self._submit)

    def smallest(self) -> list | None:
        with self._lock:
            return self._tasks.pop() if self._tasks else None

    def finished(self):
        """Each worker task's result, once every task was taken."""
        index = 0
        while True:
            with self._lock:
                if index == len(self._futures):
                    return
                future = self._futures[index]
            yield future.result()
            index += 1


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


def _worker_context():
    """Linux forks the workers from the parent as it is once the run's facts are learnt: each has the
    modules imported, the index, the interpreter's facts and what was modelled so far without doing
    any of it again (a spawned worker started at nothing: 0.5 s of CPU before its first file). The
    systems where a fork is unsafe or missing spawn them (and each reads those facts from the cache files)."""
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


@contextlib.contextmanager
def _forked_from(project: Project):
    """While workers start: the project a forked worker takes; `_start_worker`'s arguments (what a
    spawned worker builds its project from)."""
    global _parent_project
    if _worker_context().get_start_method() != "fork":
        project.index.save()  # a spawned worker reads the index from the cache file instead of scanning again
        with _safe_path():
            yield ((project.root, project.python, project.use_jedi, project.platform, project.exclusions.arguments),)
        return
    _parent_project = project
    gc.collect()
    gc.freeze()  # what the parent made before the fork is never collected by a worker (nor copied for its counts)
    try:
        yield (None,)
    finally:
        gc.unfreeze()
        _parent_project = None


_parent_project: Project | None = None
_inherited_jedi: list = []  # the parent's jedi interpreter handles, kept so that no worker ends that process


def _start_worker(spawned_from: tuple | None) -> None:
    global _worker_project
    if spawned_from is None:  # forked: the parent's project, with its own jedi interpreter
        _worker_project = _parent_project
        _own_jedi(_worker_project)
        _worker_project.resolver.library_answers.hand_over()  # the parent's own new answers: it writes them
    else:
        root, python, use_jedi, platform, exclusions = spawned_from
        quiet_compile_warnings()  # a spawned worker starts with Python's default filters
        # The parent's exclusions, not the settings read again: a `python` setting costs git calls.
        _worker_project = Project(root=root, python=python, use_jedi=use_jedi, platform=platform,
                                  exclusions=Exclusions(*exclusions))
        collect_less_often()
        atexit.register(_end_worker_now)
    _worker_project.index.trust_events = True  # files do not change during a check
    reads.set_tracking(False)
    _worker_project.defer_cache_writes = True  # the index after each task, the answers by the parent


def _own_jedi(project: Project) -> None:
    """A forked worker talks to jedi's interpreter through the parent's pipe no more: the parent's
    process handle (kept, never closed: closing it would end that process) and the jedi states made
    on it are let go, and the next question starts the worker's own interpreter. What the parent
    learnt without them (answers, parso's trees, the models) stays."""
    environment = project._environment
    jedi_env = getattr(environment, "jedi_env", None)
    if jedi_env is not None and getattr(jedi_env, "_subprocess", None) is not None:
        _inherited_jedi.append(jedi_env._subprocess)
        jedi_env._subprocess = None
    project.resolver.drop_jedi_states()


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
