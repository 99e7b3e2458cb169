"""Keystroke latency on the biggest kernel files of real packages, and `check` CPU on their trees.

Pinned wheels are fetched with `pip download --no-deps` into a cache outside the repository
(`--cache`, default `~/.cache/pallas-lsp-bench`) and unpacked there; nothing of them enters the
repository. Each is checked against its pinned version before use.

Latency (default mode): for each file a real `pallas-lsp serve` over stdio (bench/lsp_client.py,
debounce 0, workspace: the unpacked wheel, a fresh `PALLAS_LSP_CACHE_DIR`; `--warm-cache`: one a
server started on the file before filled) opens the file (the first analysis is timed from
`didOpen` to its `publishDiagnostics`, with the server's CPU meanwhile, all its threads), then types inside a kernel
body: on the middle one-line assignment of the named function, a character is inserted before the
assigned name and deleted again, alternately (a different character each time). Each keystroke is
timed from writing its `didChange` to reading the `publishDiagnostics` of that version, and the
server's CPU time over the timed keystrokes (user + system, /proc, 10 ms ticks) is divided among
them: a figure a machine shared with other processes spoils less than the wall times. The server's
resident set (VmRSS) and peak (VmHWM) are read from /proc at the end. `--file-events`: the client
offers file watching (VS Code does), so the server trusts file events instead of comparing stamps.

`--check`: `pallas-lsp check --format json` of each package tree in a fresh process (pallas_lsp's
`.pyc` files written first, as installing it does), with a fresh
empty `PALLAS_LSP_CACHE_DIR` every run, `--jobs 1` and the default, against `ast.parse` of the
same `.py` files in a fresh process of the same interpreter, interleaved. CPU seconds are user +
system of the process and of every process under it, orphans included (jedi's interpreter outlives
a check that exits without waiting for it): this process becomes their subreaper.

    .venvs/dev/bin/python bench/real_file_latency.py [--edits 40] [--warmup 4] [--only maxtext ...] [--file-events] [--json OUT]
    .venvs/dev/bin/python bench/real_file_latency.py ... --together: also the four files open in one server, its RSS
    .venvs/dev/bin/python bench/real_file_latency.py --check [--runs 3] [--jax-git-dir GIT_DIR] [--json OUT]
    .venvs/dev/bin/python bench/real_file_latency.py --in-process: the analysis's own CPU (first, keystrokes), no LSP
        (--calls: the first analysis under cProfile, its count of Python calls and of modules modelled, and the
        median count of four more keystrokes, profiled after the timed ones: counts the same in every run whatever
        the machine's load; the first analysis's CPU then includes the profiler's;
        --first-pass [--runs 3]: the server's first pass instead, a fresh cache each run, medians)
    (both: [--source CHECKOUT] runs another checkout's server/; [--before CHECKOUT] measures that one too,
    interleaved file by file, and prints before → after; [--python JAX_PYTHON])
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import cProfile
import ctypes
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, LspClient, emit, machine, pallas_command, summary  # noqa: E402
from server_memory import proc_status  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pallas-lsp-bench"

# name: (PyPI project, pinned version)
PACKAGES = {
    "maxtext": ("maxtext", "0.2.5"),
    "tpu-inference": ("tpu-inference", "0.32.0"),
    "jla": ("jax-linear-attention", "0.1.0"),
    "ejkernel": ("ejkernel", "0.0.80.3"),
    "tokamax": ("tokamax", "0.0.17"),
}

# name: (file in the wheel, the kernel-body function typed in, which of the functions of that name)
FILES = {
    "maxtext": ("maxtext/layers/attention_op.py", "wrap_flash_attention", 0),
    "tpu-inference": ("tpu_inference/kernels/experimental/rpa_v3_cp/kernel.py", "_ragged_paged_attention_kernel_loop", 0),
    "jla": ("jla/ops/mosaic_gpu/attention.py", "kernel", 0),
    "ejkernel": ("ejkernel/kernels/_pallas/tpu/blocksparse_attention/_kernel.py", "flash_attention_kernel", 0),
}

CHECK_TREES = ("maxtext", "tpu-inference", "tokamax")  # and "jax" with --jax-git-dir

PARSE_ALL = ("import ast, sys, time\nstarted = time.process_time()\n"
             "for path in sys.argv[1:]:\n    try:\n        ast.parse(open(path, 'rb').read())\n"
             "    except SyntaxError:\n        pass\n"
             "print(time.process_time() - started)\n")


def unpacked(name: str, cache: Path) -> Path:
    """The unpacked wheel of package `name` (downloaded and unpacked on first use)."""
    project, version = PACKAGES[name]
    target = cache / f"{project}-{version}"
    if (target / ".unpacked").exists():
        return target
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                    "--dest", str(wheels), f"{project}=={version}"], check=True, stdout=subprocess.DEVNULL)
    normalized = project.replace("-", "_")
    wheel = next(w for w in wheels.glob(f"{normalized}-{version}-*.whl"))
    if target.exists():
        shutil.rmtree(target)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    (target / ".unpacked").write_text(wheel.name + "\n")
    return target


def typing_spot(text: str, function: str, occurrence: int) -> tuple[int, int]:
    """(0-based line, column) where the assigned name starts on the middle one-line `name = ...`
    statement of the body of the `occurrence`th function called `function`."""
    found = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name == function]
    found.sort(key=lambda n: n.lineno)
    body = found[occurrence]
    assigns = [s for s in ast.walk(body) if isinstance(s, ast.Assign) and s.lineno == s.end_lineno
               and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)]
    assigns.sort(key=lambda s: s.lineno)
    spot = assigns[len(assigns) // 2]
    return spot.lineno - 1, spot.col_offset


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, all its threads (clock ticks: 10 ms here)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_file(name: str, cache: Path, edits: int, warmup: int, python: str, source: str | None,
                 file_events: bool = False, warm_cache: bool = False) -> dict:
    root = unpacked(name, cache)
    relative, function, occurrence = FILES[name]
    path = root / relative
    text = path.read_text(encoding="utf-8")
    line, column = typing_spot(text, function, occurrence)
    with tempfile.TemporaryDirectory(prefix="pallas-lsp-bench-cache-") as cache_dir:
        if warm_cache:  # a session before this one left its caches (import answers, the import index)
            with LspClient(source=source, env={"PALLAS_LSP_CACHE_DIR": cache_dir}) as client:
                client.initialize(str(root), python=python, debounce_ms=0, file_events=file_events)
                uri, _ = client.open(path, text)
                client.wait_published(uri, 1, timeout=600)
        return _measure(name, root, relative, function, path, text, line, column, cache_dir, edits, warmup, python,
                        source, file_events, warm_cache)


def _measure(name, root, relative, function, path, text, line, column, cache_dir, edits, warmup, python, source,
             file_events, warm_cache) -> dict:
    samples, counts = [], set()
    with LspClient(source=source, env={"PALLAS_LSP_CACHE_DIR": cache_dir}) as client:
        client.initialize(str(root), python=python, debounce_ms=0, file_events=file_events)
        cpu_at_open = cpu_seconds(client.pid)
        uri, sent = client.open(path, text)
        arrived, diagnostics = client.wait_published(uri, 1, timeout=600)
        first, first_cpu, from_start = arrived - sent, cpu_seconds(client.pid) - cpu_at_open, arrived - client.started
        first_count = len(diagnostics)
        letters = "abcdefghijklmnopqrstuvwxyz"
        for step in range(2 * (warmup + edits)):
            version = step + 2
            if step % 2 == 0:  # insert a letter before the name, then delete it
                sent = client.change(uri, version, line, column, column, letters[(step // 2) % len(letters)])
            else:
                sent = client.change(uri, version, line, column, column + 1, "")
            if step == 2 * warmup:
                cpu_before = cpu_seconds(client.pid)
            arrived, diagnostics = client.wait_published(uri, version, timeout=600)
            counts.add(len(diagnostics))
            if step >= 2 * warmup:
                samples.append(arrived - sent)
        cpu = cpu_seconds(client.pid) - cpu_before
        memory = proc_status(client.pid)
    return {"name": name, "package": "%s %s" % PACKAGES[name], "file": relative, "root": str(root),
            "lines": len(text.splitlines()), "typed_in": function, "edited_line": line + 1,
            "first_analysis_ms": first * 1000, "first_analysis_server_cpu_ms": first_cpu * 1000,
            "server_start_to_first_diagnostics_ms": from_start * 1000, "diagnostics_at_open": first_count, "diagnostics": sorted(counts),
            "keystroke_ms": summary(samples), "server_cpu_ms_per_keystroke": cpu * 1000 / len(samples),
            "file_events": file_events, "warm_cache": warm_cache, "server_rss_mib": memory["VmRSS"], "server_vmhwm_mib": memory["VmHWM"]}


def open_together(names: list[str], cache: Path, python: str, source: str | None) -> dict:
    """One server, each package a workspace folder, every file opened at once: its memory when all
    are analysed and the server is idle (what a user with these files open holds)."""
    roots = [unpacked(name, cache) for name in names]
    with tempfile.TemporaryDirectory(prefix="pallas-lsp-bench-cache-") as cache_dir:
        with LspClient(source=source, env={"PALLAS_LSP_CACHE_DIR": cache_dir}) as client:
            client.initialize(str(roots[0]), python=python, debounce_ms=0, folders=[str(r) for r in roots])
            started = time.perf_counter()
            uris = [client.open(root / FILES[name][0])[0] for name, root in zip(names, roots)]
            for uri in uris:
                client.wait_published(uri, 1, timeout=600)
            analysed = time.perf_counter() - started
            wait_until_idle(client.pid)  # the whole analyses after the first passes, and the index's rest
            memory = proc_status(client.pid)
    return {"files": names, "all_analysed_ms": analysed * 1000, "server_rss_mib": memory["VmRSS"],
            "server_vmhwm_mib": memory["VmHWM"]}


def wait_until_idle(pid: int, quiet_s: float = 2.0, timeout: float = 600) -> None:
    """Until the process has used no CPU for `quiet_s` (a state: the server has nothing left to do)."""
    def cpu() -> int:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks

    deadline = time.monotonic() + timeout
    last, since = cpu(), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet_s:
        time.sleep(0.2)
        now = cpu()
        if now != last:
            last, since = now, time.monotonic()


# ---- in one process: the analysis's own CPU -------------------------------------------------------

def in_process(name: str, cache: Path, edits: int, warmup: int, python: str, source: str | None,
               calls: bool = False, first_pass: bool = False) -> dict:
    """`--in-process`: the file's first analysis and keystrokes (the same typing as `measure_file`) by
    `Project.set_text` and `engine.analyze_incremental` in a fresh process of the checkout, no LSP, the garbage
    collector set as the server sets it for a first analysis: the CPU seconds of the analysis itself (jedi's interpreter, another
    process, not counted). `first_pass`: instead, the server's first pass of the file (`analyze_before_importers`,
    what its first diagnostics wait for) with a fresh `PALLAS_LSP_CACHE_DIR` (jedi's answers asked, as on a first start)."""
    _, env = pallas_command("serve", source)
    with tempfile.TemporaryDirectory(prefix="pallas-lsp-bench-cache-") as cache_dir:
        if first_pass:
            env = {**env, "PALLAS_LSP_CACHE_DIR": cache_dir}
        done = subprocess.run([sys.executable, __file__, "--worker", name, "--edits", str(edits), "--warmup", str(warmup),
                               "--cache", str(cache), "--python", python, *(["--calls"] if calls else []),
                               *(["--first-pass"] if first_pass else [])],
                              env=env, check=True, capture_output=True)
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def first_pass_worker(name: str, cache: Path, python: str) -> dict:
    """The server's first pass of the file in a fresh project (`in_process(first_pass=True)`)."""
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze_before_importers, selected_codes
    from pallas_lsp.lsp.memory import collecting_less_often

    root = unpacked(name, cache)
    path = str(root / FILES[name][0])
    text = Path(path).read_text(encoding="utf-8")
    project = Project(root=str(root), python=python)
    project.environment  # noqa: B018 - loaded on its own thread by the server, beside the analysis
    started = time.process_time()
    with collecting_less_often():
        project.set_text(path, text)
        _, left_out = analyze_before_importers(project, path, text, codes=selected_codes(None, None))
    return {"name": name, "file": FILES[name][0], "first_pass_cpu_ms": (time.process_time() - started) * 1000,
            "modules_modelled": len(project._models), "importers_left_out": len(left_out)}


def worker(name: str, cache: Path, edits: int, warmup: int, python: str, calls: bool = False) -> dict:
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze_incremental, selected_codes

    try:  # the garbage collector as the server sets it for a first analysis (a checkout without: Python's)
        from pallas_lsp.lsp.memory import collecting_less_often
    except ImportError:
        collecting_less_often = contextlib.nullcontext

    root = unpacked(name, cache)
    relative, function, occurrence = FILES[name]
    path = str(root / relative)
    text = Path(path).read_text(encoding="utf-8")
    line, column = typing_spot(text, function, occurrence)
    lines = text.splitlines(keepends=True)
    project, codes = Project(root=str(root), python=python), selected_codes(None, None)
    profiler = cProfile.Profile() if calls else None
    started = time.process_time()
    with collecting_less_often():
        if profiler is not None:
            profiler.enable()
        project.set_text(path, text)
        analyze_incremental(project, path, text, codes=codes)
        if profiler is not None:
            profiler.disable()
    first = time.process_time() - started
    counted = {"first_analysis_calls": pstats.Stats(profiler).total_calls, "modules_modelled": len(project._models)} \
        if profiler is not None else {}
    def keystroke(step: int) -> None:
        edited = text
        if step % 2 == 0:  # a letter typed before the assigned name, then deleted again
            typed = lines[line][:column] + "abcdefghijklmnopqrstuvwxyz"[(step // 2) % 26] + lines[line][column:]
            edited = "".join([*lines[:line], typed, *lines[line + 1:]])
        project.set_text(path, edited)
        analyze_incremental(project, path, edited, codes=codes)

    samples = []
    for step in range(2 * (warmup + edits)):
        started = time.process_time()
        keystroke(step)
        if step >= 2 * warmup:
            samples.append(time.process_time() - started)
    if profiler is not None:  # then four more under cProfile: a count the machine's load does not change
        per_keystroke = []
        for step in range(2 * (warmup + edits), 2 * (warmup + edits) + 4):
            profiler = cProfile.Profile()
            profiler.enable()
            keystroke(step)
            profiler.disable()
            per_keystroke.append(pstats.Stats(profiler).total_calls)
        counted["keystroke_calls"] = sorted(per_keystroke)[len(per_keystroke) // 2]
    return {"name": name, "file": relative, "first_analysis_cpu_ms": first * 1000, **counted,
            "keystroke_cpu_ms": summary(samples)}


# ---- check: CPU seconds of a process tree ------------------------------------------------------

def become_subreaper() -> bool:
    """Orphans of our children (jedi's interpreter after `check` exits) are reparented to us, so
    their CPU time is counted when we reap them."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def run_tree(command: list[str], env: dict, timeout: float = 3600) -> tuple[float, float, int, bytes]:
    """(wall seconds, CPU seconds of the process and everything under it, exit status, stdout)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        cpu = usage.ru_utime + usage.ru_stime
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:  # orphans left behind, reparented to us
            try:
                pid, _, usage = os.wait4(-1, 0)
            except ChildProcessError:
                break
            cpu += usage.ru_utime + usage.ru_stime
        out.seek(0)
        return wall, cpu, process.returncode, out.read()


def tree_paths(name: str, cache: Path, jax_git_dir: str | None) -> list[Path]:
    """What `check` is given for tree `name`: an unpacked wheel, or jax's tests/pallas and
    jax/experimental/pallas exported from a git dir (with jax/_src/pallas beside them, as in a checkout)."""
    if name != "jax":
        return [unpacked(name, cache)]
    from real_code import JAX_CHECKED, export_jax
    _, root = export_jax(jax_git_dir, cache)
    return [root / part for part in JAX_CHECKED]


def compile_bytecode(source: str | None) -> None:
    """Write the `.pyc` files of the checkout's `server/` (this one's without `source`), as installing
    the package does: with PYTHONDONTWRITEBYTECODE set (this machine sets it), every checked process
    compiled pallas_lsp's modules again, ~0.3 s of CPU each (and each worker's), counted as the check's."""
    server = os.path.join(source, "server") if source else str(Path(__file__).resolve().parents[1] / "server")
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(server, "pallas_lsp")],
                   stdout=subprocess.DEVNULL, check=False)


def check_trees(names: list[str], cache: Path, runs: int, python: str, source: str | None,
                jobs: list[str], jax_git_dir: str | None = None) -> dict:
    if not become_subreaper():
        print("warning: not a subreaper: orphaned processes' CPU is not counted", file=sys.stderr)
    compile_bytecode(source)
    command, env = pallas_command("check", source)
    results = {}
    for name in names:
        paths = tree_paths(name, cache, jax_git_dir)
        files = sorted(str(p) for root in paths for p in root.rglob("*.py"))
        lines = sum(len(Path(f).read_bytes().splitlines()) for f in files)
        series: dict = {f"jobs_{j}": {"wall": [], "cpu": []} for j in jobs}
        parse = {"wall": [], "cpu": [], "inner": []}
        outputs = {}
        for _ in range(runs):
            for j in jobs:
                with tempfile.TemporaryDirectory(prefix="pallas-lsp-bench-cache-") as cache_dir:
                    extra = [] if j == "default" else ["--jobs", j]
                    wall, cpu, code, out = run_tree([*command, "--format", "json", "--python", python, *extra,
                                                     *map(str, paths)], {**env, "PALLAS_LSP_CACHE_DIR": cache_dir})
                if code not in (0, 1):
                    raise SystemExit(f"pallas-lsp check failed ({code}) on {paths}")
                series[f"jobs_{j}"]["wall"].append(wall)
                series[f"jobs_{j}"]["cpu"].append(cpu)
                outputs[j] = out
            wall, cpu, code, out = run_tree([sys.executable, "-c", PARSE_ALL, *files], dict(os.environ))
            parse["wall"].append(wall)
            parse["cpu"].append(cpu)
            parse["inner"].append(float(out))
        findings = json.loads(next(iter(outputs.values())) or b"[]")
        parse_cpu = summary(parse["cpu"], 1.0)["median"]
        entry = {"files": len(files), "lines": lines, "findings": len(findings),
                 "same_output_every_jobs": len(set(outputs.values())) == 1,
                 "ast_parse_process_cpu_s": summary(parse["cpu"], 1.0), "ast_parse_only_s": summary(parse["inner"], 1.0),
                 "ast_parse_process_wall_s": summary(parse["wall"], 1.0)}
        for key, values in series.items():
            cpu = summary(values["cpu"], 1.0)
            entry[key] = {"cpu_s": cpu, "wall_s": summary(values["wall"], 1.0),
                          "cpu_over_ast_parse": cpu["median"] / parse_cpu}
        results[name] = entry
    return results


def table(results: list[dict]) -> str:
    rows = ["| file | lines | first analysis ms (server CPU ms) | keystroke p50 ms | p95 ms | max ms | server CPU ms / keystroke "
            "| RSS MiB (peak) |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        k = r["keystroke_ms"]
        rows.append(f"| {r['package']} `{r['file']}` | {r['lines']:,} | {r['first_analysis_ms']:.0f} "
                    f"({r['first_analysis_server_cpu_ms']:.0f}) | "
                    f"{k['median']:.0f} | {k['p95']:.0f} | {k['max']:.0f} | {r['server_cpu_ms_per_keystroke']:.0f} | "
                    f"{r['server_rss_mib']:.0f} ({r['server_vmhwm_mib']:.0f}) |")
    return "\n".join(rows)


def check_table(results: dict) -> str:
    rows = ["| tree | files | lines | ast.parse CPU s | check --jobs 1 CPU s (x) wall s | check default CPU s (x) wall s |",
            "|---|---|---|---|---|---|"]
    for name, r in results.items():
        cells = []
        for key in ("jobs_1", "jobs_default"):
            if key in r:
                cells.append(f"{r[key]['cpu_s']['median']:.2f} ({r[key]['cpu_over_ast_parse']:.1f}x) "
                             f"{r[key]['wall_s']['median']:.2f}")
            else:
                cells.append("-")
        rows.append(f"| {name} | {r['files']} | {r['lines']:,} | {r['ast_parse_process_cpu_s']['median']:.2f} | "
                    f"{cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=40, help="keystrokes timed per file (inserts and deletes)")
    parser.add_argument("--warmup", type=int, default=4, help="keystrokes before timing")
    parser.add_argument("--only", nargs="+", help="only these packages: " + ", ".join(PACKAGES))
    parser.add_argument("--check", action="store_true", help="time `check` on the package trees instead")
    parser.add_argument("--file-events", action="store_true",
                        help="the client offers file watching (as VS Code does): the server trusts file events")
    parser.add_argument("--warm-cache", action="store_true",
                        help="a server started on the file before leaves its caches (import answers, the index)")
    parser.add_argument("--runs", type=int, default=3, help="--check: repetitions")
    parser.add_argument("--jobs", nargs="+", default=["1", "default"], help="--check: --jobs values")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="where the wheels are downloaded and unpacked")
    parser.add_argument("--python", default=JAX_PYTHON, help="the analysed project's interpreter")
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--before", help="also measure another checkout (`before`), interleaved: a comparison table")
    parser.add_argument("--jax-git-dir", help="--check: also jax's tests/pallas and jax/experimental/pallas at this "
                        "git dir's HEAD (tree `jax`)")
    parser.add_argument("--together", action="store_true",
                        help="also open the files in one server (a workspace folder each): its RSS after all")
    parser.add_argument("--json", help="also write the result here")
    parser.add_argument("--in-process", action="store_true",
                        help="the analysis's own CPU in one process (set_text + analyze_incremental), no LSP")
    parser.add_argument("--first-pass", action="store_true",
                        help="--in-process: the server's first pass of each file, fresh cache, medians of --runs")
    parser.add_argument("--calls", action="store_true",
                        help="--in-process: the first analysis's count of Python calls and modules modelled, and a keystroke's (cProfile)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cache = Path(args.cache).expanduser()
    if args.worker:
        print(json.dumps(first_pass_worker(args.worker, cache, args.python) if args.first_pass else
                         worker(args.worker, cache, args.edits // 2, args.warmup // 2, args.python, args.calls)))
        return 0
    sources = ([("before", args.before)] if args.before else []) + [("after" if args.before else "this", args.source)]
    if args.in_process:
        found = {label: [] for label, _ in sources}
        if args.first_pass:  # rounds interleaved file by file and checkout by checkout: medians of `--runs`
            for name in [n for n in (args.only or FILES) if n in FILES]:
                for label, source in sources:
                    found[label].append([])
                for _ in range(args.runs):
                    for label, source in sources:
                        found[label][-1].append(in_process(name, cache, 0, 0, args.python, source, first_pass=True))
            emit({"benchmark": "real_file_first_pass", "machine": machine(), **{f"files_{k}": v for k, v in found.items()}},
                 args.json)
            for label, rows in found.items():
                for runs in rows:
                    cpu = sorted(r["first_pass_cpu_ms"] for r in runs)
                    print(f"{label}: {runs[0]['name']}: first pass {summary([c / 1000 for c in cpu])['median']:.0f} ms CPU "
                          f"(median of {len(cpu)}: {', '.join(f'{c:.0f}' for c in cpu)}), {runs[0]['modules_modelled']} modules modelled")
            return 0
        for name in [n for n in (args.only or FILES) if n in FILES]:
            for label, source in sources:
                found[label].append(in_process(name, cache, args.edits, args.warmup, args.python, source, args.calls))
        emit({"benchmark": "real_file_in_process", "machine": machine(), **{f"files_{k}": v for k, v in found.items()}},
             args.json)
        for label, rows in found.items():
            for r in rows:
                k = r["keystroke_cpu_ms"]
                counted = (f" ({r['first_analysis_calls']:,} Python calls, {r['modules_modelled']} modules modelled)"
                           if "first_analysis_calls" in r else "")
                calls = f" ({r['keystroke_calls']:,} Python calls)" if "keystroke_calls" in r else ""
                print(f"{label}: {r['name']}: first analysis {r['first_analysis_cpu_ms']:.0f} ms CPU{counted}, keystroke CPU "
                      f"median {k['median']:.1f} ms, p95 {k['p95']:.1f} ms{calls}")
        return 0
    if args.check:
        names = args.only or [*CHECK_TREES, *(["jax"] if args.jax_git_dir else [])]
        runs = {label: {} for label, _ in sources}
        for name in names:  # interleaved: each tree with each checkout before the next tree
            for label, source in sources:
                runs[label].update(check_trees([name], cache, args.runs, args.python, source, args.jobs,
                                               args.jax_git_dir))
        emit({"benchmark": "real_file_check", "machine": machine(), **{f"trees_{label}": found for label, found in runs.items()}},
             args.json)
        for label, found in runs.items():
            print(f"{label}:\n{check_table(found)}")
        return 0
    names = [n for n in (args.only or FILES) if n in FILES]
    results: dict[str, list] = {label: [] for label, _ in sources}
    for name in names:
        for label, source in sources:
            results[label].append(measure_file(name, cache, args.edits // 2, args.warmup // 2, args.python, source,
                                               args.file_events, args.warm_cache))
    together = {label: open_together(names, cache, args.python, source) for label, source in sources} \
        if args.together else {}
    emit({"benchmark": "real_file_latency", "machine": machine(), **{f"files_{label}": found for label, found in results.items()},
          **{f"together_{label}": found for label, found in together.items()}}, args.json)
    for label, found in results.items():
        print(f"{label}:\n{table(found)}")
        if label in together:
            t = together[label]
            print(f"{label}: {len(names)} files open in one server: RSS {t['server_rss_mib']:.0f} MiB "
                  f"(peak {t['server_vmhwm_mib']:.0f}), all analysed in {t['all_analysed_ms']:.0f} ms")
    if args.before:
        print(comparison(results["before"], results["after"]))
    return 0


def comparison(before: list[dict], after: list[dict]) -> str:
    rows = ["| file | keystroke p50 ms before → after | p95 ms before → after (ratio) | server CPU ms / keystroke before → after "
            "| first analysis ms before → after | its server CPU ms before → after |", "|---|---|---|---|---|---|"]
    for b, a in zip(before, after):
        kb, ka = b["keystroke_ms"], a["keystroke_ms"]
        rows.append(f"| {a['package']} `{a['file']}` | {kb['median']:.0f} → {ka['median']:.0f} | "
                    f"{kb['p95']:.0f} → {ka['p95']:.0f} ({kb['p95'] / ka['p95']:.0f}x) | "
                    f"{b['server_cpu_ms_per_keystroke']:.0f} → {a['server_cpu_ms_per_keystroke']:.0f} | "
                    f"{b['first_analysis_ms']:.0f} → {a['first_analysis_ms']:.0f} | "
                    f"{b['first_analysis_server_cpu_ms']:.0f} → {a['first_analysis_server_cpu_ms']:.0f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
