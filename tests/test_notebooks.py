"""Jupyter notebooks (issue 23): `check` reads `.ipynb` files as ruff does, reports in cells, and
`--fix`/`--diff` rewrite only the cells' sources.

`tests/notebooks/kernel.ipynb` is a notebook as JupyterLab saves it (nbformat's layout: one-space
indent, sorted keys, UTF-8 unescaped), with outputs, ids, tags, line and cell magics, a shell
line, a `%%writefile` cell and markdown. The CLI runs for real, with jedi against `.venvs/jax`, and
real JAX lowers the notebook's code before and after the fix.
"""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, jax_python
from pallas_lsp.analysis.findings import Span, TextEdit
from pallas_lsp.analysis.notebooks import Cell, Notebook, NotebookError
from test_cli import cli  # the notebook's get_global is test_cli's, in a cell, launched by a plgpu.kernel

MESSAGE = ('JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"; allocate it '
           "as scratch. Use scratch_types of plgpu.kernel or pl.run_scoped; get_global only allocates "
           "plgpu.SemaphoreType.REGULAR semaphores")

NOTEBOOK = REPO / "tests" / "notebooks" / "kernel.ipynb"


@pytest.fixture
def folder(tmp_path):
    shutil.copy(NOTEBOOK, tmp_path / "kernel.ipynb")
    return tmp_path


def lowered(tmp_path, notebook_text: str) -> dict:
    """What real JAX says of the module the notebook's code cells make (its `target()` lowered for CUDA)."""
    module = tmp_path / "notebook_module.py"
    module.write_text(Notebook.from_json(notebook_text).module)
    run = subprocess.run([jax_python(), str(REPO / "tests" / "fixes" / "jax_lower.py"), str(module)],
                         capture_output=True, text=True, timeout=300)
    return json.loads(run.stdout)[str(module)]


# ---- reading cells as one module ---------------------------------------------------------------------

def test_cells_make_one_module_with_magics_blanked_as_ruff_does():
    notebook = Notebook.from_cells([
        Cell("markdown", "# Title"),
        Cell("code", "%matplotlib inline\nimport jax\nx = !ls\n"),
        Cell("code", "for i in range(2):\n    %time f(i)\ny = (1\n  % 2)\ns = '''\n%not a magic\n'''"),
        Cell("code", "%%bash\necho hi"),  # runs bash: left out
        Cell("code", "pip install jax"),  # automagic: left out
        Cell("code", "%%time\nz = 1\njax?"),  # Python under a timing magic: kept
        Cell("code", "print(1)", language="r"),  # another language (VS Code's languageId): left out
    ])
    assert notebook.module == ("pass\nimport jax\nx = ...\n"
                               "for i in range(2):\n    pass\ny = (1\n  % 2)\ns = '''\n%not a magic\n'''\n"
                               "pass\nz = 1\npass\n")
    assert notebook.module_cells() == [1, 2, 5]
    assert notebook.to_cell(4, 4) == (2, 1, 4)  # module line 5 is the second line of the third cell
    assert notebook.to_module(5, 1, 0) == (11, 0)
    assert notebook.to_module(3, 0, 0) is None  # a cell left out has no place in the module


def test_an_edit_reaching_across_cells_or_into_a_magic_is_not_made():
    notebook = Notebook.from_cells([Cell("code", "%load_ext foo\nimport jax"), Cell("code", "x = 1")])
    assert notebook.edited([TextEdit("nb.ipynb", Span(1, 7, 2, 1), "")]) is None  # across the boundary
    assert notebook.edited([TextEdit("nb.ipynb", Span(0, 1, 0, 5), "")]) is None  # inside `%load_ext foo`
    edited = notebook.edited([TextEdit("nb.ipynb", Span(2, 0, 2, 1), "y"), TextEdit("nb.ipynb", Span(1, 10, 1, 10), " as j")])
    assert [cell.source for cell in edited.cells] == ["%load_ext foo\nimport jax as j", "y = 1"]
    # Deleting a cell's last line, with the line break the module added after it: the cell still ends
    # without one, as it did.
    deleted = notebook.edited([TextEdit("nb.ipynb", Span(1, 0, 2, 0), "")])
    assert [cell.source for cell in deleted.cells] == ["%load_ext foo", "x = 1"]


def test_a_file_that_is_no_notebook_says_where():
    with pytest.raises(NotebookError) as error:
        Notebook.from_json('{"cells": [\n {"cell_type": "code" "source": []}]}')
    assert (error.value.message, error.value.line, error.value.column) == ("not valid JSON: Expecting ',' delimiter", 1, 22)
    with pytest.raises(NotebookError, match=r"nbformat 3 is not supported \(only nbformat 4\)"):
        Notebook.from_json('{"cells": [], "nbformat": 3}')
    with pytest.raises(NotebookError) as error:
        Notebook.from_json('{"cells": [\n  {"cell_type": "code", "source": 7}], "nbformat": 4}')
    assert (error.value.message, error.value.line, error.value.column) == (
        "cell 1: its source is neither a string nor a list of strings", 1, 2)


def test_unchanged_cells_give_back_the_file_byte_for_byte():
    text = NOTEBOOK.read_text(encoding="utf-8")
    notebook = Notebook.from_json(text)
    assert notebook.json_text() == text
    assert notebook.with_sources({}).json_text() == text


# ---- check ---------------------------------------------------------------------------------------------

def test_text_output_names_the_cell_as_ruff_does(folder, jax_env):
    run = cli("check", "--python", jax_env, "kernel.ipynb", cwd=folder)
    # `pl` and `plgpu` come from the second cell; the `%%writefile` cell's get_global is not Python run here.
    assert (run.returncode, run.stdout) == (1, f"kernel.ipynb:cell 4:5:10: PAL001 {MESSAGE}\nFound 1 error.\n")
    assert lowered(folder, NOTEBOOK.read_text())["error"] == (
        "NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]}")


def test_json_findings_carry_the_cell_and_lines_in_it(folder, jax_env):
    run = cli("check", "--format", "json", "--python", jax_env, "kernel.ipynb", cwd=folder)
    assert json.loads(run.stdout) == [{
        "path": "kernel.ipynb", "cell": 4, "line": 5, "column": 10, "end_line": 5, "end_column": 56,
        "code": "PAL001", "severity": "error", "message": MESSAGE, "source": "pallas-lsp"}]


def test_sarif_points_where_the_code_is_written_in_the_notebook(folder, jax_env):
    run = cli("check", "--format", "sarif", "--python", jax_env, "kernel.ipynb", cwd=folder)
    (result,) = json.loads(run.stdout)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "kernel.ipynb", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 60, "startColumn": 15, "endLine": 60, "endColumn": 61},
        "properties": {"cell": 4, "cellRegion": {"startLine": 5, "startColumn": 10, "endLine": 5, "endColumn": 56}}}
    line = NOTEBOOK.read_text().splitlines()[59]
    assert line[14:60] == "pl.get_global(plgpu.SMEM((128,), jnp.float32))"


def test_folders_include_notebooks(folder, jax_env):
    (folder / "pkg").mkdir()
    shutil.move(folder / "kernel.ipynb", folder / "pkg" / "kernel.ipynb")
    (folder / "pkg" / "clean.py").write_text("x = 1\n")
    run = cli("check", "--python", jax_env, "pkg", cwd=folder)
    assert (run.returncode, run.stdout) == (1, f"pkg/kernel.ipynb:cell 4:5:10: PAL001 {MESSAGE}\nFound 1 error.\n")


@pytest.mark.parametrize("text, message, where", [
    ('{"cells": [\n  {"cell_type": "code" "source": []}]}\n', "not valid JSON: Expecting ',' delimiter", "2:24"),
    ('{"cells": [], "nbformat": 3, "nbformat_minor": 0}\n', "nbformat 3 is not supported (only nbformat 4)", "1:1"),
    ("import jax\n", "not valid JSON: Expecting value", "1:1"),  # a Python file saved as .ipynb
])
def test_an_invalid_notebook_is_a_pal000_finding_never_a_pass(folder, jax_env, text, message, where):
    (folder / "broken.ipynb").write_text(text)
    run = cli("check", "--python", jax_env, "broken.ipynb", cwd=folder)
    assert (run.returncode, run.stdout) == (
        1, f"broken.ipynb:{where}: PAL000 Not a valid Jupyter notebook: {message}\nFound 1 error.\n")


# ---- fixes ---------------------------------------------------------------------------------------------

FIXED_CELLS = {
    # The `pl` import went with the last get_global (as ruff's F401 would ask), in the cell that had it.
    1: ["%matplotlib inline\n", "import jax\n", "import jax.numpy as jnp\n",
        "from jax.experimental.pallas import mosaic_gpu as plgpu"],
    3: ["X = jax.ShapeDtypeStruct((128,), jnp.float32)\n", "\n", "\n", "def body(x_ref, o_ref, stage, tile):\n",
        "  stage[...] = x_ref[...]\n", "  tile[...] = stage[...] * 2.0\n", "  o_ref[...] = tile[...]"],
    4: ["kernel = plgpu.kernel(\n", "    body,\n", "    out_type=X,\n", "    scratch_types=[\n",
        "        plgpu.SMEM((128,), jnp.float32),  # staging buffer\n", "        plgpu.SMEM((128,), jnp.float32),\n",
        "    ],\n", ")\n", "kernel"],
}


def expected_fixed(text: str, **dumps) -> str:
    """The notebook with the fixed cells' sources and nothing else changed, laid out as `dumps` says."""
    notebook = json.loads(text)
    for index, source in FIXED_CELLS.items():
        notebook["cells"][index]["source"] = source
    return json.dumps(notebook, **dumps)


def test_fix_rewrites_the_cells_and_nothing_else(folder, jax_env):
    run = cli("check", "--fix", "--python", jax_env, "kernel.ipynb", cwd=folder)
    assert (run.returncode, run.stdout) == (0, "All checks passed! (1 file checked)\n"), run.stderr
    assert run.stderr == "pallas-lsp: applied 1 fix in 1 file\n"
    fixed = (folder / "kernel.ipynb").read_text(encoding="utf-8")
    assert fixed == expected_fixed(NOTEBOOK.read_text(), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    assert lowered(folder, fixed) == {"ok": True, "error": None}


def test_fix_keeps_another_layout_key_order_escapes_and_no_final_newline(folder, jax_env):
    """A notebook written by another tool: two-space indent, keys unsorted, non-ASCII escaped, no newline at the end."""
    notebook = json.loads(NOTEBOOK.read_text())
    notebook = {"nbformat": notebook["nbformat"], "nbformat_minor": notebook["nbformat_minor"],
                "metadata": notebook["metadata"], "cells": [dict(reversed(list(c.items()))) for c in notebook["cells"]]}
    layout = {"indent": 2, "ensure_ascii": True}
    (folder / "kernel.ipynb").write_text(json.dumps(notebook, **layout))
    assert "\\u00b5s" in (folder / "kernel.ipynb").read_text()
    run = cli("check", "--fix", "--python", jax_env, "kernel.ipynb", cwd=folder)
    assert run.returncode == 0, run.stderr
    assert (folder / "kernel.ipynb").read_text() == expected_fixed(json.dumps(notebook), **layout)


def test_diff_is_a_patch_of_the_notebook_that_git_applies(folder, jax_env):
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--diff", "--python", jax_env, "kernel.ipynb"],
                         capture_output=True, cwd=folder, timeout=300)
    assert run.returncode == 1, run.stderr
    assert (folder / "kernel.ipynb").read_bytes() == NOTEBOOK.read_bytes()  # --diff writes nothing
    assert b'-    "  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))\\n",\n' in run.stdout
    subprocess.run(["git", "apply", "-"], input=run.stdout, cwd=folder, check=True, timeout=60)
    assert (folder / "kernel.ipynb").read_text() == expected_fixed(
        NOTEBOOK.read_text(), sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def test_fix_of_a_clean_notebook_leaves_the_file_alone(folder, jax_env):
    cli("check", "--fix", "--python", jax_env, "kernel.ipynb", cwd=folder)
    before = (folder / "kernel.ipynb").stat()
    run = cli("check", "--fix", "--python", jax_env, "kernel.ipynb", cwd=folder)
    assert (run.returncode, run.stdout) == (0, "All checks passed! (1 file checked)\n")
    assert (folder / "kernel.ipynb").stat().st_mtime_ns == before.st_mtime_ns


def test_an_edited_cell_is_re_analysed_incrementally_with_a_whole_analysis_s_findings(folder):
    """The server re-checks a notebook through the incremental path at any size (an edit re-analyses
    what its cell's statements reach): after each edit its findings are those of a whole analysis of
    the notebook in a fresh project, and most edits take that path."""
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze, analyze_incremental

    path = str(folder / "kernel.ipynb")
    original = Notebook.from_json(NOTEBOOK.read_text()).cells
    smem = "pl.get_global(plgpu.SMEM((128,), jnp.float32))"
    edits = [  # (cell, its new source as a function of the old), as a user types them
        (3, lambda s: s.replace(smem, "pl.get_global(plgpu.SemaphoreType.REGULAR)")),
        (3, lambda s: s.replace("pl.get_global(plgpu.SemaphoreType.REGULAR)", smem)),
        (3, lambda s: s.replace("stage[...] * 2.0", "stage[...] * 3.0")),
        (4, lambda s: s.replace("body,", "other_body,")),  # the launch runs another body: none found
        (4, lambda s: s.replace("other_body,", "body,")),
        (3, lambda s: s.replace("def body(x_ref, o_ref, stage):", "def body(x_ref, o_ref, stage)")),  # broken
        (3, lambda s: s.replace("def body(x_ref, o_ref, stage)", "def body(x_ref, o_ref, stage):")),
        (1, lambda s: s.replace("import jax.numpy as jnp\n", "")),  # an import: the whole path
        (1, lambda s: s.replace("import jax\n", "import jax\nimport jax.numpy as jnp\n")),
        (2, lambda s: s + "\n%time x = 1"),
    ]
    editing = Project(root=str(folder), python=jax_python())
    cells = list(original)
    notebook = Notebook.from_cells(cells)
    editing.set_notebook(path, notebook)
    first = analyze_incremental(editing, path, notebook.module, min_lines=0)
    assert [f.code for f in first] == ["PAL001"]
    incremental = []
    for step, (cell, edit) in enumerate(edits):
        cells[cell] = Cell(cells[cell].kind, edit(cells[cell].source), cells[cell].language)
        notebook = Notebook.from_cells(cells)
        state = editing.incremental.get(path)
        updates = state.updates if state is not None else None
        editing.set_notebook(path, notebook)
        got = analyze_incremental(editing, path, notebook.module, min_lines=0)
        reference = Project(root=str(folder), python=jax_python())
        reference.set_notebook(path, notebook)
        assert got == analyze(reference, path, notebook.module), f"edit {step}"
        state = editing.incremental.get(path)
        if state is not None and updates is not None and state.updates == updates + 1:
            incremental.append(step)
    assert incremental == [0, 1, 2, 3, 4, 5, 6, 9]  # the import edits (7, 8) took the whole path
