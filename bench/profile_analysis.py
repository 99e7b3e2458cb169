"""Profile the analysis core (cProfile) the way the server runs it: one Project, a file re-analysed after edits.

    .venvs/dev/bin/python bench/profile_analysis.py FILE [--root DIR] [--edits 10] [--top 30] [--sort tottime]

In-process, no LSP: shows where warm re-analysis spends its time. `--corpus` profiles the first
analysis of every corpus file instead (what `pallas-lsp check` does).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, corpus_files, summary  # noqa: E402
from lsp_latency import edit_line  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?")
    parser.add_argument("--root")
    parser.add_argument("--corpus", action="store_true")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--python", default=JAX_PYTHON)
    parser.add_argument("--no-jedi", action="store_true")
    args = parser.parse_args(argv)
    profiler = cProfile.Profile()
    if args.corpus:
        files = [str(f) for f in corpus_files(args.python)]
        project = Project(root=args.root or os.path.commonpath(files), python=args.python, use_jedi=not args.no_jedi)
        project.environment  # noqa: B018 - start the environment outside the profile
        started = time.perf_counter()
        profiler.enable()
        for file in files:
            analyze(project, file)
        profiler.disable()
        print(f"{len(files)} files in {time.perf_counter() - started:.2f} s (profiled)")
    else:
        path = os.path.abspath(args.file)
        project = Project(root=args.root or os.path.dirname(path), python=args.python, use_jedi=not args.no_jedi)
        text = Path(path).read_text()
        lines = text.splitlines(keepends=True)
        middle, indent = edit_line(text)  # the same edit as lsp_latency.py: a line inside a kernel body
        project.set_text(path, text)
        started = time.perf_counter()
        analyze(project, path, text)
        print(f"first analysis: {1000 * (time.perf_counter() - started):.0f} ms")
        samples = []
        for edit in range(args.edits):
            edited = "".join(lines[:middle] + [f"{indent}_bench_edit = {edit}\n"] + lines[middle:])
            project.set_text(path, edited)
            started = time.perf_counter()
            profiler.enable()
            analyze(project, path, edited)
            profiler.disable()
            samples.append(time.perf_counter() - started)
        print("re-analysis (profiled) ms:", {k: round(v, 1) for k, v in summary(samples).items()})
    pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
