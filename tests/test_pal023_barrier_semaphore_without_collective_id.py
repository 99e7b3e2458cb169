"""PAL023: pltpu.get_barrier_semaphore() in a TPU kernel whose compiler parameters give no collective_id; its fix
adds one where the parameters are made, and is refused where that call makes another launch's parameters too."""

import pytest

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)

def body(x_ref, o_ref):
    barrier = pltpu.get_barrier_semaphore({tag})
    pl.semaphore_signal(barrier)
    pl.semaphore_wait(barrier)
    o_ref[...] = x_ref[...]

def plain(x_ref, o_ref):
    o_ref[...] = x_ref[...]
"""


def source(launch: str, tag: str = "", extra: str = "") -> str:
    return HEADER.format(tag=tag) + extra + f"\ndef run(x):\n    return {launch}(x)\n"


HELPER = "\ndef params():\n    return pltpu.CompilerParams(vmem_limit_bytes=1 << 24)\n"
STATIC = "\nclass Settings:\n    @staticmethod\n    def params():\n        return pltpu.CompilerParams()\n"
LOCAL = "pl.pallas_call(body, out_shape=X, compiler_params=PARAMS)"


@pytest.mark.parametrize("text", [
    source("pl.pallas_call(body, out_shape=X)"),  # no compiler_params at all
    source("pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams())"),
    source("pl.pallas_call(body, out_shape=X, compiler_params=params())", extra=HELPER),
    source("pl.pallas_call(body, out_shape=X, compiler_params=Settings.params())", extra=STATIC),
    source(LOCAL, extra="\nPARAMS = pltpu.CompilerParams(dimension_semantics=())\n"),  # a module constant
    source("pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams(), "
           "interpret=pltpu.InterpretParams())"),
    source("pl.pallas_call(body, out_shape=X, interpret=pltpu.InterpretParams())", tag='"ring"'),  # interpreter: tag or not
])
def test_reported(ws, text):
    assert [code for code, _, _ in ws.check(source=text)] == ["PAL023"]


@pytest.mark.parametrize("text", [
    source("pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams(collective_id=0))"),
    source("pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams(collective_id=CID))",
           extra="\nCID = 3\n"),
    source("pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams(**OPTS))",
           extra="\nOPTS = {}\n"),  # what **OPTS holds is not followed
    source("pl.pallas_call(body, out_shape=X, compiler_params=make())",
           extra="\ndef make():\n    if X.shape[0] > 4:\n        return pltpu.CompilerParams()\n"
                 "    return pltpu.CompilerParams(collective_id=1)\n"),  # two returns: not followed
    source("pl.pallas_call(body, out_shape=X)", tag='"ring"'),  # compiled: JAX gives the tag an id
    source("pl.pallas_call(body, out_shape=X)",
           extra='\njax.config.update("jax_pallas_auto_assign_collective_ids", "yes")\n'),
    source("pl.pallas_call(plain, out_shape=X)"),  # no barrier semaphore
    source("pl.pallas_call(body, out_shape=X, interpret=True)"),  # no TPU: another error (PAL002's family)
])
def test_not_reported(ws, text):
    assert [code for code, _, _ in ws.check(source=text)] == []


def _fix_titles(ws, text):
    (finding,) = [f for f in ws.findings(source=text) if f.code == "PAL023"]
    return [fix.title for fix in ws.fixes(finding) if fix.kind == "rewrite"]


def test_fix_is_refused_where_the_helper_makes_a_kernel_without_barrier_its_parameters_too(ws):
    shared = source("pl.pallas_call(body, out_shape=X, compiler_params=params())", extra=HELPER) + \
        "\ndef copy(x):\n    return pl.pallas_call(plain, out_shape=X, compiler_params=params())(x)\n"
    assert _fix_titles(ws, shared) == []
    alone = source("pl.pallas_call(body, out_shape=X, compiler_params=params())", extra=HELPER)
    assert _fix_titles(ws, alone) == ["pallas-lsp (PAL023): Give the kernel collective_id=0 for its barrier semaphore"]


def test_fix_is_refused_for_a_module_constant_read_by_two_launches(ws):
    text = source(LOCAL, extra="\nPARAMS = pltpu.CompilerParams()\n") + \
        "\ndef copy(x):\n    return pl.pallas_call(plain, out_shape=X, compiler_params=PARAMS)(x)\n"
    assert _fix_titles(ws, text) == []
