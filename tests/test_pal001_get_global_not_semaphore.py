"""PAL001: exact diagnostics for every way a non-semaphore reaches `pl.get_global`."""

import pytest

from conftest import at

HEADER = """\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
"""

AS_INPUT = ("pass the array as a kernel input. Use a BlockSpec in in_specs for pallas_call, "
            "an operand for plgpu.kernel; get_global only allocates plgpu.SemaphoreType.REGULAR semaphores")
AS_SCRATCH = ("allocate it as scratch. Use scratch_shapes for pallas_call, scratch_types for plgpu.kernel and "
              "pl.kernel, or pl.run_scoped; get_global only allocates plgpu.SemaphoreType.REGULAR semaphores")
USE_REGULAR = "use plgpu.SemaphoreType.REGULAR. That is the one type get_global allocates: a global semaphore"


def got(what: str, advice: str) -> str:
    """JAX's words (NotImplementedError from the Mosaic GPU lowering) quoted once, then what to do."""
    return f'JAX: "get_global only supports semaphores, got {what}"; {advice}'


def body(expr: str) -> str:
    return HEADER + f"\n\ndef body(o_ref):\n    x = pl.get_global({expr})\n    o_ref[...] = x[...]\n"


CASES = [
    ("plgpu.GMEM((128,), jnp.float32)", got("Ref<gmem>{float32[128]}", AS_INPUT)),
    ("plgpu.SMEM((128,), jnp.float32)", got("Ref<smem>{float32[128]}", AS_SCRATCH)),
    ("plgpu.SMEM((8, 128), jnp.bfloat16)", got("Ref<smem>{bfloat16[8,128]}", AS_SCRATCH)),
    ("plgpu.TMEM((128, 128), jnp.float32)", got("Ref<tmem>{float32[128,128]}", AS_SCRATCH)),
    ("plgpu.Barrier(num_arrivals=1)", got("Ref<smem>{barrier[]}", AS_SCRATCH)),
    ("plgpu.Barrier(num_arrivals=1, num_barriers=3)", got("Ref<smem>{barrier[3]}", AS_SCRATCH)),
    ("plgpu.ClusterBarrier(collective_axes=('x',))", got("Ref<smem>{cluster_barrier[]}", AS_SCRATCH)),
    ("plgpu.WGMMAAccumulatorRef((64, 128), jnp.float32)", got("Ref<regs>{float32[64,128]}", AS_SCRATCH)),
    ("plgpu.RefUnion(plgpu.SMEM((128,), jnp.float32))",
     got("plgpu.RefUnion(plgpu.SMEM((128,), jnp.float32)) (a SMEM buffer)", AS_SCRATCH)),
    ("pl.ANY((16,), jnp.int32)", got("Ref<any>{int32[16]}", AS_INPUT)),
    ("plgpu.SemaphoreType.BARRIER", got("Ref<gmem>{barrier_semaphore[]}", USE_REGULAR)),
    ("plgpu.SemaphoreType.BARRIER((2,))", got("Ref<gmem>{barrier_semaphore[2]}", USE_REGULAR)),
    ("pltpu.SemaphoreType.REGULAR", got("Ref<semaphore_mem>{semaphore[]}", USE_REGULAR)),
    ("pltpu.SemaphoreType.DMA((2,))", got("Ref<semaphore_mem>{dma_sem[2]}", USE_REGULAR)),
    ("pltpu.VMEM((8, 128), jnp.float32)", got("Ref<vmem>{float32[8,128]}", AS_SCRATCH)),
    ("pltpu.HBM((8,), jnp.int32)", got("Ref<hbm>{int32[8]}", AS_INPUT)),
    ("plgpu.SMEM(shape, jnp.float32)", got("plgpu.SMEM(shape, jnp.float32) (a SMEM buffer)", AS_SCRATCH)),
    ("jax.ShapeDtypeStruct((128,), jnp.float32)",
     "JAX: \"AttributeError: 'ShapeDtypeStruct' object has no attribute 'get_ref_aval'\"; pass the array as a "
     "kernel input. get_global needs a memory-space type, not jax.ShapeDtypeStruct((128,), jnp.float32): "
     "use a BlockSpec in in_specs for pallas_call, an operand for plgpu.kernel"),
]


@pytest.mark.parametrize("expr,message", CASES, ids=[c[0] for c in CASES])
def test_every_non_semaphore_type_is_reported_with_jax_picture(ws, expr, message):
    source = body(expr)
    assert ws.check(source=source) == [("PAL001", at(source, f"pl.get_global({expr})"), message)]


@pytest.mark.parametrize("expr", [
    "plgpu.SemaphoreType.REGULAR",
    "plgpu.SemaphoreType.REGULAR((4,))",
    "plgpu.SemaphoreType.REGULAR(shape=(2, 3))",
    "unknown_parameter",
])
def test_regular_semaphores_and_unknown_values_are_not_reported(ws, expr):
    source = HEADER + f"\n\ndef body(o_ref, unknown_parameter):\n    x = pl.get_global({expr})\n"
    assert ws.check(source=source) == []


@pytest.mark.parametrize("alias", ["functools.partial(pl.get_global)",
                                   "functools.partial(pl.get_global, what=plgpu.SemaphoreType.REGULAR)"])
def test_regular_semaphore_through_a_partial_alias_is_not_reported(ws, alias):
    call = "gg()" if "what=" in alias else "gg(plgpu.SemaphoreType.REGULAR)"
    source = HEADER + f"\ngg = {alias}\n\ndef body(o_ref):\n    x = {call}\n"
    assert ws.check(source=source) == []


def test_keyword_argument_what(ws):
    source = HEADER + "\ndef body():\n    pl.get_global(what=plgpu.SMEM((4,), jnp.int8))\n"
    assert ws.check(source=source) == [
        ("PAL001", at(source, "pl.get_global(what=plgpu.SMEM((4,), jnp.int8))"), got("Ref<smem>{int8[4]}", AS_SCRATCH))]


SMEM_128 = got("Ref<smem>{float32[128]}", AS_SCRATCH)
BARRIER_SEM = got("Ref<gmem>{barrier_semaphore[]}", USE_REGULAR)

FLOWS = {
    "module constant": (
        "N = 128\nBUF = plgpu.SMEM((N,), jnp.float32)\n\ndef body():\n    pl.get_global(BUF)\n",
        "pl.get_global(BUF)", SMEM_128),
    "local variable": (
        "def body():\n    shape = (64 * 2,)\n    t = plgpu.SMEM(shape, jnp.float32)\n    pl.get_global(t)\n",
        "pl.get_global(t)", SMEM_128),
    "helper function returning the type": (
        "def sem_type():\n    return plgpu.SemaphoreType.BARRIER\n\ndef body():\n    pl.get_global(sem_type())\n",
        "pl.get_global(sem_type())", BARRIER_SEM),
    "helper function with arguments": (
        "def buf(n, dtype=jnp.float32):\n    return plgpu.SMEM((n,), dtype)\n\ndef body():\n    pl.get_global(buf(128))\n",
        "pl.get_global(buf(128))", SMEM_128),
    "method on self": (
        "class K:\n    def sem(self):\n        return plgpu.SemaphoreType.BARRIER\n\n"
        "    def body(self):\n        pl.get_global(self.sem())\n",
        "pl.get_global(self.sem())", BARRIER_SEM),
    "attribute set in __init__": (
        "class K:\n    def __init__(self):\n        self.t = plgpu.SMEM((128,), jnp.float32)\n\n"
        "    def body(self):\n        pl.get_global(self.t)\n",
        "pl.get_global(self.t)", SMEM_128),
    "functools.partial keyword": (
        "def body(o_ref, *, what):\n    pl.get_global(what)\n\n"
        "k = plgpu.kernel(functools.partial(body, what=plgpu.SMEM((128,), jnp.float32)), out_type=())\n",
        "pl.get_global(what)",  # launched by plgpu.kernel: its own scratch parameter is named
        got("Ref<smem>{float32[128]}", "allocate it as scratch. Use scratch_types of plgpu.kernel or "
            "pl.run_scoped; get_global only allocates plgpu.SemaphoreType.REGULAR semaphores")),
    "parameter passed by a helper call": (
        "def grab(t):\n    return pl.get_global(t)\n\ndef body():\n    grab(plgpu.SemaphoreType.BARRIER)\n",
        "pl.get_global(t)", BARRIER_SEM),
    "tuple unpacking": (
        "A, B = plgpu.SemaphoreType.REGULAR, plgpu.SemaphoreType.BARRIER\n\ndef body():\n    pl.get_global(A)\n    pl.get_global(B)\n",
        "pl.get_global(B)", BARRIER_SEM),
    "aliased get_global": (
        "gg = pl.get_global\n\ndef body():\n    gg(plgpu.SMEM((128,), jnp.float32))\n",
        "gg(plgpu.SMEM((128,), jnp.float32))", SMEM_128),
    "functools.partial alias of get_global": (
        "gg = functools.partial(pl.get_global)\n\ndef body():\n    gg(plgpu.SMEM((128,), jnp.float32))\n",
        "gg(plgpu.SMEM((128,), jnp.float32))", SMEM_128),
    "functools.partial alias binding what=": (
        "gg = functools.partial(pl.get_global, what=plgpu.SemaphoreType.BARRIER)\n\ndef body():\n    gg()\n",
        "gg()", BARRIER_SEM),
    "functools.partial alias binding what positionally": (
        "gg = functools.partial(functools.partial(pl.get_global), plgpu.SemaphoreType.BARRIER)\n\n"
        "def body():\n    gg()\n",
        "gg()", BARRIER_SEM),
    "functools.partial alias, what= overridden by the call": (
        "gg = functools.partial(pl.get_global, what=plgpu.SemaphoreType.REGULAR)\n\n"
        "def body():\n    gg(what=plgpu.SemaphoreType.BARRIER)\n",
        "gg(what=plgpu.SemaphoreType.BARRIER)", BARRIER_SEM),
}


@pytest.mark.parametrize("name", list(FLOWS))
def test_value_reaches_get_global_through(ws, name):
    code, snippet, message = FLOWS[name]
    source = HEADER + code
    assert ws.check(source=source) == [("PAL001", at(source, snippet), message)]


def test_helper_called_with_regular_and_barrier_reports_the_bad_call_site(ws):
    source = HEADER + ("def grab(t):\n    return pl.get_global(t)\n\n"
                       "def body():\n    grab(plgpu.SemaphoreType.REGULAR)\n    grab(plgpu.SemaphoreType.BARRIER)\n")
    assert ws.check(source=source) == [("PAL001", at(source, "pl.get_global(t)"), BARRIER_SEM)]


def test_value_from_another_module_of_the_workspace(ws):
    ws.write("consts.py", "from jax.experimental.pallas import mosaic_gpu as plgpu\nSEM = plgpu.SemaphoreType.BARRIER\n")
    source = HEADER + "from consts import SEM\n\ndef body():\n    pl.get_global(SEM)\n"
    assert ws.check(source=source) == [("PAL001", at(source, "pl.get_global(SEM)"), BARRIER_SEM)]


def test_get_global_in_every_kernel_form_is_checked(ws):
    source = HEADER + """
@plgpu.kernel(out_type=())
def a():
    pl.get_global(plgpu.SemaphoreType.BARRIER)

@functools.partial(plgpu.kernel, out_type=())
def b():
    @pl.when(True)
    def _():
        pl.get_global(plgpu.SemaphoreType.BARRIER)
"""
    assert [c[1] for c in ws.check(source=source)] == [
        at(source, "pl.get_global(plgpu.SemaphoreType.BARRIER)", 1),
        at(source, "pl.get_global(plgpu.SemaphoreType.BARRIER)", 2)]


# Each launch kind's scratch keyword, as JAX takes it (checked below): the message names that one.
SCRATCH_OF_LAUNCH = {
    "k = plgpu.kernel(body, out_type=OUT, grid=(2,), grid_names=('x',))\n":
        "Use scratch_types of plgpu.kernel or pl.run_scoped",
    "k = pl.pallas_call(body, out_shape=OUT, compiler_params=plgpu.CompilerParams())\n":
        "Use scratch_shapes of pl.pallas_call or pl.run_scoped",
    "k = pl.kernel(body, out_type=OUT, mesh=plgpu.Mesh(grid=(2,), grid_names=('x',)))\n":
        "Use pl.run_scoped (pl.kernel on Mosaic GPU lowers no scratch)",
}


@pytest.mark.parametrize("launch", list(SCRATCH_OF_LAUNCH))
def test_the_scratch_parameter_named_is_the_launch_kinds(ws, launch):
    source = (HEADER + "OUT = jax.ShapeDtypeStruct((128,), jnp.float32)\n\n"
              "def body(o_ref):\n    x = pl.get_global(plgpu.SMEM((128,), jnp.float32))\n    o_ref[...] = x[...]\n\n"
              + launch)  # used: a pallas_call drops an unused one
    expected = got("Ref<smem>{float32[128]}", f"allocate it as scratch. {SCRATCH_OF_LAUNCH[launch]}; get_global only "
                   "allocates plgpu.SemaphoreType.REGULAR semaphores")
    assert ws.check(source=source) == [("PAL001", at(source, "pl.get_global(plgpu.SMEM((128,), jnp.float32))"),
                                        expected)]


JAX_SCRATCH_KEYWORDS = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
out = jax.ShapeDtypeStruct((128,), jnp.float32)
mesh = plgpu.Mesh(grid=(2,), grid_names=("x",))
def body(o_ref, s):
    pl.semaphore_signal(s)
    pl.semaphore_wait(s)
def outcome(build):
    try:
        jax.jit(build()).trace().lower(lowering_platforms=("cuda",))
        return "lowered"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
sem = [plgpu.SemaphoreType.REGULAR]
print(outcome(lambda: plgpu.kernel(body, out_type=out, grid=(2,), grid_names=("x",), scratch_types=sem)))
print(outcome(lambda: pl.kernel(body, out_type=out, mesh=mesh, scratch_shapes=sem)))
print(outcome(lambda: pl.kernel(body, out_type=out, mesh=mesh, scratch_types=sem)))
"""


@pytest.mark.jax
def test_jax_takes_scratch_types_for_plgpu_kernel_and_pl_kernel_and_no_scratch_on_a_mosaic_gpu_mesh(jax_env):
    import subprocess

    run = subprocess.run([jax_env, "-c", JAX_SCRATCH_KEYWORDS], capture_output=True, text=True, timeout=300)
    assert run.stdout.splitlines() == [
        "lowered",
        "TypeError: kernel() got an unexpected keyword argument 'scratch_shapes'",
        "NotImplementedError: Scratch operands are not supported by the Mosaic GPU mpmd_map lowering",
    ], run.stderr[-2000:]


def test_in_a_body_chosen_in_a_branch_it_is_inside_the_kernel(ws):
    """The body is one of two functions an if/else picks (`kernel = a` / `kernel = b`, then
    `functools.partial(kernel, ...)`): each is a body of the launch, so a get_global they reach is in a kernel,
    JAX's TPU error (the agreement fixture), not PAL008 ("outside any kernel") as before."""
    from conftest import FIXTURES

    bad = (FIXTURES / "agreement" / "bad_kernel_chosen_in_branch_helper_get_global_vmem.py").read_text()
    found = ws.check("kernels.py", bad)
    assert [(code, where) for code, where, _ in found] == [
        ("PAL001", at(bad, "pl.get_global(pltpu.VMEM((8, 128), jnp.float32))"))]
