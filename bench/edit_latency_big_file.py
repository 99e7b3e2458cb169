"""Warm re-diagnosis of a big module after edits of several kinds, against `ast.parse` of the module in the same run.

A real `pallas-lsp serve` over stdio (debounce 0) opens the generated 20,000-line module
(bench/make_big_file.py), then each round sends five incremental `didChange`s, each timed from
writing it to reading the `publishDiagnostics` for that version:

- `type`: rewrite a number on a line inside a kernel body (no line moves);
- `new_line`: a new line in that body (every line below moves down);
- `delete_line`: that line deleted again (lines move back up);
- `helper_bad` / `helper_good`: a helper in its own statement returns an SMEM array type instead of
  a semaphore type, and back: the kernel of another statement that calls it gains, then loses, a
  PAL001 finding on its `get_global` and a PAL005 on its signal and on its wait (JAX checks a signal's
  semaphore shape while tracing); its diagnostics count is checked.

After the rounds, `--broken` times, that many times each, keystrokes that break the syntax and
the ones that repair them (reported apart, by kind): `(` typed before the number (`break` /
`repair`), `[` typed there (an unclosed bracket to the end of the module: `bracket_open` /
`bracket_close`, the latter typing the `]` after the number) and three double quotes typed there
(`quote_open` / `quote_close`: they pair every later docstring's quotes the other way round, and
Python blames the last docstring of the module). Between rounds the bench process times
`ast.parse` of the module's text (the same interpreter as the server): the baseline of the target
"p95 no more than one ast.parse of the module".

    .venvs/dev/bin/python bench/edit_latency_big_file.py [--rounds 20] [--lines 20000] [--broken 1] [--json OUT]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_big_file  # noqa: E402
from lsp_client import JAX_PYTHON, LspClient, emit, machine, summary  # noqa: E402

KINDS = ("type", "new_line", "delete_line", "helper_bad", "helper_good")
BROKEN_KINDS = ("break", "repair", "bracket_open", "bracket_close", "bracket_gone", "quote_open", "quote_close",
                "quote_gone")
GOOD_TYPE, BAD_TYPE = "plgpu.SemaphoreType.REGULAR", "plgpu.SMEM((8,), jnp.float32)"


def parse_seconds(text: str) -> float:
    started = time.perf_counter()
    ast.parse(text)
    return time.perf_counter() - started


def middle_lines(lines: list[str]) -> tuple[int, str, int]:
    """(line of the middle kernel-body `get_global`, its indentation, line of the `return` of the
    semaphore helper nearest below it)."""
    uses = [i for i, line in enumerate(lines) if line.startswith("    sem = pl.get_global(_semaphore_type_")]
    use = uses[len(uses) // 2]
    name = lines[use].split("pl.get_global(", 1)[1].split("(", 1)[0]
    helper = lines.index(f"def {name}():")
    returns = next(i for i in range(helper, helper + 4) if lines[i].strip() == f"return {GOOD_TYPE}")
    return use, "    ", returns


def measure(path: Path, rounds: int, broken: int, python: str, source: str | None) -> dict:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    use, indent, helper_return = middle_lines(lines)
    samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
    counts: dict[str, set] = {kind: set() for kind in KINDS}
    parses = [parse_seconds(text)]
    syntax_errors: dict[str, set] = {kind: set() for kind in BROKEN_KINDS}
    with LspClient(source=source) as client:
        client.initialize(str(path.parent), python=python, debounce_ms=0)
        uri, sent = client.open(path, text)
        arrived, diagnostics = client.wait_published(uri, 1)
        first, base_count = arrived - sent, len(diagnostics)
        version = 2
        prefix = indent + "_bench_edit = "
        client.change(uri, version, use, 0, 0, prefix + "0\n")  # the line rewritten by `type`
        client.wait_published(uri, version)
        edit_line, helper_line = use, helper_return + (helper_return >= use)
        value = "0"
        column = len(lines[helper_return]) - len(GOOD_TYPE)

        def timed(kind: str, *change) -> None:
            nonlocal version
            version += 1
            sent = client.change(uri, version, *change)
            arrived, diagnostics = client.wait_published(uri, version)
            if kind in samples:
                samples[kind].append(arrived - sent)
                counts[kind].add(len(diagnostics))

        for step in range(rounds):
            new = str(step + 1)
            timed("type", edit_line, len(prefix), len(prefix) + len(value), new)
            value = new
            timed("new_line", edit_line + 1, 0, 0, f"{indent}_bench_line = {step}\n")
            timed("delete_line", edit_line + 1, 0, 0, "", edit_line + 2)
            timed("helper_bad", helper_line, column, column + len(GOOD_TYPE), BAD_TYPE)
            timed("helper_good", helper_line, column, column + len(BAD_TYPE), GOOD_TYPE)
            parses.append(parse_seconds(text))
        broken_samples = []
        after = len(prefix) + len(value)
        for _ in range(broken):
            for kind, change in (("break", (edit_line, len(prefix), len(prefix), "(")),
                                 ("repair", (edit_line, len(prefix), len(prefix) + 1, "")),
                                 ("bracket_open", (edit_line, len(prefix), len(prefix), "[")),
                                 ("bracket_close", (edit_line, after + 1, after + 1, "]")),
                                 ("bracket_gone", (edit_line, len(prefix), after + 2, value)),
                                 ("quote_open", (edit_line, len(prefix), len(prefix), '"""')),
                                 ("quote_close", (edit_line, after + 3, after + 3, '"""')),
                                 ("quote_gone", (edit_line, len(prefix), after + 6, value))):
                version += 1
                sent = client.change(uri, version, *change)
                arrived, diagnostics = client.wait_published(uri, version)
                broken_samples.append((kind, (arrived - sent) * 1000))
                syntax_errors[kind].add(sum(d.get("code") == "PAL000" for d in diagnostics))
    parse_ms = statistics.median(parses) * 1000
    everything = [s for kind in KINDS for s in samples[kind]]
    overall = summary(everything)
    return {
        "file": str(path), "lines": len(lines), "first_analysis_ms": first * 1000,
        "diagnostics_at_open": base_count,
        "diagnostics_by_kind": {kind: sorted(c) for kind, c in counts.items()},
        "edit_ms_by_kind": {kind: summary(samples[kind]) for kind in KINDS},
        "edit_ms": overall,
        "ast_parse_ms": {"median": parse_ms, "n": len(parses), "min": min(parses) * 1000, "max": max(parses) * 1000},
        "p95_over_ast_parse": overall["p95"] / parse_ms,
        "median_over_ast_parse": overall["median"] / parse_ms,
        "target_met": overall["p95"] <= parse_ms,
        "syntax_error_ms": broken_samples,
        "syntax_error_ms_by_kind": {kind: summary([ms / 1000 for k, ms in broken_samples if k == kind])
                                    for kind in BROKEN_KINDS if broken},
        "syntax_error_over_ast_parse": ({"p95": summary([ms / 1000 for _, ms in broken_samples])["p95"] / parse_ms,
                                         "max": max(ms for _, ms in broken_samples) / parse_ms} if broken else None),
        "pal000_by_kind": {kind: sorted(c) for kind, c in syntax_errors.items() if broken},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="rounds of the five edits")
    parser.add_argument("--lines", type=int, default=20000, help="size of the generated module")
    parser.add_argument("--file", help="edit this file instead (it must have the generated module's shapes)")
    parser.add_argument("--broken", type=int, default=1, help="syntax-breaking keystrokes (and repairs) timed after")
    parser.add_argument("--python", default=JAX_PYTHON, help="the analysed project's interpreter")
    parser.add_argument("--source", help="run the server from another checkout (its server/ folder)")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    if args.file:
        path = Path(args.file).resolve()
    else:
        out = make_big_file.DEFAULT_OUT if args.lines == 20000 else make_big_file.DEFAULT_OUT.with_name(
            f"big_kernels_{args.lines}.py")
        path, _ = make_big_file.write(out, args.lines)
    result = measure(path, args.rounds, args.broken, args.python, args.source)
    emit({"benchmark": "edit_latency_big_file", "machine": machine(), **result}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
