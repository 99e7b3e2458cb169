"""Server memory for one big document: a generated module opened, then ten one-character edits
(a space after the first unit's `def`).

Prints RSS of the server after initialize (and a small file analysed, once the server's start-up
work is done: the baseline; see `settled_rss`), after the open and after the tenth edit's
diagnostics, and the growth over the baseline as a multiple of the document's size. `plain` never
mentions Pallas; `pallas` imports it in every unit (so it is analysed, incrementally: 1,500 lines
or more); `pallas-top` imports it once, at the top, and every unit uses it. The default size,
5.6 MB, is over the 5 MB limit for analysed documents (not analysed); `--size 4990000` is just
under it (analysed).

    PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/big_document_memory.py plain|pallas|pallas-top [--size BYTES]
        [--edits 10] [--source OLD_CHECKOUT] [--json OUT]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_client import JAX_PYTHON, LspClient, emit, machine  # noqa: E402
from server_memory import proc_status  # noqa: E402

TOP = "from jax.experimental import pallas as pl\n\n\n"
UNIT = ("def helper_{i}(x, y):\n    total = x + y * {i}\n    if total > 10:\n        return [total, x, y]\n"
        "    return {{'a': x, 'b': y}}\n\n")


def document(kind: str, size: int) -> str:
    """Units up to `size` characters (ASCII: bytes too)."""
    unit = ("from jax.experimental import pallas as pl\n" + UNIT) if kind == "pallas" else UNIT
    if kind == "pallas-top":  # one import at the top, every unit using it
        unit = UNIT.replace("    return {{", "    pl.program_id(0)\n    return {{")
    parts, total, i = ([TOP], len(TOP), 0) if kind == "pallas-top" else ([], 0, 0)
    while total < size:
        part = unit.format(i=i)
        if total + len(part) > size and parts:
            break
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


def settled_rss(pid: int, quiet_s: float = 1.0, limit_s: float = 30.0) -> dict:
    """The server's status once its RSS has stayed within 0.1 MiB for `quiet_s`: right after its
    first diagnostics it still loads the interpreter's jedi environment on another thread (~5 MiB),
    which a baseline taken then counted in the big document's growth (and which then ran amid the
    document's first analysis)."""
    deadline = time.monotonic() + limit_s
    status = proc_status(pid)
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = proc_status(pid)
        if abs(now["VmRSS"] - status["VmRSS"]) > 0.1:
            quiet_since = time.monotonic()
        status = now
        if time.monotonic() - quiet_since >= quiet_s:
            break
    return status


def measure(kind: str, size: int, edits: int, source: str | None) -> dict:
    folder = tempfile.mkdtemp()
    try:
        text = document(kind, size)
        path = os.path.join(folder, "big.py")
        Path(path).write_text(text)
        small = os.path.join(folder, "small.py")
        Path(small).write_text("x = 1\n")
        with LspClient(source=source) as client:
            client.initialize(folder, python=JAX_PYTHON, debounce_ms=0)
            uri, _ = client.open(small)
            client.wait_published(uri, 1)
            published = proc_status(client.pid)
            base = settled_rss(client.pid)
            started = time.perf_counter()
            uri, _ = client.open(path)
            _, diagnostics = client.wait_published(uri, 1)
            opened_s = time.perf_counter() - started
            opened = proc_status(client.pid)
            at = text[:text.index("def helper_0(")].count("\n")  # a space typed after `def` of the first unit
            for version in range(2, edits + 2):
                client.change(uri, version, at, 4, 4, " ")
                _, diagnostics = client.wait_published(uri, version)
            end = proc_status(client.pid)
            total_s = time.perf_counter() - started
    finally:
        shutil.rmtree(folder)
    mib = len(text) / 2**20
    return {
        "kind": kind, "size_bytes": len(text), "lines": text.count("\n"), "edits": edits,
        "baseline_rss_mib": base["VmRSS"], "rss_at_first_publish_mib": published["VmRSS"],
        "after_open_rss_mib": opened["VmRSS"], "after_edits_rss_mib": end["VmRSS"],
        "hwm_mib": end["VmHWM"], "growth_over_size": (end["VmRSS"] - base["VmRSS"]) / mib,
        "hwm_growth_over_size": (end["VmHWM"] - base["VmRSS"]) / mib,
        "growth_over_size_from_first_publish": (end["VmRSS"] - published["VmRSS"]) / mib,
        "open_s": opened_s, "total_s": total_s, "diagnostics": len(diagnostics),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", nargs="?", default="plain", choices=("plain", "pallas", "pallas-top"))
    parser.add_argument("--size", type=int, default=5_600_000, help="document size in bytes (5 MB limit: 5000000)")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    result = measure(args.kind, args.size, args.edits, args.source)
    emit({"benchmark": "big_document_memory", "machine": machine(), **result}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
