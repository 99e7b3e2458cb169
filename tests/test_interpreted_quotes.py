"""PAL002 and PAL003 quote what JAX says when an interpreter meets a get_global semaphore, which depends on
the interpreter and the semaphore (analysis/interpret_errors.py; each quote checked with jax 0.12 by
tests/fixes/golden/scratch_tpu_core_mesh_semaphore_array_interpreted_by_helper and the cases below)."""

import pytest

HEADER = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def pick():
    return pltpu.InterpretParams() if jax.default_backend() != "tpu" else False


def body(x_hbm, o_hbm, buf):
    sems = pl.get_global({kind})
    copy = pltpu.make_async_copy(x_hbm, buf, {ref})
    copy.start()
    copy.wait()


def run(x):
    return pl.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                     mesh=pltpu.create_tensorcore_mesh("core", num_cores=1),
                     scratch_types=[pltpu.VMEM(x.shape, x.dtype)], interpret={interpret})(x)
"""

SLICED = "ValueError: Attempting to pass a Ref Ref<semaphore_mem>{dma_sem[2]} to a primitive: dynamic_slice"
PROMOTED = "ValueError: dtype=dma_sem is not a valid dtype for JAX type promotion."
NO_IR_TYPE = "TypeError: No ir_type_handler for aval type: <class '...AbstractRef'>"


@pytest.mark.parametrize("kind, ref, interpret, quote", [
    ("pltpu.SemaphoreType.DMA((2,))", "sems.at[0]", "pick()", SLICED),
    ("pltpu.SemaphoreType.DMA((2,))", "sems.at[0]", "pltpu.InterpretParams()", SLICED),
    ("pltpu.SemaphoreType.DMA", "sems", "True", PROMOTED),
    ("pltpu.SemaphoreType.DMA", "sems", "pltpu.InterpretParams()", NO_IR_TYPE),
], ids=["array, interpreter picked by a helper", "array, TPU interpreter", "interpret=True", "scalar, TPU interpreter"])
def test_the_interpreted_quote_is_what_jax_says_there(ws, kind, ref, interpret, quote):
    findings = ws.check(source=HEADER.format(kind=kind, ref=ref, interpret=interpret))
    quoted = [message for code, _, message in findings if code in ("PAL002", "PAL003")]
    assert quoted and all(f'"{quote}"' in message for message in quoted), quoted
