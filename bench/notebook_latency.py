"""Warm re-check of an edited notebook cell, through the real server over stdio (issue 23).

A 50-cell kernel notebook (markdown, an imports cell with a line magic, 16 Mosaic GPU kernels: a
body cell and a launch cell each, one body fetching an SMEM tile with `pl.get_global`) is opened as
an LSP 3.17 notebook document (`debounceMs: 0`). Each edit rewrites a number in the middle kernel's
body cell; the time is from writing `notebookDocument/didChange` to reading the last cell's
`publishDiagnostics` of that edit (every cell is published: they are one module). The baseline,
in the same run and the same server: the module the cells make, opened as a Python file and edited
at the same line (`textDocument/didChange` -> its publish). The file lies in a folder of its own,
outside the workspace (so its own project): an edit of another module of a project makes the next
edit of every module in it a whole analysis (what it imports may have changed), which interleaving
the two in one folder would measure instead of a user editing a notebook.

    .venvs/dev/bin/python bench/notebook_latency.py [--edits 100] [--warmup 5] [--source TREE] [--json OUT]

`--source TREE` runs another checkout's server (its `server/`), e.g. a `git archive` of main before a change.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, LspClient, emit, machine, summary  # noqa: E402

TARGET_P95_MS = 50.0
KERNELS = 16
IMPORTS = ("%matplotlib inline\nimport functools\nimport jax\nimport jax.numpy as jnp\n"
           "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu")


def notebook_cells() -> list[tuple[str, str]]:
    """(kind, source) of the 50 cells; the edited kernel body is the middle one's."""
    cells = [("markdown", "# Kernels\n\nSixteen Mosaic GPU kernels, one per pair of cells."), ("code", IMPORTS)]
    for k in range(KERNELS):
        memory = "plgpu.SMEM((128,), jnp.float32)" if k == 3 else "plgpu.SemaphoreType.REGULAR"
        body = (f"def body_{k}(x_ref, o_ref):\n"
                f"  scale = {k}\n"
                f"  sem = pl.get_global({memory})\n"
                f"  o_ref[...] = x_ref[...] * scale\n"
                f"  pl.semaphore_signal(sem, 1)\n"
                f"  pl.semaphore_wait(sem, 1)\n")
        launch = (f"X_{k} = jax.ShapeDtypeStruct((128,), jnp.float32)\n"
                  f"kernel_{k} = plgpu.kernel(\n"
                  f"    body_{k},\n"
                  f"    out_type=X_{k},\n"
                  f"    grid=(2,), grid_names=('x',),\n"
                  f")")
        cells += [("markdown", f"## Kernel {k}"), ("code", body), ("code", launch)]
    assert len(cells) == 50
    return cells


EDITED_CELL = 2 + 3 * (KERNELS // 2) + 1  # the body cell of kernel 8
EDITED_LINE = 1  # `  scale = 8`
PREFIX = "  scale = "


def measure(edits: int, warmup: int, python: str, source: str | None = None) -> dict:
    from pallas_lsp.analysis.notebooks import Cell, Notebook

    cells = notebook_cells()
    folder = Path(tempfile.mkdtemp(prefix="pallas-notebook-bench-"))
    notebook_uri = (folder / "kernels.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{folder}/kernels.ipynb#W{i}sZmlsZQ%3D%3D" for i in range(len(cells))]
    code_cells = [uri for uri, (kind, _) in zip(cell_uris, cells) if kind == "code"]
    module = Notebook.from_cells([Cell(kind, text) for kind, text in cells]).module
    module_path = Path(tempfile.mkdtemp(prefix="pallas-notebook-bench-file-")) / "kernels_module.py"
    module_path.write_text(module)
    module_line = module.splitlines().index(f"{PREFIX}{KERNELS // 2}")
    with LspClient(source) as client:
        client.initialize(str(folder), python=python, debounce_ms=0)
        opened = client.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": notebook_uri, "notebookType": "jupyter-notebook", "version": 1,
                         "cells": [{"kind": 2 if kind == "code" else 1, "document": uri}
                                   for uri, (kind, _) in zip(cell_uris, cells)]},
            "cellTextDocuments": [{"uri": uri, "languageId": "python" if kind == "code" else "markdown",
                                   "version": 1, "text": text} for uri, (kind, text) in zip(cell_uris, cells)]})
        first, _ = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                               and m["params"]["uri"] == code_cells[-1])
        module_uri, _ = client.open(module_path, module)
        client.wait_published(module_uri, 1)
        value = str(KERNELS // 2)
        samples: dict[str, list[float]] = {"notebook": [], "file": []}
        findings = set()  # (findings in the cells, cells published, findings in the file) of each edit
        for step in range(warmup + edits):
            version = step + 2
            new = str(version)
            edit = {"range": {"start": {"line": EDITED_LINE, "character": len(PREFIX)},
                              "end": {"line": EDITED_LINE, "character": len(PREFIX) + len(value)}}, "text": new}
            # Interleaved: the notebook's cell, then the same edit of the module as a file.
            sent = client.notify("notebookDocument/didChange", {
                "notebookDocument": {"uri": notebook_uri, "version": version},
                "change": {"cells": {"textContent": [{"document": {"uri": cell_uris[EDITED_CELL], "version": version},
                                                      "changes": [edit]}]}}})
            # The last code cell's publish ends the notebook's (cells are published in order, after
            # each analysis; the messages are read in order); the findings of all cells are counted.
            published: list[int] = []

            def notebook_done(message: dict) -> bool:
                if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] in code_cells:
                    published.append(len(message["params"]["diagnostics"]))
                    return message["params"]["uri"] == code_cells[-1]
                return False

            arrived, _ = client.wait(notebook_done)
            sent_file = client.change(module_uri, version, module_line, len(PREFIX), len(PREFIX) + len(value), new)
            arrived_file, diagnostics = client.wait_published(module_uri, version)
            value = new
            findings.add((sum(published), len(published), len(diagnostics)))
            if step >= warmup:
                samples["notebook"].append(arrived - sent)
                samples["file"].append(arrived_file - sent_file)
    notebook_ms, file_ms = summary(samples["notebook"]), summary(samples["file"])
    return {"cells": len(cells), "code_cells": len(code_cells), "module_lines": len(module.splitlines()),
            "first_analysis_ms": (first - opened) * 1000,
            "findings_cells_published_file_findings": sorted(findings), "edit_ms": notebook_ms, "same_module_as_file_ms": file_ms,
            "ratio_median": notebook_ms["median"] / file_ms["median"], "target_p95_ms": TARGET_P95_MS,
            "target_met": notebook_ms["p95"] <= TARGET_P95_MS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--python", default=JAX_PYTHON, help="the analysed project's interpreter")
    parser.add_argument("--source", help="run the server of this checkout (its server/ folder)")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    emit({"benchmark": "notebook_latency", "machine": machine(), **measure(args.edits, args.warmup, args.python, args.source)}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
