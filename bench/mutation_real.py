"""Mutation testing on real kernels: one bug planted at a time in jax's own Pallas tests, JAX's verdict against
`pallas-lsp check`'s.

    .venvs/dev/bin/python bench/mutation_real.py [--jax-git-dir GIT_DIR] [--cache DIR] [--kinds K,...]
        [--methods FILE::Class.test_name,...] [--limit N] [--json OUT] [--jobs N]

The corpus is jax's `tests/pallas` at a pinned commit (JAX_COMMIT): from `--jax-git-dir` (a jax git dir at that
commit), else the few test files downloaded from GitHub at that commit. Its test methods are real kernels with
their launches: each is run as jax's test runner would (setUp, the method, tearDown), through the trace machinery
of `pallas-lsp check --trace` (server/pallas_lsp/trace/): every launch it reaches is traced and lowered by real JAX
0.12 for the platform it targets (Mosaic GPU: cuda, TPU: tpu, interpret: the CPU) instead of run. The tests ask for
their device in setUp, so a small driver answers the device queries of `jax._src.test_util` for the file's
platform (FILES). The environment is the analysed one (.venvs/jax) with absl-py, which jax's tests import, beside
it (an overlay venv in the cache).

1. Every test method of FILES that holds a mutation site is run unmutated; those JAX accepts (every launch lowered,
   none rejected) are the kernels, the others are listed as skipped with why.
2. Mutants, one planted bug each (MUTATIONS: each kind's edit), each in its own copy of the file; JAX's verdict is
   the method's run: rejected (a launch JAX rejected, or the method raising before its launches) or accepted.
3. `pallas-lsp check --format json` over every mutant (one process): the static verdict is an error in the
   mutated method's lines, and it is on the right line when it is on the planted line or one JAX blames.

Agreement: both reject or both accept. Prints a table per kind (mutants, JAX rejects, agree, false alarms, misses,
right line) and the disagreements; exits 1 on any.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "server"), str(REPO / "bench")]

import real_code  # noqa: E402

CACHE = REPO / "bench" / ".generated" / "mutation_real"
JAX_COMMIT = "cec06d116c05f0d52adfceee3d3b730fdbcb0ce5"
# Test files and the platform their kernels target (the device their setUp asks for).
FILES = {
    "tests/pallas/mosaic_gpu_test.py": "cuda",
    "tests/pallas/tpu_pallas_test.py": "tpu",
    "tests/pallas/tpu_pallas_async_test.py": "tpu",
}
# jax's test helper that the TPU tests import (`jax._src.pallas.pallas_test_util`, their `self.pallas_call`), newer
# than the jax 0.12 wheel: taken from the same commit into the environment's copy of jax (for JAX), and checked with
# the mutants as a checkout's file (for the analysis, which reads a launch wrapper in the project's own files).
HELPERS = ("jax/_src/pallas/pallas_test_util.py",)
ABSL = "absl-py==2.5.1"
ENTRY_TIMEOUT = 120.0


# ---- the corpus and its environment ------------------------------------------------------------------

def corpus(git_dir: str | None, cache: Path) -> Path:
    """A folder holding FILES at JAX_COMMIT: exported from the git dir, else downloaded from GitHub (once)."""
    into = cache / f"jax-{JAX_COMMIT[:10]}"
    wanted = [*FILES, *HELPERS]
    if all((into / name).exists() for name in wanted):
        return into
    if git_dir:
        commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        if commit != JAX_COMMIT:
            raise RuntimeError(f"{git_dir} is at {commit[:10]}, not the pinned {JAX_COMMIT[:10]}")
        for name in wanted:
            text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{JAX_COMMIT}:{name}"], capture_output=True,
                                  check=True).stdout
            _write(into / name, text)
        return into
    for name in wanted:
        url = f"https://raw.githubusercontent.com/jax-ml/jax/{JAX_COMMIT}/{name}"
        with urllib.request.urlopen(url, timeout=60) as answer:  # noqa: S310 - a pinned https URL
            _write(into / name, answer.read())
    return into


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def environment(root: Path, cache: Path, base: Path) -> str:
    """The analysed environment (.venvs/jax, jax 0.12) with absl-py and the tests' helpers: an overlay venv whose
    site-packages names .venvs/jax's in a .pth file and holds a copy of its jax package with HELPERS added (what the
    tests import, for JAX and for the analysis alike)."""
    env = cache / "env"
    python = env / "bin" / "python"
    probe = "import absl, jax, " + ", ".join(h[:-3].replace("/", ".") for h in HELPERS)
    if python.exists() and subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0:
        return str(python)
    subprocess.run([str(base), "-m", "venv", "--without-pip", "--clear", str(env)], check=True, capture_output=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    jax_site = subprocess.run([str(base), "-c", "import jax, os; print(os.path.dirname(os.path.dirname(jax.__file__)))"],
                              capture_output=True, text=True, check=True).stdout.strip()
    (site / "analysed-jax.pth").write_text(jax_site + "\n")
    shutil.copytree(Path(jax_site) / "jax", site / "jax", ignore=shutil.ignore_patterns("__pycache__"))
    for helper in HELPERS:
        shutil.copyfile(root / helper, site / helper)
    run = subprocess.run([str(base), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target",
                          str(site), ABSL], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"pip install {ABSL} failed: {(run.stderr or run.stdout).strip()[-400:]}")
    return str(python)


# ---- test methods and the mutations planted in them ----------------------------------------------------

@dataclass
class Method:
    file: str  # "tests/pallas/mosaic_gpu_test.py"
    cls: str
    name: str
    start: int  # 1-based, first decorator
    end: int
    node: ast.FunctionDef = field(repr=False)
    platform: str = "cuda"  # what its kernels target: "cuda", "tpu", or "cpu" for an interpret test class

    @property
    def id(self) -> str:
        return f"{os.path.basename(self.file)}::{self.cls}.{self.name}"


@dataclass
class Mutant:
    kind: str
    method: Method
    line: int  # 1-based, the planted line in the mutant
    what: str  # the edit, in words
    text: str = field(repr=False)  # the whole mutated file
    shift: int = 0  # lines the edit added (the method's end moves by it)
    also: tuple[int, ...] = ()  # other lines of the mutant where the bug is (interpret_on: the get_global calls)
    jax: dict | None = None
    static_verdict: dict | None = None
    folder: Path | None = None

    @property
    def id(self) -> str:
        return f"{self.method.id}:{self.line}:{self.kind}"


def methods(root: Path, name: str) -> list[Method]:
    """Every `test*` method of a class in the file, with its lines and platform (an `*InterpretTest` class, which
    sets INTERPRET = True, runs its kernels on the CPU)."""
    tree = ast.parse((root / name).read_text())
    found = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for func in cls.body:
            if isinstance(func, ast.FunctionDef) and func.name.startswith("test"):
                start = min([func.lineno, *(d.lineno for d in func.decorator_list)])
                platform = "cpu" if "Interpret" in cls.name else FILES[name]
                found.append(Method(name, cls.name, func.name, start, func.end_lineno, func, platform))
    return found


SEM_TYPE = re.compile(r"\b(plgpu|pltpu)\.SemaphoreType\.(DMA|REGULAR|BARRIER)\b")
SEM_VIEW = re.compile(r"\b(\w*sem\w*)((?:\.at\[[^\[\]]*\])+)", re.IGNORECASE)
GET_GLOBAL = re.compile(r"^(\s*)(\w+) = pl\.get_global\((.*)\)\s*$")
SWAPS = {"plgpu": {"REGULAR": ["BARRIER"], "BARRIER": ["REGULAR"]},
         "pltpu": {"DMA": ["REGULAR", "BARRIER"], "REGULAR": ["DMA"], "BARRIER": ["DMA"]}}
COPIES = ("make_async_copy", "make_async_remote_copy", "async_copy", "async_remote_copy")
LAUNCHES = ("kernel", "pallas_call")
GROWN = "pl.run_scoped(lambda _grown: None, plgpu.SMEM((65536,), jnp.float32))"  # 256 KiB, past any GPU's


def _replace(lines: list[str], line: int, new: str) -> str:
    return "".join(lines[:line - 1] + [new] + lines[line:])


def _insert(lines: list[str], line: int, new: str) -> str:
    """`new` inserted before 1-based `line`."""
    return "".join(lines[:line - 1] + [new] + lines[line - 1:])


def _method_lines(method: Method):
    return range(method.node.body[0].lineno, method.end + 1)


def sem_type_swapped(method: Method, lines: list[str], platform: str):
    """A semaphore type swapped: DMA <-> REGULAR, BARRIER (each occurrence, each other type of its family)."""
    for n in _method_lines(method):
        for match in SEM_TYPE.finditer(lines[n - 1]):
            family, old = match.groups()
            for new in SWAPS[family].get(old, []):
                text = lines[n - 1][:match.start(2)] + new + lines[n - 1][match.end(2):]
                yield Mutant("sem_type_swapped", method, n, f"{family}.SemaphoreType.{old} -> {new}",
                             _replace(lines, n, text))


def at_index_dropped(method: Method, lines: list[str], platform: str):
    """An `.at[...]` view dropped on a semaphore (`sems.at[i]` -> `sems`)."""
    for n in _method_lines(method):
        for match in SEM_VIEW.finditer(lines[n - 1]):
            text = lines[n - 1][:match.start(2)] + lines[n - 1][match.end(2):]
            yield Mutant("at_index_dropped", method, n, f"{match.group(0)} -> {match.group(1)}",
                         _replace(lines, n, text))


def sem_read_not_viewed(method: Method, lines: list[str], platform: str):
    """A semaphore read instead of viewed (`sems.at[i]` -> `sems[i]`): a value where a ref is wanted."""
    for n in _method_lines(method):
        for match in SEM_VIEW.finditer(lines[n - 1]):
            views = re.findall(r"\.at(\[[^\[\]]*\])", match.group(2))
            text = lines[n - 1][:match.start(2)] + "".join(views) + lines[n - 1][match.end(2):]
            yield Mutant("sem_read_not_viewed", method, n, f"{match.group(0)} -> {match.group(1)}{''.join(views)}",
                         _replace(lines, n, text))


def dma_sem_signalled(method: Method, lines: list[str], platform: str):
    """`pl.semaphore_signal` on the semaphore a TPU copy is given (a DMA one), before the copy's statement."""
    if platform != "tpu":
        return
    statements = [s for s in ast.walk(method.node) if isinstance(s, ast.stmt)]
    for call in ast.walk(method.node):
        if not (isinstance(call, ast.Call) and _callee(call) in COPIES):
            continue
        sem = next((k.value for k in call.keywords if k.arg in ("sem", "send_sem", "recv_sem")), None)
        if sem is None and len(call.args) >= 3:
            sem = call.args[2]
        if sem is None:
            continue
        owner = min((s for s in statements if s.lineno <= call.lineno and s.end_lineno >= call.end_lineno
                     and not isinstance(s, (ast.FunctionDef, ast.With, ast.For, ast.If, ast.While))),
                    key=lambda s: s.end_lineno - s.lineno, default=None)
        if owner is None:
            continue
        indent = re.match(r"\s*", lines[owner.lineno - 1]).group(0)
        source = ast.unparse(sem)
        yield Mutant("dma_sem_signalled", method, owner.lineno, f"pl.semaphore_signal({source}) before the copy",
                     _insert(lines, owner.lineno, f"{indent}pl.semaphore_signal({source})\n"), shift=1)


def second_get_global(method: Method, lines: list[str], platform: str):
    """A second `pl.get_global` of the same type after one, used as the first is (signalled)."""
    for n in _method_lines(method):
        match = GET_GLOBAL.match(lines[n - 1])
        if match:
            indent, name, what = match.groups()
            new = f"{indent}{name}_2 = pl.get_global({what})\n{indent}pl.semaphore_signal({name}_2)\n"
            yield Mutant("second_get_global", method, n + 1, f"{name}_2 = pl.get_global({what}) after line {n}",
                         _insert(lines, n + 1, new), shift=2)


def get_global_not_semaphore(method: Method, lines: list[str], platform: str):
    """`pl.get_global` handed a shared-memory buffer instead of a semaphore type."""
    for n in _method_lines(method):
        match = GET_GLOBAL.match(lines[n - 1])
        if match and "SemaphoreType" in match.group(3):
            text = lines[n - 1].replace(match.group(3), "plgpu.SMEM((128,), jnp.float32)")
            yield Mutant("get_global_not_semaphore", method, n, f"pl.get_global({match.group(3)}) -> an SMEM buffer",
                         _replace(lines, n, text))


def interpret_on(method: Method, lines: list[str], platform: str):
    """`interpret=True` added to the launch of a Mosaic GPU kernel that calls `pl.get_global`."""
    if platform != "cuda" or "get_global" not in "".join(lines[method.start - 1:method.end]):
        return
    for call in ast.walk(method.node):
        if isinstance(call, ast.Call) and _callee(call) in LAUNCHES and call.args and call.keywords:
            first = call.keywords[0].value
            n = first.lineno
            indent = re.match(r"\s*", lines[n - 1]).group(0)
            if lines[n - 1].lstrip().startswith(call.keywords[0].arg + "="):
                calls = tuple(k if k < n else k + 1 for k in _method_lines(method) if "pl.get_global(" in lines[k - 1])
                yield Mutant("interpret_on", method, n, f"interpret=True in the {_callee(call)}(...) launch",
                             _insert(lines, n, f"{indent}interpret=True,\n"), shift=1, also=calls)


def scratch_grown(method: Method, lines: list[str], platform: str):
    """256 KiB of shared memory allocated at the top of a Mosaic GPU kernel body (past every GPU's limit)."""
    if platform != "cuda":
        return
    launched = {call.args[0].id for call in ast.walk(method.node)
                if isinstance(call, ast.Call) and _callee(call) in LAUNCHES and call.args
                and isinstance(call.args[0], ast.Name)}
    for func in ast.walk(method.node):
        if isinstance(func, ast.FunctionDef) and func is not method.node and (
                func.name in launched or any(_launch_decorator(d) for d in func.decorator_list)):
            first = func.body[0]
            indent = re.match(r"\s*", lines[first.lineno - 1]).group(0)
            yield Mutant("scratch_grown", method, first.lineno, f"{GROWN} at the top of {func.name}",
                         _insert(lines, first.lineno, f"{indent}{GROWN}\n"), shift=1)


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _launch_decorator(node: ast.expr) -> bool:
    if isinstance(node, ast.Call):
        if _callee(node) == "partial" and node.args:
            return _launch_decorator(node.args[0])
        return _callee(node) in LAUNCHES
    return isinstance(node, ast.Attribute) and node.attr in LAUNCHES


MUTATIONS = {f.__name__: f for f in (sem_type_swapped, at_index_dropped, second_get_global, interpret_on,
                                     sem_read_not_viewed, dma_sem_signalled, scratch_grown, get_global_not_semaphore)}
# Methods that test JAX's own errors (the kernel is meant to fail) are no kernel JAX accepts.
NEGATIVE = re.compile(r"assertRaises|pytest\.raises|assert_raises")


def plant(root: Path, kinds: list[str], wanted: set[str] | None) -> dict[str, list[Mutant]]:
    """Mutants per method id, for the methods of FILES (or `wanted`) with a site."""
    out: dict[str, list[Mutant]] = {}
    for name, platform in FILES.items():
        text = (root / name).read_text()
        lines = text.splitlines(keepends=True)
        for method in methods(root, name):
            if wanted is not None and method.id not in wanted:
                continue
            if NEGATIVE.search("".join(lines[method.start - 1:method.end])):
                continue
            found = [m for kind in kinds for m in MUTATIONS[kind](method, lines, platform)]
            if found:
                out[method.id] = found
    return out


# ---- JAX's verdict: the method run through the trace machinery -----------------------------------------

DRIVER = '''"""Runs jax test methods as their test runner does, on a machine that answers the device queries for the platform
their kernels target."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax._src import test_util as jtu

PLATFORM = None


def _matches(names, *args, **kwargs):
  names = [names] if isinstance(names, str) else list(names)
  return PLATFORM in names or (PLATFORM == "cuda" and "gpu" in names)


jtu.test_device_matches = _matches
jtu.is_cuda_compute_capability_at_least = lambda *a, **k: PLATFORM == "cuda"
jtu.is_device_tpu_at_least = lambda *a, **k: PLATFORM == "tpu"
jtu.is_device_tpu = lambda *a, **k: PLATFORM == "tpu"

import {module} as module


def _run(cls, name, platform):
  global PLATFORM
  PLATFORM = platform
  case_class = getattr(module, cls)
  names = [n for n in dir(case_class) if n == name] or sorted(
      n for n in dir(case_class) if n.startswith(name) and n[len(name):][:1] in "_0123456789" and n != name)
  case = case_class(names[0])
  case.setUp()
  try:
    getattr(case, names[0])()
  finally:
    case.doCleanups()
    case.tearDown()
'''


def _entry_name(method: Method) -> str:
    return f"test_{method.cls}__{method.name}"


def write_case(folder: Path, file: str, text: str, methods_: list[Method]) -> Path:
    """The (mutated) test file and a driver with one entry function per method, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / os.path.basename(file)).write_text(text)
    module = os.path.splitext(os.path.basename(file))[0]
    driver = DRIVER.format(module=module) + "".join(
        f"\n\ndef {_entry_name(m)}():\n  _run({m.cls!r}, {m.name!r}, {m.platform!r})\n" for m in methods_)
    path = folder / "mutation_driver_test.py"
    path.write_text(driver)
    return path


def jax_verdicts(python: str, root: Path, cases: list[tuple[Path, list[Method]]]) -> list[dict]:
    """Each (driver, methods) run through the trace machinery: per method, its outcome and launches."""
    from pallas_lsp.trace.entry_points import EntryPoint, run_entry_points
    from pallas_lsp.trace.worker import WorkerPool

    entries = []
    for driver, methods_ in cases:
        for m in methods_:
            name = _entry_name(m)
            entries.append((m.platform, EntryPoint(f"{driver}::{name}", kind="test",
                                                      path=os.path.realpath(driver), function=name, line=0)))
    pool = WorkerPool()
    results, problems = [], []
    try:
        for platform in sorted({p for p, _ in entries}):  # a bare pallas_call is lowered for the file's platform
            run = run_entry_points(pool, python, str(root), [], entries=[e for p, e in entries if p == platform],
                                   entry_timeout=ENTRY_TIMEOUT, bare_platform="tpu" if platform == "tpu" else "cuda")
            results += run.results
            problems += run.problems
    finally:
        pool.shutdown()
    by_id = {r.entry.id: r for r in results}
    out = []
    for _, entry in entries:
        result = by_id.get(entry.id)
        out.append(_verdict(result) if result else {"verdict": "unknown", "why": "; ".join(problems) or "not run"})
    return out


def _verdict(result) -> dict:
    launches = result.launches
    rejected = [launch for launch in launches if launch.get("verdict") == "rejected"]
    record = {"outcome": result.outcome, "launches": len(launches), "platforms": sorted({l["platform"] for l in launches}),
              "bodies": sorted({l["body"]["line"] for l in launches if l.get("body")})}
    if rejected:
        error = rejected[0].get("error") or {}
        if error.get("type") == "AssertionError":  # the test's own assert in the kernel (on a dtype): JAX took it
            return {**record, "verdict": "accept", "note": f"the test's own assertion failed: {error.get('message')}"}
        lines = {loc["line"] for l in rejected for loc in (l.get("error") or {}).get("locations", [])}
        if not lines:  # JAX names no line (a kernel refused as a whole): its launch, as tests/jax_truth.py says
            lines = {l["launch"]["line"] for l in rejected if l.get("launch")}
        return {**record, "verdict": "reject", "message": f"{error.get('type')}: {error.get('message')}",
                "lines": sorted(lines)}
    if result.outcome == "error":  # raised before any launch: the mutant breaks the method's own code
        where = [result.location["line"]] if result.location else []
        return {**record, "verdict": "reject", "message": f"{result.type}: {result.message}", "lines": where}
    if result.outcome in ("ok", "after_launches") and launches:
        return {**record, "verdict": "accept"}
    return {**record, "verdict": "unknown", "why": f"{result.outcome}: {result.message or 'no launch reached'}"}


def reached(mutant: Mutant) -> bool:
    """Whether JAX judged the mutated code: a planted line inside a function of the method (a kernel body) must be
    in a body JAX lowered (a launch after one that raised is never reached)."""
    method = mutant.method
    defs = [f for f in ast.walk(ast.parse(mutant.text)) if isinstance(f, ast.FunctionDef)
            and method.start < f.lineno and f.end_lineno <= method.end + mutant.shift]
    around = [f for f in defs if f.lineno <= mutant.line <= f.end_lineno]
    bodies = mutant.jax.get("bodies", [])
    return not around or any(f.lineno <= body <= f.end_lineno for f in around for body in bodies)


# ---- the static verdict -------------------------------------------------------------------------------

def static_findings(paths: list[Path], python: str, jobs: int) -> dict[str, list[dict]]:
    """`pallas-lsp check --format json` over the files, in one process: findings per real path."""
    if not paths:
        return {}
    result = real_code.check(paths, python, jobs)
    out: dict[str, list[dict]] = {}
    for finding in result["findings"]:
        out.setdefault(os.path.realpath(finding["path"]), []).append(finding)
    return out


def judge(mutant: Mutant, findings: list[dict], baseline: set[tuple[int, str]]) -> dict:
    """The static verdict on one mutant: errors in the mutated method's lines that the unmutated file lacks."""
    method = mutant.method
    start, end = method.start, method.end + mutant.shift

    def unshifted(line):
        return line if line < mutant.line else line - mutant.shift

    errors = [f for f in findings if f["severity"] == "error" and start <= f["line"] <= end
              and (unshifted(f["line"]), f["code"]) not in baseline]
    jax = mutant.jax or {}
    lines = {mutant.line, *range(mutant.line, mutant.line + mutant.shift), *mutant.also, *jax.get("lines", [])}
    return {"reject": bool(errors), "codes": sorted({f["code"] for f in errors}),
            "at": [f"{f['line']}:{f['code']}" for f in errors],
            "right_line": any(f["line"] <= line <= f.get("end_line", f["line"]) for f in errors for line in lines)}


# ---- the run ------------------------------------------------------------------------------------------

def summarize(mutants: list[Mutant]) -> dict:
    kinds: dict[str, dict] = {}
    for m in mutants:
        t = kinds.setdefault(m.kind, {"mutants": 0, "jax_rejects": 0, "agree": 0, "false_alarms": 0, "misses": 0,
                                      "right_line": 0})
        t["mutants"] += 1
        jax_rejects = m.jax["verdict"] == "reject"
        t["jax_rejects"] += jax_rejects
        static = m.static_verdict
        if static["reject"] == jax_rejects:
            t["agree"] += 1
            t["right_line"] += jax_rejects and static["right_line"]
        elif static["reject"]:
            t["false_alarms"] += 1
        else:
            t["misses"] += 1
    for t in kinds.values():
        t["agreement"] = t["agree"] / t["mutants"] if t["mutants"] else None
    return kinds


def table(kinds: dict) -> str:
    rows = ["| mutation | mutants | JAX rejects | static agrees | false alarms | misses | right line | agreement |",
            "|---|---|---|---|---|---|---|---|"]
    for kind, t in kinds.items():
        rows.append(f"| {kind} | {t['mutants']} | {t['jax_rejects']} | {t['agree']} | {t['false_alarms']} "
                    f"| {t['misses']} | {t['right_line']}/{t['jax_rejects']} | {100 * t['agreement']:.1f} % |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jax-git-dir", help=f"a jax git dir at {JAX_COMMIT[:10]} (else the files come from GitHub)")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--kinds", help=f"comma-separated, of {', '.join(MUTATIONS)} (default: all)")
    parser.add_argument("--methods", help="comma-separated method ids (mosaic_gpu_test.py::SemaphoreTest.test_basic)")
    parser.add_argument("--limit", type=int, help="at most this many mutants per kind, evenly spread over the file order")
    parser.add_argument("--jobs", type=int, default=1, help="check's -j")
    parser.add_argument("--python", type=Path, default=Path(os.environ.get(
        "PALLAS_LSP_JAX_PYTHON", REPO / ".venvs" / "jax" / "bin" / "python")), help="the analysed environment (jax 0.12)")
    parser.add_argument("--json", type=Path, help="write every mutant's record and the summary here")
    parser.add_argument("--keep", type=Path, help="write the mutants here (default: a temporary folder)")
    args = parser.parse_args(argv)
    kinds = args.kinds.split(",") if args.kinds else list(MUTATIONS)
    unknown = [k for k in kinds if k not in MUTATIONS]
    if unknown:
        parser.error(f"unknown kinds: {', '.join(unknown)}")
    started = time.monotonic()
    try:
        root = corpus(args.jax_git_dir, args.cache)
        python = environment(root, args.cache, args.python)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"corpus unavailable: {exc}", file=sys.stderr)
        return 3
    planted = plant(root, kinds, set(args.methods.split(",")) if args.methods else None)
    work = Path(args.keep or tempfile.mkdtemp(prefix="pallas-mutation-"))
    if work.exists():
        shutil.rmtree(work)

    # 1. the unmutated methods: JAX must accept them.
    by_file: dict[str, list[Method]] = {}
    for mutants in planted.values():
        by_file.setdefault(mutants[0].method.file, []).append(mutants[0].method)
    base_cases = [(write_case(work / "base" / Path(f).stem, f, (root / f).read_text(), ms), ms)
                  for f, ms in by_file.items()]
    base = {}
    for (driver, ms), verdicts in zip(base_cases, _split(jax_verdicts(python, work, base_cases), base_cases)):
        base.update({m.id: v for m, v in zip(ms, verdicts)})
    skipped = {mid: v for mid, v in base.items() if v["verdict"] != "accept"}
    kernels = [mid for mid in planted if mid not in skipped]

    # 2. the mutants, each in its own folder.
    mutants = [m for mid in kernels for m in planted[mid]]
    if args.limit:
        mutants = [m for kind in kinds for m in sample([m for m in mutants if m.kind == kind], args.limit)]
    for i, m in enumerate(mutants):
        m.folder = work / f"m{i:04d}"
    cases = [(write_case(m.folder, m.method.file, m.text, [m.method]), [m.method]) for m in mutants]
    for m, (verdict,) in zip(mutants, _split(jax_verdicts(python, work, cases), cases)):
        m.jax = verdict
        if verdict["verdict"] == "accept" and not reached(m):
            m.jax = {**verdict, "verdict": "unknown", "why": "the mutated kernel was not reached"}
    unknown_jax = [m for m in mutants if m.jax["verdict"] == "unknown"]
    mutants = [m for m in mutants if m.jax["verdict"] != "unknown"]

    # 3. the static verdict, one check over the baseline files and every mutant.
    files = [driver.parent / os.path.basename(ms[0].file) for driver, ms in [*base_cases, *cases]]
    for helper in HELPERS:
        (work / helper).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / helper, work / helper)
    found = static_findings([*files, *(work / helper for helper in HELPERS)], python, args.jobs)
    baseline = {ms[0].file: {(f["line"], f["code"]) for f in found.get(os.path.realpath(
        driver.parent / os.path.basename(ms[0].file)), [])} for driver, ms in base_cases}
    for m in mutants:
        m.static_verdict = judge(m, found.get(os.path.realpath(m.folder / os.path.basename(m.method.file)), []),
                                 baseline[m.method.file])

    kinds_summary = summarize(mutants)
    print(f"jax {JAX_COMMIT[:10]}: {len(planted)} methods with a site, {len(kernels)} accepted by JAX unmutated, "
          f"{len(skipped)} skipped; {len(mutants)} mutants ({len(unknown_jax)} JAX could not judge); "
          f"{time.monotonic() - started:.0f} s")
    print(table(kinds_summary))
    disagreements = [m for m in mutants if m.static_verdict["reject"] != (m.jax["verdict"] == "reject")]
    for m in disagreements:
        label = "false alarm" if m.static_verdict["reject"] else "miss"
        print(f"  {label}: {m.id} ({m.what}); JAX: {m.jax.get('message') or 'accepts'}; "
              f"static: {', '.join(m.static_verdict['at']) or 'nothing'}")
    for mid, v in skipped.items():
        print(f"  skipped {mid}: {v.get('message') or v.get('why')}")
    if args.json:
        args.json.write_text(json.dumps({
            "jax_commit": JAX_COMMIT, "summary": kinds_summary,
            "skipped": skipped, "unknown": [{"id": m.id, "what": m.what, **m.jax} for m in unknown_jax],
            "mutants": [{"id": m.id, "kind": m.kind, "what": m.what, "jax": m.jax, "static": m.static_verdict}
                        for m in mutants]}, indent=1) + "\n")
    return 1 if disagreements else 0


def sample(items: list, limit: int) -> list:
    """At most `limit` of the items, evenly spread (the same ones every run)."""
    if len(items) <= limit:
        return items
    return [items[i * len(items) // limit] for i in range(limit)]


def _split(verdicts: list[dict], cases) -> list[list[dict]]:
    out, i = [], 0
    for _, ms in cases:
        out.append(verdicts[i:i + len(ms)])
        i += len(ms)
    return out


if __name__ == "__main__":
    sys.exit(main())
