"""What each kernel body parameter is (role, origin, ref type), as hovers and inlay hints show it."""

import pytest

from pallas_lsp.analysis import Project
from pallas_lsp.analysis.hover import hover_text, inlay_hints

HEADER = """\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""


def hints(ws, source):
    path = ws.write("kernel.py", HEADER + source)
    project = Project(root=str(ws.root), python=ws.python, use_jedi=ws.use_jedi)
    text = path.read_text()
    return {text.splitlines()[line][:column].split("(")[-1].split(",")[-1].strip(): label
            for line, column, label, _ in inlay_hints(project, str(path), text, 0, 10_000)}


def hover_at(ws, source, snippet, offset=0):
    path = ws.write("kernel.py", HEADER + source)
    text = path.read_text()
    index = text.index(snippet) + offset
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    project = Project(root=str(ws.root), python=ws.python, use_jedi=ws.use_jedi)
    return hover_text(project, str(path), text, line, column)


PALLAS_CALL = """
def add_kernel(scale, x_ref, y_ref, o_ref, acc_ref):
    acc_ref[...] = x_ref[...] + y_ref[...]
    o_ref[...] = acc_ref[...] * scale

def run(x, y):
    return pl.pallas_call(
        functools.partial(add_kernel, 2.0),
        out_shape=jax.ShapeDtypeStruct((256, 128), jnp.float32),
        in_specs=[pl.BlockSpec((128, 128), lambda i: (i, 0)),
                  pl.BlockSpec((None, 64), lambda i: (0, 0), memory_space=plgpu.GMEM)],
        out_specs=pl.BlockSpec((128, 128), lambda i: (i, 0)),
        scratch_shapes=[plgpu.SMEM((128, 128), jnp.float32)],
        grid=(2,),
    )(x, y)
"""


@pytest.mark.parametrize("workspace", ["ws", "ws_fallback"])
def test_pallas_call_inputs_outputs_and_scratch_with_partial_bound_argument(workspace, request):
    ws = request.getfixturevalue(workspace)
    assert hints(ws, PALLAS_CALL) == {
        # `scale` is bound by functools.partial: not a ref, no hint.
        # JAX: a block without memory_space is `Ref<default>{...}` (Mosaic GPU too); hints leave default out.
        "x_ref": ": [128,128]",          # block shape from in_specs[0]; dtype unknown (operand x)
        "y_ref": ": [64] gmem",          # None squeezes a dimension; memory_space=plgpu.GMEM
        "o_ref": ": f32[128,128]",       # out_shape dtype, out_specs block
        "acc_ref": ": f32[128,128] smem",
    }


def test_hover_on_a_parameter_and_on_its_use_says_role_and_origin(ws):
    text = hover_at(ws, PALLAS_CALL, "y_ref, o_ref")
    assert text.startswith("```python\ny_ref: Ref<gmem>{?[64]}\n```")
    assert "kernel input from `in_specs[1]` of `pl.pallas_call` (line 12)" in text
    use = hover_at(ws, PALLAS_CALL, "acc_ref[...] * scale")
    assert use.startswith("```python\nacc_ref: Ref<smem>{float32[128,128]}\n```")
    assert "kernel scratch from `scratch_shapes[0]`" in use


def test_plgpu_kernel_decorator_operands_and_dict_scratch(ws):
    source = """
@functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((8,), jnp.int32),
                   scratch_types=dict(sem=plgpu.SemaphoreType.REGULAR))
def count(a_ref, o_ref, sem):
    pass

def go():
    return count(jnp.zeros((8, 4), jnp.bfloat16))
"""
    assert hints(ws, source) == {
        "a_ref": ": bf16[8,4] gmem",  # the operand at the launch
        "o_ref": ": i32[8] gmem",
        "sem": ": semaphore[] gmem",
    }


def test_operand_count_follows_from_outputs_and_scratch_when_not_launched_here(ws):
    source = """
def body(x_ref, w_ref, o_ref, tmp_ref):
    pass

k = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((4, 128), jnp.float32),
                 scratch_types=[plgpu.SMEM((128,), jnp.float32)], grid=(4,), grid_names=("i",))
"""
    assert hints(ws, source) == {
        "x_ref": ": gmem",
        "w_ref": ": gmem",
        "o_ref": ": f32[4,128] gmem",
        "tmp_ref": ": f32[128] smem",
    }


def test_a_body_shared_by_two_launches_with_different_types_shows_both(ws):
    source = """
def body(x_ref, o_ref):
    pass

a = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32))
b = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((16,), jnp.int32))
"""
    assert hints(ws, source)["o_ref"] == ": f32[8] gmem | i32[16] gmem"
    text = hover_at(ws, source, "o_ref")
    assert text.startswith("**o_ref**")
    assert "kernel output from `out_type` of `plgpu.kernel` (line 10): `Ref<gmem>{float32[8]}`" in text
    assert "kernel output from `out_type` of `plgpu.kernel` (line 11): `Ref<gmem>{int32[16]}`" in text


def test_annotated_parameters_get_no_hint_and_unknown_counts_give_none(ws):
    source = """
def body(x_ref: jax.Array, o_ref):
    pass

def unknown(x_ref, o_ref):
    pass

a = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32))
b = pl.pallas_call(unknown, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), scratch_shapes=SCRATCH)
"""
    assert hints(ws, source) == {"o_ref": ": f32[8] gmem"}


def test_grid_spec_with_scalar_prefetch_puts_prefetch_refs_first(ws):
    source = """
from jax.experimental.pallas import tpu as pltpu

def body(idx_ref, x_ref, o_ref, acc_ref):
    pass

def run(idx, x):
    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(8,),
            in_specs=[pl.BlockSpec((1, 128), lambda i, idx: (idx[i], 0))],
            out_specs=pl.BlockSpec((1, 128), lambda i, idx: (i, 0)),
            scratch_shapes=[pltpu.VMEM((1, 128), jnp.float32)],
        ),
        compiler_params=pltpu.CompilerParams(),
    )(idx, x)
"""
    assert hints(ws, source) == {
        "idx_ref": ": smem",
        "x_ref": ": [1,128]",  # a block without memory_space: `default`, left out of the hint
        "o_ref": ": f32[1,128]",
        "acc_ref": ": f32[1,128] vmem",
    }


def test_a_body_launched_from_another_module_gets_its_types_there(ws):
    ws.write("kernels.py", HEADER + """
def body(x_ref, o_ref, tmp_ref):
    pass
""")
    launch = ws.write("launch.py", HEADER + """
from kernels import body

k = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32),
                 scratch_types=[plgpu.SMEM((8,), jnp.int32)])
""")
    path = ws.root / "kernels.py"
    text = path.read_text()
    project = Project(root=str(ws.root), python=ws.python)
    hints = inlay_hints(project, str(path), text, 0, 100)
    assert [label for _, _, label, _ in hints] == [
        ": gmem", ": f32[8] gmem", ": i32[8] smem"]
    assert hints[2][3] == "Ref<smem>{int32[8]}: kernel scratch from `scratch_types[0]` of `plgpu.kernel` (`launch.py` line 9)"
    # Editing the launch (not the body's module) changes what the body's parameters are.
    launch.write_text(launch.read_text().replace("(8,), jnp.float32", "(16,), jnp.bfloat16"))
    hints = inlay_hints(project, str(path), text, 0, 100)
    assert hints[1][2] == ": bf16[16] gmem"


def test_a_call_site_passing_options_by_double_star_leaves_what_they_set_unknown(ws):
    source = """
def body(x_ref, o_ref):
    pass

def run(x, block=128):
    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec((block, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((block, 128), lambda i: (i, 0)),
    )(x)

OPTIONS = {"block": 64}
run(jnp.ones((512, 128)), **OPTIONS)
"""
    # Not the default block of 128: the options may set it (they do). The operand is not known
    # either (only keywords are trusted from such a call); nothing is shown rather than a guess.
    assert hints(ws, source) == {}


def test_call_sites_through_jit_trace_and_eval_shape_each_give_their_types(ws):
    source = """
def body(x_ref, o_ref):
    pass

def run(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32))(x)

jax.jit(run)(jnp.zeros((8, 128), jnp.int8))
jax.jit(run).trace(jax.ShapeDtypeStruct((16, 128), jnp.int8))
jax.eval_shape(run, jax.ShapeDtypeStruct((32, 128), jnp.int8))
"""
    assert hints(ws, source) == {"x_ref": ": i8[?,128]", "o_ref": ": f32[?,128]"}
    text = hover_at(ws, source, "x_ref")
    assert text.split("\n\n")[1] == ("seen at the call sites: `Ref<default>{int8[8,128]}` (line 13), "
                                     "`Ref<default>{int8[16,128]}` (line 14), `Ref<default>{int8[32,128]}` (line 15)")
