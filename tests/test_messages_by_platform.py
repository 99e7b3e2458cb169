"""PAL001 and PAL003 quote the error of the platform the kernel runs on, and each quote is checked against the
error real JAX raises for the same file (`tests/fixes/jax_lower.py`, marked `jax`)."""

import json
import subprocess
from pathlib import Path

import pytest

LOWER = Path(__file__).resolve().parent / "fixes" / "jax_lower.py"
HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton
from jax.experimental.pallas import tpu as pltpu
"""

# Triton params looked up in a table by a block size the caller picks: the launch is a Triton one.
TRITON_TABLE = HEADER + """
TUNED = {32: pltriton.CompilerParams(num_warps=1), 64: pltriton.CompilerParams(num_warps=2)}


def body(x_ref, o_ref):
    tmp = pl.get_global(plgpu.GMEM((32, 128), jnp.float32))
    tmp[...] = x_ref[...] * 2.0
    o_ref[...] = tmp[...]


def double(x, rows):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // rows,),
                          in_specs=[pl.BlockSpec((rows, 128), lambda i: (i, 0))],
                          out_specs=pl.BlockSpec((rows, 128), lambda i: (i, 0)),
                          compiler_params=TUNED[rows])(x)


def target():
    return (lambda x: double(x, 32)), (jax.ShapeDtypeStruct((64, 128), jnp.float32),), "triton"
"""

# A TPU pallas_call the TPU interpreter runs: every interpreter fails before any type check (PAL002).
TPU_INTERPRETED = HEADER + """
def body(x_ref, o_ref):
    acc = pl.get_global(pltpu.VMEM((8, 128), jnp.float32))
    acc[...] = x_ref[...]
    o_ref[...] = acc[...]


def copy(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          interpret=pltpu.InterpretParams())(x)


def target():
    return copy, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "interpret"
"""

# `interpret=` a parameter of the launcher: a harness decides (`jax.default_backend() != "tpu"`). (A DMA semaphore
# whose copy is started in straight-line code fails otherwise under interpret=True: "ValueError: dtype=dma_sem is
# not a valid dtype for JAX type promotion", jax 0.12; PAL002 quotes the same words as here.)
TPU_INTERPRET_PARAMETER = HEADER + """
def body(x_ref, o_ref):
    sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...]


def fetch(x, interpret=False):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          compiler_params=pltpu.CompilerParams(), interpret=interpret)(x)


def target():
    return (lambda x: fetch(x, interpret={interpret})), (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "{mode}"
"""

# A DMA semaphore a copy starts, under interpret=True: the HLO interpreter fails adding to it (jax 0.12).
DMA_INTERPRET_TRUE = HEADER + """
def body(x_ref, o_ref):
    sem = pl.get_global(pltpu.SemaphoreType.DMA)
    copy = pltpu.make_async_copy(x_ref, o_ref, sem)
    copy.start()
    copy.wait()


def run(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x)


def target():
    return run, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "interpret"
"""

# A TPU body launched through a registry the analysis does not follow: no launch is known, but a DMA semaphore and
# a VMEM buffer are TPU types, and a TPU has no get_global lowering at all (not Mosaic GPU's type check).
TPU_REGISTERED = HEADER.replace("from jax.experimental.pallas import mosaic_gpu as plgpu\n", "").replace(
    "from jax.experimental.pallas import triton as pltriton\n", "") + """
import functools

REGISTRY = {}


def register(name):
    def wrap(fn):
        REGISTRY[name] = fn
        return fn
    return wrap


@register("copy")
def copy_body(x_hbm, o_ref):
    sem = pl.get_global(pltpu.SemaphoreType.DMA)
    buf = pl.get_global(pltpu.VMEM((8, 128), jnp.float32))
    pltpu.async_copy(x_hbm, buf, sem).wait()
    o_ref[...] = buf[...]


def launch(name, x):
    return pl.pallas_call(REGISTRY[name], out_shape=x, in_specs=[pl.BlockSpec(memory_space=pl.ANY)])(x)


def target():
    return functools.partial(launch, "copy"), (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
"""

TRITON_WORDS = "Unimplemented primitive in Pallas Triton lowering: get_global"
TPU_WORDS = "Unimplemented primitive in Pallas TPU lowering for tc: get_global"
INTERPRETED_WORDS = "TypeError: No ir_type_handler for aval type: <class '...AbstractRef'>"
DMA_WORDS = "ValueError: dtype=dma_sem is not a valid dtype for JAX type promotion."


def _jax_error(jax_env, path: Path) -> str:
    run = subprocess.run([jax_env, str(LOWER), str(path)], capture_output=True, text=True, timeout=600)
    return json.loads(run.stdout)[str(path)]["error"] or ""


def test_triton_params_from_a_table_quote_the_triton_lowering(ws):
    [(code, _, message)] = ws.check(source=TRITON_TABLE)
    assert code == "PAL001" and message.startswith(f'JAX: "{TRITON_WORDS}"; pass the array as a kernel input')


def test_an_interpreted_tpu_kernel_quotes_the_interpreter_in_pal002_and_the_tpu_in_pal001(ws):
    """PAL002 says what the interpreter says; PAL001 what the TPU says of the type, the same once the kernel
    runs compiled (a message that changed with "Run the kernel compiled" would make that fix look like it adds
    a finding)."""
    found = {code: message for code, _, message in ws.check(source=TPU_INTERPRETED)}
    assert found["PAL002"].startswith(f'JAX: "{INTERPRETED_WORDS}"; allocate it as scratch'), found
    # Interpreted, JAX says PAL002's words: PAL001 says it quotes the platform the kernel compiles for.
    assert found["PAL001"].startswith(f'JAX, compiled: "{TPU_WORDS}"; allocate it as scratch'), found


def test_tpu_types_of_a_body_launched_out_of_sight_quote_the_tpu_and_advise_scratch(ws):
    found = ws.check(source=TPU_REGISTERED)
    assert [code for code, _, _ in found] == ["PAL001", "PAL001"], found
    for _, _, message in found:
        assert message.startswith(f'JAX, on a TPU: "{TPU_WORDS}"; allocate it as scratch.'), message
        assert "plgpu.SemaphoreType.REGULAR" not in message and "scratch_shapes" in message, message


def test_pal001_reworded_for_its_platform_is_the_same_finding_to_fix_verification():
    """Run compiled, PAL001 says `JAX: "..."` where interpreted it said `JAX, compiled: "..."`: a fix that makes the
    kernel compiled re-words that finding, it adds none."""
    from pallas_lsp.fixes.verify import _unadvised

    compiled = f'JAX: "{TPU_WORDS}"; allocate it as scratch.'
    assert _unadvised(f'JAX, compiled: "{TPU_WORDS}"; allocate it as scratch.') == _unadvised(compiled)


def test_a_started_dma_semaphore_under_interpret_true_quotes_the_dma_dtype_error(ws):
    [(code, _, message)] = ws.check(source=DMA_INTERPRET_TRUE)
    assert code == "PAL002" and message.startswith(f'JAX: "{DMA_WORDS}"; run it compiled'), message
    [(code, _, message)] = ws.check(source=DMA_INTERPRET_TRUE.replace("interpret=True", "interpret=pltpu.InterpretParams()"))
    assert code == "PAL002" and message.startswith(f'JAX: "{INTERPRETED_WORDS}"'), message


def test_an_interpret_parameter_quotes_both_the_compiled_and_the_interpreted_error(ws):
    source = TPU_INTERPRET_PARAMETER.format(interpret="False", mode="tpu")
    [(code, _, message)] = ws.check(source=source)
    assert code == "PAL003" and message.startswith(
        f'JAX, compiled: "{TPU_WORDS}"; interpreted: "{INTERPRETED_WORDS}"; use a scratch_shapes semaphore'), message


def test_a_launch_that_never_interprets_quotes_the_compiled_error_alone(ws):
    source = TPU_INTERPRET_PARAMETER.replace("interpret=interpret)", "interpret=False)").format(
        interpret="False", mode="tpu")
    [(code, _, message)] = ws.check(source=source)
    assert code == "PAL003" and message.startswith(f'JAX: "{TPU_WORDS}"; use a scratch_shapes semaphore'), message


# `interpret=` decided at run time by a call (`not _on_accelerator()`), a TPU semaphore in a bare pallas_call: interpreted
# on a CPU, where the tests run; the advice is the scratch semaphore interpret mode and a TPU both run.
RUN_TIME_INTERPRET = HEADER.replace("from jax.experimental.pallas import mosaic_gpu as plgpu\n", "").replace(
    "from jax.experimental.pallas import triton as pltriton\n", "") + """
def _on_accelerator():
    return jax.default_backend() in ("tpu", "gpu")


def body(x_ref, o_ref):
    fence = pl.get_global(pltpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(fence, 1)
    pl.semaphore_wait(fence, 1)
    o_ref[...] = x_ref[...]


def copy(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=not _on_accelerator())(x)


def target():
    return copy, (jnp.ones((8, 128), jnp.float32),), "interpret"
"""


def test_an_interpret_decided_at_run_time_quotes_the_interpreter_and_advises_scratch(ws):
    found = {code: message for code, _, message in ws.check(source=RUN_TIME_INTERPRET)}
    assert found["PAL003"].startswith(
        f'JAX, compiled: "{TRITON_WORDS}"; interpreted: "{INTERPRETED_WORDS}"; use a scratch_shapes semaphore '
        "(interpret mode and a TPU run one)"), found


@pytest.mark.jax
def test_jax_raises_what_the_messages_quote(jax_env, tmp_path):
    cases = {
        "triton_table.py": (TRITON_TABLE, TRITON_WORDS),
        "tpu_interpreted.py": (TPU_INTERPRETED, INTERPRETED_WORDS.split("<")[0]),
        "tpu_vmem_compiled.py": (TPU_INTERPRETED.replace("interpret=pltpu.InterpretParams()",
                                                         "compiler_params=pltpu.CompilerParams()").replace(
            '"interpret"', '"tpu"'), TPU_WORDS),
        "tpu_compiled.py": (TPU_INTERPRET_PARAMETER.format(interpret="False", mode="tpu"), TPU_WORDS),
        "tpu_interpret_true.py": (TPU_INTERPRET_PARAMETER.format(interpret="True", mode="interpret"),
                                  INTERPRETED_WORDS.split("<")[0]),
        "dma_interpret_true.py": (DMA_INTERPRET_TRUE, DMA_WORDS),
        "dma_tpu_interpreter.py": (DMA_INTERPRET_TRUE.replace("interpret=True", "interpret=pltpu.InterpretParams()"),
                                   INTERPRETED_WORDS.split("<")[0]),
        "run_time_interpret.py": (RUN_TIME_INTERPRET, INTERPRETED_WORDS.split("<")[0]),
        "tpu_registered.py": (TPU_REGISTERED, TPU_WORDS),
    }
    for name, (source, words) in cases.items():
        path = tmp_path / name
        path.write_text(source)
        assert words in _jax_error(jax_env, path), name
