"""Peak memory and time of a fix in a file with one very long line: `pallas-lsp check --diff` (which builds,
verifies and prints the file's fix) against `pallas-lsp check` (the analysis alone) of the same file, each
in a fresh process whose peak resident set is read from the kernel (`wait4`, the process and its children).

The file (`bench/.generated/long_line_<kind>.py`, deterministic): examples/kernels/pal001_global_buffer.py
(a PAL001 and its fix), one module-level line of `--line` bytes, then comment lines up to `--size` bytes
(default: a 2 MB file with a 1 MB line). `--kind strings`: `BLOB = ("0123456789abcdef" ...)` (52,000
tokens, one syntax-tree node); `numbers`: `DATA = [1, 1, ...]` (333,000 tokens, a node each).

Each process may map `--limit-mib` at most and run `--timeout` seconds at most: a checkout that blows up
(`--source`, an older one) is reported as such ("MemoryError", "timeout") instead of taking the machine.

    .venvs/dev/bin/python bench/fix_memory_long_line.py [--kind strings|numbers] [--size BYTES] [--line BYTES]
        [--runs 3] [--source CHECKOUT] [--limit-mib 4096] [--timeout 600] [--json OUT]
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fix_cost import GENERATED, _write  # noqa: E402
from lsp_client import JAX_PYTHON, REPO, emit, machine, pallas_command, summary  # noqa: E402

KERNEL = REPO / "examples" / "kernels" / "pal001_global_buffer.py"
FIXED = "+def scale_rows(x_ref, o_ref, staging_ref):"  # the fix's new kernel parameter, in the diff
PIECES = {"strings": ('BLOB = (', '"0123456789abcdef" ', ')\n'), "numbers": ("DATA = [", "1, ", "1]\n")}


def document(kind: str, size: int, line: int) -> str:
    head, piece, tail = PIECES[kind]
    long_line = head + piece * ((line - len(head) - len(tail)) // len(piece)) + tail
    parts, i = [KERNEL.read_text(), "\n", long_line], 0
    total = sum(map(len, parts))
    while total < size:
        comment = f"# {i:07d}: a comment line of the module's own notes, some eighty characters long\n"
        parts.append(comment)
        total += len(comment)
        i += 1
    return "".join(parts)


def run(arguments: list[str], source: str | None, limit_mib: int, timeout: float, cwd: Path) -> dict:
    """One fresh `pallas-lsp check ...`: its peak resident set (MiB), seconds, and how it ended."""
    command, env = pallas_command("check", source)
    limit = limit_mib << 20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([*command, *arguments], cwd=cwd, env=env, stdout=out, stderr=err,
                                   preexec_fn=limited, start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout and not timed_out:
                os.killpg(process.pid, signal.SIGKILL)
                timed_out = True
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    ended = ("timeout" if timed_out else "MemoryError" if "MemoryError" in stderr
             else f"exit {process.returncode}")
    return {"peak_mib": usage.ru_maxrss / 1024, "seconds": seconds, "ended": ended,
            "fixed": FIXED in stdout.splitlines()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=tuple(PIECES), default="strings")
    parser.add_argument("--size", type=int, default=2_000_000, help="file size in bytes")
    parser.add_argument("--line", type=int, default=1_000_000, help="the long line's length in bytes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--source", help="also run another checkout's server/ (before/after), interleaved, once")
    parser.add_argument("--limit-mib", type=int, default=4096, help="address space each process may map")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--out", default=str(GENERATED), help="folder for the generated file")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    path = _write(Path(args.out), f"long_line_{args.kind}.py", document(args.kind, args.size, args.line))
    check = ["--python", args.python, path.name]
    measured: dict[str, list[dict]] = {"check": [], "check_diff": []}
    for number in range(args.runs):
        measured["check"].append(run(check, None, args.limit_mib, args.timeout, path.parent))
        measured["check_diff"].append(run(["--diff", *check], None, args.limit_mib, args.timeout, path.parent))
        if args.source and number == 0:
            measured["source_check_diff"] = [run(["--diff", *check], args.source, args.limit_mib, args.timeout,
                                                 path.parent)]
    result = {"benchmark": "fix_memory_long_line", "machine": machine(), "file": str(path), "kind": args.kind,
              "size_bytes": path.stat().st_size, "line_bytes": args.line, "limit_mib": args.limit_mib}
    for name, runs in measured.items():
        result[name] = {"peak_mib": summary([r["peak_mib"] for r in runs], 1), "s": summary([r["seconds"] for r in runs], 1),
                        "ended": sorted({r["ended"] for r in runs}), "fixed": all(r["fixed"] for r in runs)}
    result["diff_over_check_peak"] = result["check_diff"]["peak_mib"]["median"] / result["check"]["peak_mib"]["median"]
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
