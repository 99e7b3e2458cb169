"""`pallas-lsp trace` of a kernel defined in a notebook (issue 23), against real JAX 0.12 on the CPU:
the code cells through the kernel's are written to a module and traced; locations come back as
cell-relative ones, as `check` gives them."""

import asyncio
import json
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import REPO, jax_python, publish_for

pytestmark = pytest.mark.jax

NOTEBOOK = "tests/notebooks/kernel.ipynb"  # cell 4: `tile = pl.get_global(plgpu.SMEM(...))`; cell 5: `kernel = plgpu.kernel(body, ...)`


def cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", *args, "--python", jax_python()],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def write_notebook(path, cells):
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": kind, "metadata": {}, "source": source, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
        for kind, source in cells]}, indent=1))


def test_cli_text_names_the_cell_and_its_line_jax_blamed():
    run = cli(f"{NOTEBOOK}::kernel", "--args", "f32[128]")
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"trace {NOTEBOOK}::kernel(f32[128])  [arguments from --args]"
    assert lines[-2:] == [
        "FAILED (lower): NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]}",
        f"  {NOTEBOOK}:cell 4:5  get_global(Ref<smem>{{float32[128]}})"]


def test_cli_json_locations_are_those_check_reports_in_the_cell():
    traced = json.loads(cli(f"{NOTEBOOK}::kernel", "--args", "f32[128]", "--format", "json").stdout)
    assert traced["path"] == str(REPO / NOTEBOOK)
    assert traced["notebook"] == {"cells": [2, 3, 4, 5], "cell": 5}  # cell 3 `!nvidia-smi -L` blanked, as check reads it
    (location,) = traced["error"]["locations"]
    checked = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python", jax_python(),
                              NOTEBOOK], capture_output=True, text=True, cwd=REPO, timeout=300)
    (finding,) = json.loads(checked.stdout)
    assert (location["path"], location["cell"], location["line"], location["column"], location["end_line"],
            location["end_column"]) == (str(REPO / finding["path"]), finding["cell"], finding["line"], finding["column"],
                                        finding["end_line"], finding["end_column"]) == (str(REPO / NOTEBOOK), 4, 5, 10, 5, 56)
    assert [(ref["cell"], ref["line"], ref["name"], ref["aval"]) for ref in traced["kernel_refs"]] == [
        (4, 4, "x_ref", "Ref<gmem>{float32[128]}"), (4, 4, "o_ref", "Ref<gmem>{float32[128]}"),
        (4, 4, "stage", "Ref<smem>{float32[128]}")]  # the body's `def`, on the cell's fourth line


def test_only_the_cells_through_the_kernels_run_with_the_notebooks_folder_importable(tmp_path):
    (tmp_path / "sizes.py").write_text("SIZE = 128\n")
    write_notebook(tmp_path / "nb.ipynb", [
        ("markdown", "# Kernels"),
        ("code", "%load_ext autoreload\nimport jax\nimport jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
                 "from jax.experimental.pallas import mosaic_gpu as plgpu\nfrom sizes import SIZE"),
        ("code", "X = jax.ShapeDtypeStruct((SIZE,), jnp.float32)"),
        ("code", "# pallas-lsp: trace(f32[128])\n@functools.partial(plgpu.kernel, out_type=X,\n"
                 "                   scratch_types=[plgpu.SMEM((SIZE, SIZE), jnp.float32)])\n"
                 "def add_one(x_ref, o_ref, tile):\n    o_ref[...] = x_ref[...] + 1.0"),
        ("code", 'raise RuntimeError("a cell after the kernel\'s ran")'),
    ])
    broken = json.loads(cli("nb.ipynb::add_one", "--format", "json", cwd=tmp_path).stdout)
    # `functools` is imported in no cell: JAX never ran, the cell's line is named.
    assert (broken["stage"], broken["error"]["type"], broken["error"]["message"]) == (
        "import", "NameError", "name 'functools' is not defined")
    assert [(loc["cell"], loc["line"]) for loc in broken["error"]["locations"]] == [(4, 2)]
    text = (tmp_path / "nb.ipynb").read_text().replace('"%load_ext autoreload\\n', '"%load_ext autoreload\\nimport functools\\n')
    (tmp_path / "nb.ipynb").write_text(text)
    run = cli("nb.ipynb::add_one", cwd=tmp_path)  # the last cell would raise on import
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-2:] == [  # the body's first line
        "kernel add_one (nb.ipynb:cell 4:5): shared memory 65,536 bytes, 0 barriers, 0 TMEM columns, 0 global semaphores",
        "OK"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb", "sizes.py"]  # nothing written beside it


def test_a_body_run_by_two_launches_names_them_at_their_cells(tmp_path):
    write_notebook(tmp_path / "nb.ipynb", [
        ("code", "import jax\nimport jax.numpy as jnp\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n"
                 "X = jax.ShapeDtypeStruct((128,), jnp.float32)"),
        ("markdown", "One body, two launches"),
        ("code", "def body(x_ref, o_ref):\n    o_ref[...] = x_ref[...]"),
        ("code", "small = plgpu.kernel(body, out_type=X)\nbig = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=('x',))"),
    ])
    run = cli("nb.ipynb::body", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == ("pallas-lsp: error: body (cell 3, line 1) is a kernel body, run by 2 launches: small (cell 4, "
                          "line 1), big (cell 4, line 2). Trace one of them by name: nb.ipynb::small, nb.ipynb::big\n")


def test_a_notebook_kernel_is_traced_by_name():
    run = cli(f"{NOTEBOOK}:12")
    assert run.returncode == 2
    assert run.stderr == (f"pallas-lsp: error: a notebook's kernel is traced by name ({NOTEBOOK}::NAME), "
                          "not by a line of its JSON\n")


# ---- the language server: `pallas.trace` in a notebook's cells, over stdio -------------------------

NOTEBOOK_URI = (REPO / NOTEBOOK).as_uri()
NOTEBOOK_CELLS = [(cell["cell_type"], "".join(cell["source"])) for cell in json.loads((REPO / NOTEBOOK).read_text())["cells"]]
CELL_URIS = [f"vscode-notebook-cell:{REPO / NOTEBOOK}#W{i}sZmlsZQ%3D%3D" for i in range(len(NOTEBOOK_CELLS))]
GET_GLOBAL = (4, 9, 4, 55)  # cell 4's `pl.get_global(plgpu.SMEM((128,), jnp.float32))`, 0-based


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities())),
        root_uri=(REPO / "tests" / "notebooks").as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


def open_notebook(client: LanguageClient) -> None:
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=NOTEBOOK_URI, notebook_type="jupyter-notebook", version=1, cells=[
            types.NotebookCell(kind=types.NotebookCellKind.Code if kind == "code" else types.NotebookCellKind.Markup,
                               document=uri) for (kind, _), uri in zip(NOTEBOOK_CELLS, CELL_URIS)]),
        cell_text_documents=[types.TextDocumentItem(uri=uri, language_id="python" if kind == "code" else "markdown",
                                                    version=1, text=text)
                             for (kind, text), uri in zip(NOTEBOOK_CELLS, CELL_URIS)]))


def trace(client: LanguageClient, *arguments):
    return asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="pallas.trace", arguments=list(arguments))), 300)


def seen(diagnostics) -> list:
    return sorted((d.source, d.code, (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character))
                  for d in diagnostics)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_kernel_traced_from_its_cell_is_blamed_in_the_body_s_cell(client: LanguageClient):
    open_notebook(client)
    static = await publish_for(client, CELL_URIS[3], timeout=60)
    assert seen(static.diagnostics) == [("pallas-lsp", "PAL001", GET_GLOBAL)]
    lenses = await asyncio.wait_for(client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=CELL_URIS[4]))), 60)
    assert [(lens.range.start.line, lens.command.title, list(lens.command.arguments or [])) for lens in lenses] == [
        (0, "Trace kernel (arguments?)", [CELL_URIS[4], "kernel"]),  # on the launch's cell, at its line there
        (0, "SMEM 1,024 / 232,448 B", [])]  # the staging buffer's 512 bytes, rounded up as Mosaic GPU allocates

    result = await trace(client, CELL_URIS[4], "kernel", {"args": "f32[128]"})
    assert (result["ok"], result["error"]["type"], result["error"]["message"]) == (
        False, "NotImplementedError", "get_global only supports semaphores, got Ref<smem>{float32[128]}")
    assert [(loc["path"], loc["cell"], loc["line"], loc["cell_uri"]) for loc in result["error"]["locations"]] == [
        (str(REPO / NOTEBOOK), 4, 5, CELL_URIS[3])]  # the cell's document too: a client may number cells otherwise
    assert (result["notebook"], result["definition_cell"], result["definition_line"]) == (
        {"cells": [2, 3, 4, 5], "cell": 5}, 5, 0)
    merged = await publish_for(client, CELL_URIS[3], timeout=60)
    assert seen(merged.diagnostics) == [("pallas-lsp", "PAL001", GET_GLOBAL),
                                        ("pallas-trace", "NotImplementedError", GET_GLOBAL)]

    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=CELL_URIS[3]), position=types.Position(line=3, character=24))), 60)
    assert hover.contents.value == (  # JAX's type of the body's scratch parameter, from this trace
        "```python\nstage: Ref<smem>{float32[128]}\n```\n\ntraced by JAX (until the file changes)\n\n"
        "- kernel scratch from `scratch_types[0]` of `plgpu.kernel` (cell 5, line 1)")

    # From a line of the body's cell: the launch that runs the body is traced.
    by_line = await trace(client, CELL_URIS[3], {"line": 5, "character": 2}, {"args": "f32[128]"})
    assert (by_line["function"], by_line["traced_because"], by_line["error"]["locations"][0]["cell"]) == (
        "kernel", "body (cell 4, line 4) is a kernel body: traced through kernel (cell 5, line 1), which is the kernel "
                  "that runs it", 4)

    closed = await trace(client, (REPO / "tests" / "notebooks" / "other.ipynb").as_uri(), "kernel")
    assert (closed["error"]["type"], closed["error"]["message"]) == (
        "UsageError", "open the notebook to trace its kernels here (or run pallas-lsp trace NOTEBOOK.ipynb::NAME)")

    # An edit of the notebook makes the trace stale: its diagnostic goes, the static one stays.
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK_URI, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=CELL_URIS[4], version=2),
                changes=[types.TextDocumentContentChangeWholeDocument(text=NOTEBOOK_CELLS[4][1] + "\n")])]))))

    async def until_static_only():
        while True:
            params = await publish_for(client, CELL_URIS[3], timeout=60)
            if all(d.source == "pallas-lsp" for d in params.diagnostics):
                return params
    assert seen((await asyncio.wait_for(until_static_only(), 60)).diagnostics) == [("pallas-lsp", "PAL001", GET_GLOBAL)]
