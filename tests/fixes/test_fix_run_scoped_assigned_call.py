"""`x = stage(pl.get_global(T))` becomes `x = pl.run_scoped(stage, T)` (golden cases
run_scoped_accumulator_assigned_from_its_stage, run_scoped_tile_sum_assigned_in_pl_kernel) only where what `stage`
returns cannot be the buffer: run_scoped's value outlives its scope, and a ref must not."""

from __future__ import annotations

_RETURNS_ITS_BUFFER = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256, 128), jnp.float32)


def body(x_gmem, o_gmem):
    rows = pl.ds(jax.lax.axis_index("blocks") * 128, 128)

    def stage(tile_ref):
        tile_ref[...] = x_gmem[rows] * 0.5
        return tile_ref

    tile = stage(pl.get_global(plgpu.SMEM((128, 128), jnp.float32)))
    o_gmem[rows] = tile[...]


def launch(x):
    return pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("blocks",)))(x)
'''


def test_a_stage_returning_its_buffer_is_not_made_run_scoped_body(ws):
    """`stage` hands the tile back and the body reads it after the call: run_scoped around the call alone would
    return a ref out of its scope, so the buffer is scoped over the rest of the body instead."""
    [finding] = ws.findings("kernel.py", _RETURNS_ITS_BUFFER)
    titles = [fix.title for fix in ws.fixes(finding)]
    assert not any("the buffer stage takes" in title for title in titles)
    assert any("run_scoped for the rest of body" in title for title in titles)


def test_the_assigned_call_of_a_stage_returning_a_value_is_run_scoped(ws):
    """The same kernel with `return tile_ref[...]`: the call alone is scoped, its value kept by the body."""
    source = _RETURNS_ITS_BUFFER.replace("        return tile_ref\n", "        return tile_ref[...]\n").replace(
        "    o_gmem[rows] = tile[...]\n", "    o_gmem[rows] = tile\n")
    [finding] = ws.findings("kernel.py", source)
    assert any("the buffer stage takes with pl.run_scoped for its call in body" in fix.title
               for fix in ws.fixes(finding))
