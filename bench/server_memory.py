"""Peak memory of the language server after it has analysed the whole corpus (every file opened).

Starts `pallas-lsp serve` (workspace: the jax package), opens every corpus file and waits for its
diagnostics, then reads VmHWM (peak resident set) and VmRSS of the server process from /proc. jedi
runs the analysed interpreter in a helper process; its memory is reported separately.

    .venvs/dev/bin/python bench/server_memory.py [--runs 3] [--no-big] [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_big_file  # noqa: E402
from lsp_client import JAX_PYTHON, LspClient, corpus_files, emit, jax_package_dir, machine  # noqa: E402

TARGET_MIB = 300.0


def proc_status(pid: int) -> dict[str, float]:
    """VmHWM and VmRSS in MiB (a sandboxed kernel may not report VmHWM: it is then NaN)."""
    values = {"VmHWM": float("nan")}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0]) / 1024
    return values


def descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                found += [int(c) for c in children]
                queue += [int(c) for c in children]
        except OSError:
            continue
    return found


def measure(files: list[Path], root: Path, python: str, server: dict) -> dict:
    with LspClient(**server) as client:
        client.initialize(str(root), python=python, debounce_ms=0)
        started = time.perf_counter()
        after_start = proc_status(client.pid)
        diagnostics = 0
        for path in files:
            uri, _ = client.open(path)
            _, published = client.wait_published(uri, 1)
            diagnostics += len(published)
        elapsed = time.perf_counter() - started
        status = proc_status(client.pid)
        helpers = {}
        for child in descendants(client.pid):
            try:
                helpers[child] = proc_status(child)
            except OSError:
                pass
    return {"files": len(files), "diagnostics": diagnostics, "seconds_to_analyse_all": elapsed,
            "server_rss_after_initialize_mib": after_start["VmRSS"], "server_vmhwm_mib": status["VmHWM"],
            "server_vmrss_mib": status["VmRSS"],
            "helper_processes_vmhwm_mib": sorted(h["VmHWM"] for h in helpers.values())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-big", action="store_true")
    parser.add_argument("--limit", type=int, help="open only the first N corpus files (smoke tests)")
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    server = {"source": args.source}
    root = jax_package_dir(args.python)
    files = corpus_files(args.python)[: args.limit]
    if not args.no_big:
        big, _ = make_big_file.write()
        files.append(big)
    runs = [measure(files, root, args.python, server) for _ in range(args.runs)]
    peaks = sorted(r["server_vmhwm_mib"] for r in runs)
    median = peaks[len(peaks) // 2] if len(peaks) % 2 else (peaks[len(peaks) // 2 - 1] + peaks[len(peaks) // 2]) / 2
    emit({"benchmark": "server_memory", "machine": machine(), "root": str(root),
          "runs": runs,
          "server_vmhwm_mib": {"median": median, "min": peaks[0], "max": peaks[-1]},
          "target_mib": TARGET_MIB, "target_met": median <= TARGET_MIB}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
