"""Where "Keep NAME as a value" (a Triton kernel's parked intermediate) and the `*refs` split of the scratch fix
cannot keep the kernel's meaning, they are not offered (their golden cases: value_in_place_of_triton_global_buffer,
scratch_semaphore_split_off_vararg_of_comprehension_buffers)."""

from __future__ import annotations

import pytest

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton
from jax.experimental.pallas import tpu as pltpu
"""

TRITON_LAUNCH = """
def run(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          compiler_params=pltriton.CompilerParams(num_warps=4))(x)
"""

NO_VALUE = {
    # The buffer's zeros (JAX zero-initialises a global buffer) are read before any write.
    "read before it is written": """
def body(x_ref, o_ref):
    tmp = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = tmp[...]
    tmp[...] = x_ref[...]
""" + TRITON_LAUNCH,
    # Handed to a helper, which may write part of it: no value stands for that.
    "handed on as a ref": """
def fill(ref, x):
    ref[0:64] = x[0:64]

def body(x_ref, o_ref):
    tmp = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    tmp[...] = x_ref[...]
    fill(tmp, x_ref[...] * 2.0)
    o_ref[...] = tmp[...]
""" + TRITON_LAUNCH,
    # Written in a branch: after it, the buffer holds one of two things.
    "written under pl.when": """
def body(x_ref, o_ref):
    tmp = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    tmp[...] = x_ref[...]

    @pl.when(pl.program_id(0) == 0)
    def _():
        tmp[...] = x_ref[...] * 2.0

    o_ref[...] = tmp[...]
""" + TRITON_LAUNCH,
    # Mosaic GPU takes scratch, which keeps the buffer's dtype and shape: that is its fix.
    "a Mosaic GPU kernel": """
def body(x_ref, o_ref):
    tmp = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tmp[...] = x_ref[...]
    o_ref[...] = tmp[...]

def run(x):
    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
""",
}


@pytest.mark.parametrize("name", NO_VALUE)
def test_no_value_fix(ws, name):
    findings = ws.findings("kernel.py", HEADER + NO_VALUE[name])
    assert findings, "the case must have a finding"
    titles = [fix.title for finding in findings for fix in ws.fixes(finding)]
    assert not [t for t in titles if "as a value in the body" in t], titles


def test_a_vararg_read_before_the_get_global_is_not_split_there(ws):
    """`*bufs` read above the get_global: `*bufs, sem = scratch` in its place would come too late; read from the
    front only (`bufs[0]`), the new last scratch ref is `bufs[-1]` where the get_global was."""
    source = HEADER + """
def body(x_hbm, o_ref, *bufs):
    first = bufs[0]
    sem = pl.get_global(pltpu.SemaphoreType.DMA)
    pltpu.make_async_copy(x_hbm, first, sem).start()
    pltpu.make_async_copy(x_hbm, first, sem).wait()
    o_ref[...] = first[...]

def run(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32) for _ in range(2)])(x)
"""
    findings = [f for f in ws.findings("kernel.py", source) if f.code == "PAL003"]
    assert findings
    fixes = ws.fixes(findings[0])
    assert [fix.title for fix in fixes] == ["pallas-lsp (PAL003): Allocate sem as scratch (scratch_shapes)",
                                            "pallas-lsp (PAL003): Disable PAL003 for this line"]
    from pallas_lsp.fixes.edits import apply_edits

    fixed = apply_edits(source, fixes[0].edits)
    assert "    first = bufs[0]\n    sem = bufs[-1]\n" in fixed and "*bufs, sem" not in fixed
    assert "for _ in range(2)] + [pltpu.SemaphoreType.DMA]" in fixed


def test_a_tpu_type_in_a_gpu_modules_pallas_call_is_kept_as_a_value_not_made_scratch(ws):
    """A pallas_call of a module that imports Mosaic GPU is taken for Triton: no VMEM scratch (the module's
    platform is not known), but a buffer written whole and read back whole is a value on any backend."""
    source = HEADER + """
def body(x_ref, o_ref):
    stage = pl.get_global(pltpu.VMEM((128,), jnp.float32))
    stage[...] = x_ref[...]
    o_ref[...] = stage[...]

fn = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((128,), jnp.float32))
"""
    [finding] = ws.findings("kernel.py", source)
    titles = [fix.title for fix in ws.fixes(finding)]
    assert [t.split(" (unsafe")[0] for t in titles] == [
        "pallas-lsp (PAL001): Keep stage as a value in the body (Triton has no get_global and no scratch)",
        "pallas-lsp (PAL001): Disable PAL001 for this line"], titles
