"""PAL018 (the other backend's memory space) and PAL019 (global memory as a Mosaic GPU scratch): a scratch or
`pl.run_scoped` buffer of each memory space, in a compiled Mosaic GPU kernel, a compiled TPU kernel and under each
interpreter. Every case is also run by real JAX (`test_jax_agrees_with_each_case`): refused where a finding is
reported, accepted where none is."""

import pytest

from conftest import at, jax_truth

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128, 128), jnp.float32)
"""

SCRATCH_BODY = "def body(x_ref, o_ref, t_ref):\n  t_ref[...] = x_ref[...]\n  o_ref[...] = t_ref[...]\n\n"
UNTOUCHED_BODY = "def body(x_ref, o_ref, t_ref):\n  o_ref[...] = x_ref[...]\n\n"  # SMEM, HBM: no vector stores
SCOPED_BODY = ("def body(x_ref, o_ref):\n  def scoped(t_ref):\n    t_ref[...] = x_ref[...]\n    o_ref[...] = t_ref[...]\n"
               "  pl.run_scoped(scoped, {type})\n\n")


def gpu(type_, scoped=False, extra=""):
    body = SCOPED_BODY.format(type=type_) if scoped else SCRATCH_BODY
    scratch = "" if scoped else f", scratch_types=[{type_}]"
    mode = "interpret" if "interpret" in extra else "cuda"
    return (HEADER + "\n" + body + f"k = plgpu.kernel(body, out_type=X{scratch}{extra})\n\n"
            f"def target():\n  x = jnp.ones((128, 128), jnp.float32) if {mode == 'interpret'} else X\n"
            f"  return k, (x,), {mode!r}\n")


def tpu(type_, scoped=False, extra="", touched=True):
    body = SCOPED_BODY.format(type=type_) if scoped else SCRATCH_BODY if touched else UNTOUCHED_BODY
    scratch = "" if scoped else f", scratch_shapes=[{type_}]"
    mode = "interpret" if "interpret" in extra else "tpu"
    params = "" if "interpret" in extra else ", compiler_params=pltpu.CompilerParams()"
    return (HEADER + "\n" + body + f"k = pl.pallas_call(body, out_shape=X{scratch}{params}{extra})\n\n"
            f"def target():\n  x = jnp.ones((128, 128), jnp.float32) if {mode == 'interpret'} else X\n"
            f"  return k, (x,), {mode!r}\n")


def spelled(kind: str) -> str:
    return f"{kind}((128, 128), jnp.float32)"


# name -> (source, the code reported, where, JAX's words the message quotes)
REPORTED = {
    "pltpu.VMEM scratch, Mosaic GPU": (gpu(spelled("pltpu.VMEM")), "PAL018", "pltpu.VMEM((128, 128), jnp.float32)",
                                       "Unsupported memory space: vmem"),
    "pltpu.SMEM from run_scoped, Mosaic GPU": (gpu(spelled("pltpu.SMEM"), scoped=True), "PAL018",
                                               "pltpu.SMEM((128, 128), jnp.float32)", "Unsupported memory space: smem"),
    "pltpu.VMEM_SHARED scratch, Mosaic GPU": (gpu(spelled("pltpu.VMEM_SHARED")), "PAL018",
                                              "pltpu.VMEM_SHARED((128, 128), jnp.float32)",
                                              "Unsupported memory space: vmem_shared"),
    "plgpu.SMEM scratch, TPU": (tpu(spelled("plgpu.SMEM")), "PAL018", "plgpu.SMEM((128, 128), jnp.float32)",
                                "Invalid memory space: <MemorySpace.SMEM: 'smem'>"),
    "plgpu.SMEM from run_scoped, TPU": (tpu(spelled("plgpu.SMEM"), scoped=True), "PAL018",
                                        "plgpu.SMEM((128, 128), jnp.float32)",
                                        "Invalid memory space: <MemorySpace.SMEM: 'smem'>"),
    "plgpu.TMEM scratch, TPU": (tpu(spelled("plgpu.TMEM")), "PAL018", "plgpu.TMEM((128, 128), jnp.float32)",
                                "Invalid memory space: <MemorySpace.TMEM: 'tmem'>"),
    "plgpu.SMEM scratch, TPU interpreter": (tpu(spelled("plgpu.SMEM"), extra=", interpret=pltpu.InterpretParams()"),
                                            "PAL018", "plgpu.SMEM((128, 128), jnp.float32)",
                                            "<MemorySpace.SMEM: 'smem'>"),
    "plgpu.GMEM scratch, Mosaic GPU": (gpu(spelled("plgpu.GMEM")), "PAL019", "plgpu.GMEM((128, 128), jnp.float32)",
                                       "Unsupported memory space: gmem"),
    "plgpu.GMEM from run_scoped, Mosaic GPU": (gpu(spelled("plgpu.GMEM"), scoped=True), "PAL019",
                                               "plgpu.GMEM((128, 128), jnp.float32)", "Unsupported memory space: gmem"),
    "pl.ANY scratch, Mosaic GPU": (gpu(spelled("pl.ANY")), "PAL019", "pl.ANY((128, 128), jnp.float32)",
                                   "Unsupported memory space: any"),
}

# Accepted by JAX: each backend's own types, and every type under interpret=True and the GPU interpreter.
QUIET = {
    "plgpu.SMEM scratch, Mosaic GPU": gpu(spelled("plgpu.SMEM")),
    "plgpu.SMEM from run_scoped, Mosaic GPU": gpu(spelled("plgpu.SMEM"), scoped=True),
    "pltpu.VMEM scratch, TPU": tpu(spelled("pltpu.VMEM")),
    "pltpu.SMEM scratch, TPU": tpu(spelled("pltpu.SMEM"), touched=False),
    "pltpu.HBM scratch, TPU": tpu(spelled("pltpu.HBM"), touched=False),
    "pl.ANY scratch, TPU": tpu(spelled("pl.ANY"), touched=False),
    "pltpu.VMEM from run_scoped, TPU": tpu(spelled("pltpu.VMEM"), scoped=True),
    "pltpu.VMEM scratch, GPU interpreter": gpu(spelled("pltpu.VMEM"), extra=", interpret=True"),
    "plgpu.GMEM scratch, GPU interpreter": gpu(spelled("plgpu.GMEM"), extra=", interpret=True"),
    "plgpu.SMEM scratch, TPU interpret=True": tpu(spelled("plgpu.SMEM"), extra=", interpret=True"),
    "pltpu.VMEM scratch, TPU interpreter": tpu(spelled("pltpu.VMEM"), extra=", interpret=pltpu.InterpretParams()"),
    "a GMEM semaphore from run_scoped, Mosaic GPU": (HEADER + "\ndef body(x_ref, o_ref):\n"
                                                     "  def scoped(sem):\n    o_ref[...] = x_ref[...]\n"
                                                     "  pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR)\n\n"
                                                     "k = plgpu.kernel(body, out_type=X)\n\n"
                                                     "def target():\n  return k, (X,), 'cuda'\n"),
}


@pytest.mark.parametrize("name", list(REPORTED))
def test_a_buffer_the_lowering_refuses(ws, name):
    source, code, where, quote = REPORTED[name]
    [(found, span, message)] = ws.check(source=source)
    assert (found, span) == (code, at(source, where)) and quote in message


@pytest.mark.parametrize("name", list(QUIET))
def test_no_finding_where_jax_places_it(ws, name):
    assert ws.check(source=QUIET[name]) == []


def test_jax_agrees_with_each_case(tmp_path):
    cases = {f"bad_{i}.py": (source, quote) for i, (source, _, _, quote) in enumerate(REPORTED.values())}
    cases.update({f"good_{i}.py": (source, None) for i, source in enumerate(QUIET.values())})
    for file, (source, _) in cases.items():
        (tmp_path / file).write_text(source)
    truths = jax_truth([tmp_path / file for file in cases])
    for file, (_, quote) in cases.items():
        truth = truths[file]
        if quote is None:
            assert truth["ok"], (file, truth)
        else:
            assert not truth["ok"] and quote in f'{truth["exc_type"]}: {truth["message"]}', (file, truth)


def test_nothing_where_a_test_module_runs_the_kernel_under_the_gpu_interpreter(ws):
    """A test module's `with plgpu.force_gpu_interpret_mode():` around the launcher: the GPU interpreter places a
    `pltpu.VMEM` scratch (jax 0.12), so that launch is not reported; one the switch does not reach is."""
    kernels = HEADER + "\n" + SCRATCH_BODY + (
        "def run_tested(x):\n  return plgpu.kernel(body, out_type=X, scratch_types=[pltpu.VMEM((128, 128), jnp.float32)])(x)\n\n"
        "def run_compiled(x):\n  return plgpu.kernel(body, out_type=X, scratch_types=[pltpu.VMEM((128, 128), jnp.float32)])(x)\n")
    ws.write("test_kernels.py", "import jax.numpy as jnp\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
             "import kernels\n\n\ndef test_run_tested():\n  with plgpu.force_gpu_interpret_mode():\n"
             "    out = kernels.run_tested(jnp.ones((128, 128), jnp.float32))\n  assert (out == 1).all()\n")
    found = ws.check("kernels.py", kernels)
    assert [(code, where) for code, where, _ in found] == [
        ("PAL018", at(kernels, "pltpu.VMEM((128, 128), jnp.float32)", 2))]


def test_the_fix_edits_the_use_where_the_other_backends_kernel_shares_the_type(ws):
    """A helper building `pltpu.VMEM` for a TPU kernel and a Mosaic GPU one: the TPU kernel keeps it, so the GPU
    launch's use is rewritten (a name: `plgpu.SMEM(TILE.shape, TILE.dtype)`); a call to the helper, no name, gets
    no fix."""
    from pallas_lsp.fixes import fixes_and_reason

    shared = HEADER + "\nTILE = pltpu.VMEM((128, 128), jnp.float32)\n\n" + SCRATCH_BODY + (
        "tpu_k = pl.pallas_call(body, out_shape=X, scratch_shapes=[TILE], compiler_params=pltpu.CompilerParams())\n"
        "gpu_k = plgpu.kernel(body, out_type=X, scratch_types=[TILE])\n")
    [finding] = ws.findings(source=shared)
    fixes, _ = fixes_and_reason(ws.project, finding)
    assert fixes[0].title.endswith("Use plgpu.SMEM in place of pltpu.VMEM, here (the other backend's kernels use it too)")
    helper = shared.replace("TILE = pltpu", "def tile():\n  return pltpu").replace("[TILE]", "[tile()]")
    [finding] = ws.findings(source=helper)
    fixes, reason = fixes_and_reason(ws.project, finding)
    assert all(f.kind != "rewrite" for f in fixes)
    assert reason == "the type is shared with the other backend's kernels, and the use is no name to rewrite"
