"""Notebooks that Python's `json` reads but no notebook tool writes, or that cost far more than their
size: each is a PAL000 finding or a skipped file, said plainly, and the other files are checked.
Before: NaN, a 5,000-digit integer or 600-deep metadata made `check` exit 2 with an internal error
and check nothing; 300,000 empty cells took minutes; a 10 MB list of `{}` took 5 s and 288 MB (a
95 MB one 93 s and 2.4 GB)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap

import pytest

KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
""")
SAFETY_NET = 300


def notebook(metadata: str = "{}", cells: str | None = None, outputs: str = "[]") -> str:
    """nbformat 4 text with a code cell holding KERNEL, `metadata` and the cell's `outputs` written as given."""
    cell = json.dumps({"cell_type": "code", "execution_count": None, "metadata": {}, "source": KERNEL})
    cell = cell[:-1] + f', "outputs": {outputs}}}'
    return f'{{"cells": {cells or f"[{cell}]"}, "metadata": {metadata}, "nbformat": 4, "nbformat_minor": 5}}'


def check(folder, *args):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *(args or ("check", "--no-jedi", "--format", "json",
                                                                            "."))],
                          capture_output=True, text=True, cwd=folder, timeout=SAFETY_NET)


def test_notebooks_python_reads_oddly_are_findings_or_skipped_and_the_rest_is_checked(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL)
    texts = {
        "nan.ipynb": notebook('{"x": NaN}'),
        "infinity.ipynb": notebook('{"x": -Infinity}'),
        "digits.ipynb": notebook('{"x": ' + "7" * 5000 + "}"),
        "deep.ipynb": notebook('{"x": ' + "[" * 600 + "]" * 600 + "}"),  # valid, and read as any notebook
        "deeper.ipynb": notebook('{"x": ' + "[" * 5000 + "]" * 5000 + "}"),  # past Python's recursion limit
        "cells.ipynb": notebook(cells="[" + ", ".join(['{"cell_type": "raw", "source": ""}'] * 20_001) + "]"),
        "good.ipynb": notebook('{"x": "NaN -Infinity [[[[[[ ' + "7" * 5000 + '"}'),  # the same, in a string
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    run = check(tmp_path)
    assert "Traceback" not in run.stderr
    column = texts["nan.ipynb"].index("NaN") + 1
    found = [(f["path"], f["code"], f.get("line"), f.get("column"), f["message"]) for f in json.loads(run.stdout)]
    assert found == [
        ("deep.ipynb", "PAL001", 7, 11, found[0][4]),
        ("deeper.ipynb", "PAL000", 1, 1, "Not a valid Jupyter notebook: not valid JSON: nested too deeply"),
        ("digits.ipynb", "PAL000", 1, column, "Not a valid Jupyter notebook: not valid JSON for Python: an integer "
                                              "of 5,000 digits (Python reads at most 4,300)"),
        ("good.ipynb", "PAL001", 7, 11, found[3][4]),
        ("infinity.ipynb", "PAL000", 1, column, "Not a valid Jupyter notebook: not valid JSON: -Infinity is not a "
                                                "JSON number"),
        ("kernel.py", "PAL001", 7, 11, found[5][4]),
        ("nan.ipynb", "PAL000", 1, column, "Not a valid Jupyter notebook: not valid JSON: NaN is not a JSON number"),
    ]
    assert run.stderr == ("pallas-lsp: warning: cells.ipynb: skipped: a notebook of 20,001 cells, over the 20,000 "
                          "limit for analysed notebooks\n")
    assert run.returncode == 1
    trace = check(tmp_path, "trace", "nan.ipynb::body")
    assert (trace.returncode, trace.stderr) == (2, "pallas-lsp: error: nan.ipynb: not a valid Jupyter notebook: not "
                                                   "valid JSON: NaN is not a JSON number\n")


def peak_memory_kb(folder) -> tuple[subprocess.CompletedProcess, int]:
    """`check` run from a fresh Python that reports its children's peak RSS (this test process's own
    RUSAGE_CHILDREN keeps the largest of every child it ever had)."""
    measure = ("import resource, subprocess, sys; "
               "run = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "sys.stderr.write(run.stderr); sys.stdout.write(run.stdout); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "pallas_lsp", "check", "--no-jedi",
                          "--format", "json", "."], capture_output=True, text=True, cwd=folder, timeout=SAFETY_NET)
    *stderr, peak = run.stderr.splitlines()
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout, "\n".join(stderr)), int(peak)


@pytest.mark.parametrize("value", ["{}", '"ab"'], ids=["objects", "strings"])
def test_a_notebook_of_millions_of_tiny_values_costs_no_more_than_its_size(tmp_path, value):
    """10 MB of `{},` (or `"ab", `): each 3 bytes became a 64-byte dict (peak 288 MB, 5 s before; the
    strings 145 MB); now counted before parsing and skipped (peak 47 MB). A check's own is 30 MB."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    item = value + ("," if value == "{}" else ", ")
    (tmp_path / "big.ipynb").write_text(notebook('{"x": [' + item * (10_000_000 // len(item)) + value + "]}"))
    run, peak = peak_memory_kb(tmp_path)
    assert peak < 110_000, f"peak RSS {peak:,} kB"
    assert run.stderr == ("pallas-lsp: warning: big.ipynb: skipped: a notebook of over 1,000,000 JSON values, the "
                          "limit for analysed notebooks")
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("kernel.py", "PAL001")]


def test_big_realistic_notebooks_are_still_analysed(tmp_path):
    """What the limits must leave alone: 10 MB of image output, a plotly figure of 200,000 points."""
    image = json.dumps({"output_type": "display_data", "metadata": {},
                        "data": {"image/png": base64.b64encode(os.urandom(7_500_000)).decode()}})
    (tmp_path / "image.ipynb").write_text(notebook(outputs=f"[{image}]"))
    points = [round(i * 0.001, 3) for i in range(200_000)]
    figure = json.dumps({"output_type": "display_data", "metadata": {}, "data": {
        "application/vnd.plotly.v1+json": {"data": [{"type": "scatter", "x": points, "y": points[::-1]}]}}})
    (tmp_path / "plot.ipynb").write_text(notebook(outputs=f"[{figure}]"))
    run = check(tmp_path)
    assert run.stderr == ""
    assert [(f["path"], f["cell"], f["code"]) for f in json.loads(run.stdout)] == [
        ("image.ipynb", 1, "PAL001"), ("plot.ipynb", 1, "PAL001")]
