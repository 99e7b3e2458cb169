"""The comment lines right above a get_global statement the fix removes go with it where a blank line (or the
block's end) follows the statement: they spoke of it alone. Above a statement the next line follows directly,
they may speak of the group, and stay."""

from __future__ import annotations

from conftest import jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_and_reason
from pallas_lsp.fixes.edits import apply_edits

KERNEL = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  i = jax.lax.axis_index("b")
  # One staging tile per block, reused by both steps.
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
{after}  tile[...] = x_ref[...] * 2.0
  o_ref[...] = tile[...] + i


def target():
  return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("b",)), (X,), "cuda"
'''


def _fixed(tmp_path, after: str) -> str:
    path = tmp_path / "k.py"
    text = KERNEL.format(after=after)
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = [f for f in analyze(project, str(path)) if f.code == "PAL001"]
    fixes, _ = fixes_and_reason(project, finding)
    fix = next(f for f in fixes if f.title == "pallas-lsp (PAL001): Allocate tile as scratch (scratch_types)")
    return apply_edits(text, [e for e in fix.edits if e.path == str(path)])


def test_a_comment_on_the_removed_line_alone_goes_with_it(tmp_path):
    text = _fixed(tmp_path, "\n")
    assert "One staging tile" not in text
    assert '  i = jax.lax.axis_index("b")\n\n  tile_ref[...] = x_ref[...] * 2.0\n' in text


def test_a_comment_over_a_group_of_lines_stays(tmp_path):
    text = _fixed(tmp_path, "")
    assert '  # One staging tile per block, reused by both steps.\n  tile_ref[...] = x_ref[...] * 2.0\n' in text
