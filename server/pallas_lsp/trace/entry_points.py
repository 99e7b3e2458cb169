"""The project's own entry points, found by reading the source and run with JAX in the loop.

An entry point is code the project itself runs: a test (`test_*` functions, methods of `Test*` and
`unittest.TestCase` classes, each literal `pytest.mark.parametrize` case), an `if __name__ ==
"__main__":` block, or a function with a `# pallas-lsp: trace(...)` comment or jaxtyping
annotations. Discovery reads the files (ast; nothing is imported). Running them executes the
project's code, so it happens only with the user's consent (`check --trace`, `types --trace`, the
server's setting): each entry in a contained process of the trace worker, where every Pallas launch
it reaches is traced and lowered by JAX instead of run (launches.py). `run_entry_points` is what the
CLI and the server call; it returns plain data.
"""

from __future__ import annotations

import ast
import itertools
import logging
import math
import os
import time
from dataclasses import dataclass, field

from ..source_text import read_source
from .targets import ArgSpec, ArgSpecError, ArgsNotFound, TargetNotFound, resolve_args
from .worker import TraceError, WorkerPool

log = logging.getLogger(__name__)

DEFAULT_ENTRY_TIMEOUT = 60.0
DEFAULT_OUTPUT_LIMIT = 4 << 20
MAX_CASES = 32  # parametrize cases run per test function
START_SECONDS = 60.0  # what a worker may take to start (import jax) on top of its entries' limits


@dataclass(frozen=True)
class EntryPoint:
    """One entry point, as discovery found it; `skip` says why it is not run (fixtures, a skip mark)."""

    id: str  # pytest-like: "tests/test_k.py::TestK::test_add[128]", "k.py::__main__", "k.py::scaled"
    kind: str  # "test" | "main" | "annotated"
    path: str  # real path
    function: str | None  # "test_add", "TestK.test_add"; None for a __main__ block
    line: int  # 0-based: the def (first decorator) or the `if __name__` line
    kwargs: tuple[tuple[str, str], ...] = ()  # a parametrize case: name -> literal source
    args: tuple[ArgSpec, ...] = ()  # an annotated function's arguments
    unittest: bool = False
    skip: str | None = None

    def request(self) -> dict:
        return {"id": self.id, "kind": self.kind, "path": self.path, "function": self.function,
                "kwargs": dict(self.kwargs), "args": [a.to_json() for a in self.args], "unittest": self.unittest}


@dataclass
class EntryResult:
    """How one entry point ended and every launch it reached (the runner's records, docs/jax-in-the-loop.md).

    `outcome`: "ok", "rejected" (JAX rejected a launch: the entry ended there), "after_launches" (it
    raised after its launches, e.g. an assert on the zeros the launches returned), "skipped" (a skip,
    a fixture, an optional dependency or device that is not here), "jax_error" (JAX raised, before any
    launch, in the code around the kernels: a PAL100 on the user's line), "error" (it raised before any
    launch), "timeout", "exit" (sys.exit), "crashed", "output" (printed too much), "forked",
    "untraceable", "not_run" (the worker could not run it)."""

    entry: EntryPoint
    outcome: str
    message: str | None = None
    type: str | None = None
    location: dict | None = None
    launches: list[dict] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0


@dataclass
class EntryRun:
    """Everything one run of the entry points under some paths found."""

    root: str
    results: list[EntryResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # why entries could not run (no jax, a dead worker)
    seconds: float = 0.0
    jax: str | None = None

    def launches(self) -> list[tuple[EntryResult, dict]]:
        """Every launch record, with the entry that reached it."""
        return [(result, launch) for result in self.results for launch in result.launches]

    def traced_refs(self) -> dict[str, dict[tuple[int, str], list[str]]]:
        """JAX's types of kernel body parameters: path -> (body's 1-based first line, name) -> avals,
        as the server keeps a trace's `kernel_refs`."""
        found: dict[str, dict[tuple[int, str], list[str]]] = {}
        for _, launch in self.launches():
            for ref in launch.get("kernel_refs") or []:
                seen = found.setdefault(ref["path"], {}).setdefault((ref["line"], ref["name"]), [])
                if ref["aval"] not in seen:
                    seen.append(ref["aval"])
        return found

    def abstract_devices(self) -> dict[str, dict[tuple[int, str], str]]:
        """The abstract device (`TPU v5 lite`) JAX's types of a kernel body parameter were traced for, where
        no such device is here (keyed as `traced_refs`)."""
        found: dict[str, dict[tuple[int, str], str]] = {}
        for _, launch in self.launches():
            for ref in launch.get("kernel_refs") or [] if launch.get("abstract_device") else []:
                found.setdefault(ref["path"], {})[ref["line"], ref["name"]] = launch["abstract_device"]
        return found

    def kernels(self) -> list[dict]:
        """JAX's resource estimate of every kernel lowered (a trace's `kernels` records: name, location,
        smem_bytes, launch_smem_bytes, barriers, tmem_cols, ...), for hovers and code lenses."""
        return [kernel for _, launch in self.launches() for kernel in launch.get("kernels") or []]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for result in self.results:
            counts[result.outcome] = counts.get(result.outcome, 0) + 1
        return counts

    def summary(self) -> str:
        """One line: what ran, what it reached, what JAX rejected."""
        launches = self.launches()
        rejected = sum(1 for _, launch in launches if launch.get("verdict") == "rejected")
        compiled = sum(1 for _, launch in launches if launch.get("compiled"))
        counts = ", ".join(f"{n} {outcome.replace('_', ' ')}" for outcome, n in sorted(self.counts().items()))
        return (f"{len(self.results)} entry point{'s' if len(self.results) != 1 else ''} ({counts or 'none'}); "
                f"{len(launches)} launch{'es' if len(launches) != 1 else ''} reached, {rejected} rejected by JAX"
                + (f", {compiled} compiled" if compiled else "") + f"; {self.seconds:.2f} s")


# ---- discovery ---------------------------------------------------------------------------------------

def is_test_file(path: str) -> bool:
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def discover(path: str, text: str, shown: str | None = None) -> list[EntryPoint]:
    """The entry points of one file, in file order; nothing is imported. `shown`: the path in ids."""
    path = os.path.realpath(path)
    shown = shown or os.path.basename(path)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[EntryPoint] = []
    tests_here = is_test_file(path) or "pallas" in text.lower()  # a module about Pallas kernels, as it says
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name.startswith("test") and tests_here:
            found.extend(_test_entries(shown, path, stmt, None, False))
        elif isinstance(stmt, ast.ClassDef) and tests_here:
            unittest_class = any(_last_name(b) and _last_name(b).endswith("TestCase") for b in stmt.bases)
            if not (unittest_class or stmt.name.startswith("Test")):
                continue
            methods = [s for s in stmt.body if isinstance(s, ast.FunctionDef)]
            if not unittest_class and any(m.name == "__init__" for m in methods):
                continue  # pytest does not collect a class with __init__
            for method in methods:
                if method.name.startswith("test"):
                    found.extend(_test_entries(shown, path, method, stmt, unittest_class))
        elif isinstance(stmt, ast.If) and _is_main_guard(stmt.test):
            found.append(EntryPoint(f"{shown}::__main__", "main", path, None, stmt.lineno - 1,
                                    skip=_runs_the_tests(stmt) if found else None))
    tested = {e.function for e in found}
    for stmt in tree.body:
        name = _bound_name(stmt)
        if name is None or name in tested or name.startswith("test"):
            continue
        try:
            args = resolve_args(text, name)
        except (ArgSpecError, ArgsNotFound, TargetNotFound, SyntaxError):
            continue
        if args.source.startswith("comment") or args.source == "annotations":
            line = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))]) - 1
            found.append(EntryPoint(f"{shown}::{name}", "annotated", path, name, line, args=args.specs))
    return sorted(found, key=lambda e: e.line)


def _runs_the_tests(guard: ast.If) -> str | None:
    """A `__main__` block that only hands the file's tests to a runner (`absltest.main()`,
    `unittest.main()`, `pytest.main([...])`): those tests run as entry points of their own."""
    calls = [s.value for s in guard.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
    if calls and len(calls) == len(guard.body) and all(_last_name(c.func) == "main" for c in calls):
        return "runs the file's tests, which run as entry points of their own"
    return None


def _bound_name(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.FunctionDef):
        return stmt.name
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _last_name(node.func)
    return None


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and {ast.unparse(test.left), ast.unparse(test.comparators[0])} in
            ({"__name__", "'__main__'"}, {"__name__", '"__main__"'}))


def _test_entries(shown: str, path: str, func: ast.FunctionDef, cls: ast.ClassDef | None,
                  unittest_class: bool) -> list[EntryPoint]:
    name = func.name if cls is None else f"{cls.name}.{func.name}"
    node_id = f"{shown}::{name.replace('.', '::')}"
    line = min([func.lineno, *(d.lineno for d in func.decorator_list)]) - 1
    base = dict(kind="test", path=path, function=name, line=line, unittest=unittest_class)
    params = [a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]]
    if cls is not None and params and params[0] in ("self", "cls"):
        params = params[1:]
    skip = _skip_mark(func) or (_skip_mark(cls) if cls is not None else None)
    generated = _absl_cases(func) if cls is not None and unittest_class else None
    if generated is not None:  # absl's parameterized: the methods its TestCase makes, each run by its name
        names, why = generated
        if skip is not None or why is not None:
            return [EntryPoint(node_id, **base, skip=skip or why)]
        return [EntryPoint(f"{shown}::{cls.name}::{method}", **dict(base, function=f"{cls.name}.{method}"))
                for method in names[:MAX_CASES]]
    cases, why = _parametrize_cases(func)
    if skip is None and why is not None:
        skip = why
    wanted = {n for case in cases[:1] for n, _ in case}
    missing = [p for p in params if p not in wanted]
    if skip is None and missing:
        skip = f"needs the fixture{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    if skip is not None or not cases[0]:
        return [EntryPoint(node_id, **base, skip=skip)]
    entries = []
    for case in cases[:MAX_CASES]:
        label = "-".join(text if len(text) <= 20 else text[:17] + "..." for _, text in case)
        entries.append(EntryPoint(f"{node_id}[{label}]", **base, kwargs=case))
    return entries


ABSL_DECORATORS = ("parameters", "named_parameters", "product")


def _absl_cases(func: ast.FunctionDef) -> tuple[list[str], str | None] | None:
    """The names absl's `parameterized.TestCase` gives the methods it makes of a test decorated with
    `parameterized.parameters(...)`, `named_parameters(...)` or `product(...)` (`test_add0`, `test_add1`;
    `test_add_small`), or why they cannot be read (cases that are no literal list); None for another test.
    The values are evaluated by Python when the module is imported: only their number and names are read."""
    found = [d for d in func.decorator_list if isinstance(d, ast.Call) and _last_name(d.func) in ABSL_DECORATORS
             and "parameterized" in ast.unparse(d.func).split(".")[:-1] + [_imported_from(d.func)]]
    if not found:
        return None
    if len(found) > 1:
        return [], "several absl parameterized decorators"
    decorator = found[0]
    kind = _last_name(decorator.func)
    if kind == "product":
        counts = [len(v.elts) for v in (k.value for k in decorator.keywords) if isinstance(v, (ast.List, ast.Tuple))]
        counts += [len(a.elts) for a in decorator.args if isinstance(a, (ast.List, ast.Tuple))]
        if len(counts) != len(decorator.keywords) + len(decorator.args) or any(k.arg is None for k in decorator.keywords):
            return [], "absl product values that are no literal lists"
        return [f"{func.name}{index}" for index in range(math.prod(counts))], None
    cases = decorator.args
    if len(cases) == 1 and isinstance(cases[0], (ast.List, ast.GeneratorExp, ast.ListComp)):
        cases = cases[0].elts if isinstance(cases[0], ast.List) else None
    if cases is None or any(isinstance(c, ast.Starred) for c in cases) or decorator.keywords:
        return [], f"absl {kind} that are no literal list of cases"
    if kind == "parameters":
        return [f"{func.name}{index}" for index in range(len(cases))], None
    names = []
    for case in cases:
        name = _case_name(case)
        if name is None:
            return [], "absl named_parameters whose names are no literal strings"
        joiner = "_" if func.name.startswith("test_") and name and not name.startswith("_") else ""
        names.append(f"{func.name}{joiner}{name}")
    return names, None


def _case_name(case: ast.expr) -> str | None:
    """A named case's name: the first item of a tuple, or `testcase_name` of a dict."""
    if isinstance(case, (ast.Tuple, ast.List)) and case.elts:
        first = case.elts[0]
    elif isinstance(case, ast.Dict):
        first = next((v for k, v in zip(case.keys, case.values)
                      if isinstance(k, ast.Constant) and k.value == "testcase_name"), None)
    elif isinstance(case, ast.Call) and _last_name(case.func) == "dict":
        first = next((k.value for k in case.keywords if k.arg == "testcase_name"), None)
    else:
        first = None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _imported_from(node: ast.expr) -> str:
    """`parameters(...)` imported bare (`from absl.testing.parameterized import parameters`) reads as
    parameterized's too: the decorator's own name is what matters here."""
    return "parameterized" if isinstance(node, ast.Name) else ""


def _skip_mark(node: ast.AST) -> str | None:
    for decorator in getattr(node, "decorator_list", ()):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        text = ast.unparse(target)
        if text.endswith("mark.skip") or text in ("unittest.skip", "skip"):
            return "marked skip"
        if text.endswith("mark.usefixtures"):
            return "needs fixtures (usefixtures)"
    return None


def _parametrize_cases(func: ast.FunctionDef) -> tuple[list[tuple[tuple[str, str], ...]], str | None]:
    """Every combination of the function's literal `pytest.mark.parametrize` cases ([()] when it has
    none), or why they cannot be run (values that are no literals)."""
    axes = []
    for decorator in func.decorator_list:
        if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("mark.parametrize")):
            continue
        if len(decorator.args) < 2:
            return [()], "parametrize without literal argument names and values"
        names_node, values_node = decorator.args[:2]
        try:
            names = ast.literal_eval(names_node)
        except ValueError:
            return [()], "parametrize with argument names that are no literal"
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        if not isinstance(values_node, (ast.List, ast.Tuple)):
            return [()], "parametrize values that are no literal list"
        cases = []
        for value in values_node.elts:
            items = [value] if len(names) == 1 else (value.elts if isinstance(value, (ast.Tuple, ast.List)) else None)
            if items is None or len(items) != len(names):
                return [()], "parametrize values that do not match the names"
            try:
                for item in items:
                    ast.literal_eval(item)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return [()], "parametrize values that are no literals (pytest.param, names, calls)"
            cases.append(tuple((n, ast.unparse(item)) for n, item in zip(names, items)))
        axes.append(cases)
    if not axes:
        return [()], None
    return [tuple(pair for part in combo for pair in part) for combo in itertools.product(*axes)], None


# ---- which files -------------------------------------------------------------------------------------

def python_files(paths: list[str]) -> list[str]:
    """The `.py` files under `paths` (folders walked as `check` walks them), real paths, each once."""
    from ..analysis.project import iter_python_files

    found: dict[str, None] = {}
    for path in paths:
        if os.path.isdir(path):
            for file in iter_python_files(path):
                found.setdefault(os.path.realpath(file))
        elif path.endswith(".py") and os.path.isfile(path):
            found.setdefault(os.path.realpath(path))
    return list(found)


def discover_paths(paths: list[str], relevant=None, root: str | None = None) -> list[EntryPoint]:
    """The entry points of the files under `paths` that `relevant(path, text)` keeps (default: files
    that name Pallas, and test files importing a module of those by name)."""
    texts = {}
    for path in python_files(paths):
        try:
            texts[path] = read_source(path)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
    if relevant is None:
        kernels = {os.path.splitext(os.path.basename(p))[0] for p, t in texts.items() if "pallas" in t.lower()}

        def relevant(path, text):
            return "pallas" in text.lower() or bool(_imported_names(text) & kernels)
    entries = []
    for path, text in texts.items():
        if relevant(path, text):
            shown = os.path.relpath(path, root) if root and path.startswith(os.path.realpath(root) + os.sep) else path
            entries.extend(discover(path, text, shown))
    return entries


def _imported_names(text: str) -> set[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(part for alias in node.names for part in alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            names.update((node.module or "").split("."))
            names.update(alias.name for alias in node.names)
    return names


# ---- running them ------------------------------------------------------------------------------------

def run_entry_points(pool: WorkerPool, python: str, root: str, paths: list[str], *,
                     timeout: float | None = None, entry_timeout: float = DEFAULT_ENTRY_TIMEOUT,
                     output_limit: int = DEFAULT_OUTPUT_LIMIT, bare_platform: str = "cuda", relevant=None,
                     entries: list[EntryPoint] | None = None, on_result=None, cancelled=lambda: False,
                     on_worker=None, texts: dict[str, str] | None = None) -> EntryRun:
    """Run the entry points under `paths` (or the given `entries`) of the project at `root` with JAX in
    the loop, under `python`; one file's entries after another, one at a time, each in a contained
    process (`entry_timeout` each, `output_limit` bytes of output). `timeout`: for the whole run (None:
    as long as the entries' limits add up to). `on_result(result)` is called as each file's entries
    end; `cancelled()` is asked between files, and `on_worker(worker)` is handed the worker of each
    file's run (`worker.cancel()` stops it at once). `texts` (path -> text) stand in for those files
    on disk (a fix judged before it is written). Blocks; call it from a worker thread. Never raises
    for what the entries do: problems are in `EntryRun.problems`."""
    started = time.monotonic()
    run = EntryRun(root=os.path.realpath(root))
    if entries is None:
        entries = discover_paths(paths, relevant, root)
    by_file: dict[str, list[EntryPoint]] = {}
    for entry in entries:
        if entry.skip is not None:
            _add(run, EntryResult(entry, "skipped", entry.skip), on_result)
        else:
            by_file.setdefault(entry.path, []).append(entry)
    grace = max(2.0, entry_timeout / 4)
    for path, file_entries in by_file.items():
        left = None if timeout is None else timeout - (time.monotonic() - started)
        if cancelled() or (left is not None and left <= 0) or run.problems and fatal(run.problems[-1]):
            reason = "cancelled" if cancelled() else run.problems[-1] if run.problems else "the run's time ran out"
            for entry in file_entries:
                _add(run, EntryResult(entry, "not_run", reason), on_result)
            continue
        budget = len(file_entries) * (entry_timeout + grace) + START_SECONDS
        request = {"op": "entries", "entries": [e.request() for e in file_entries], "roots": [run.root],
                   "bare_platform": bare_platform, "entry_timeout": entry_timeout, "output_limit": output_limit,
                   "texts": {os.path.realpath(p): t for p, t in (texts or {}).items()}}
        try:
            answer = pool.request(python, root, request, timeout=budget if left is None else min(budget, left),
                                  on_worker=on_worker)
        except TraceError as exc:
            message = _worker_problem(exc, python)
            run.problems.append(message)
            for entry in file_entries:
                _add(run, EntryResult(entry, "not_run", message), on_result)
            continue
        run.jax = answer.get("jax") or run.jax
        by_id = {e.id: e for e in file_entries}
        for found in answer.get("entries") or []:
            entry = by_id.get(found.get("id"))
            if entry is not None:
                _add(run, _result(entry, found), on_result)
    order = {entry.id: index for index, entry in enumerate(entries)}
    run.results.sort(key=lambda result: order.get(result.entry.id, len(order)))
    run.seconds = round(time.monotonic() - started, 3)
    return run


def _add(run: EntryRun, result: EntryResult, on_result) -> None:
    run.results.append(result)
    log.info("entry point %s: %s%s", result.entry.id, result.outcome, f" ({result.message})" if result.message else "")
    if on_result is not None:
        on_result(result)


def _result(entry: EntryPoint, found: dict) -> EntryResult:
    launches = [dict(record, entry=entry.id) for record in found.get("launch_records") or []]
    return EntryResult(entry, str(found.get("outcome") or "crashed"), found.get("message"), found.get("type"),
                       found.get("location"), launches, found.get("output") or "", float(found.get("seconds") or 0))


def _worker_problem(exc: TraceError, python: str) -> str:
    message = str(exc)
    if "No module named 'jax'" in message:
        return f"{python} has no jax: entry points need the project's interpreter, the one with jax (--python)"
    if exc.kind == "timeout":
        return "the entry points did not finish within the run's time; the worker was killed"
    if exc.kind == "cancelled":
        return "cancelled; the worker was killed"
    return message


def fatal(problem: str) -> bool:
    """A problem no other file's entries would get past (no jax in that interpreter)."""
    return "has no jax" in problem or "cannot start" in problem or "cannot run the trace" in problem
