"""PAL002: `get_global` reachable from a kernel that runs in interpret mode, with related locations."""

import pytest

from conftest import at

HEADER = """\
import functools
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
"""
SEM = "pl.get_global(plgpu.SemaphoreType.REGULAR)"
SHORT = "TypeError: No ir_type_handler for aval type: <class '...AbstractRef'>"
WHY = ("get_global has no interpret-mode implementation (JAX's own message for this, \"get_global discharge is not "
       "supported in interpret mode\", is never reached)")


def message(scratch="in scratch_types or with pl.run_scoped"):
    """The error; `scratch`: where this launch kind allocates scratch (plgpu.kernel's scratch_types by default)."""
    return (f'JAX: "{SHORT}"; run it compiled or use a scratch semaphore. {WHY}; a semaphore only for one block '
            f"can be allocated {scratch} instead")


def maybe(scratch="in scratch_types or with pl.run_scoped"):
    return (f'JAX, if interpreted: "{SHORT}"; run it compiled. Whether it is interpreted is decided at run time '
            f"(see the related location), and {WHY}; a semaphore only for one block can be allocated {scratch} "
            "instead")


MESSAGE = message()
MAYBE = maybe()
SCRATCH = {"plgpu.kernel": "in scratch_types or with pl.run_scoped", "pl.pallas_call": "in scratch_shapes or with "
           "pl.run_scoped", "pl.kernel": "with pl.run_scoped"}  # pl.kernel on a Mosaic GPU mesh lowers no scratch
BODY = f"def body(o_ref):\n    s = {SEM}\n    pl.semaphore_signal(s)\n    pl.semaphore_wait(s)\n\n"


def related(ws, source):
    (finding,) = ws.findings(source=source)
    return [(r.path.rsplit("/", 1)[-1], f"{r.span.line + 1}:{r.span.column + 1}-{r.span.end_line + 1}:{r.span.end_column + 1}",
             r.message) for r in finding.related]


LAUNCHES = {
    "interpret=True": ("k = plgpu.kernel(body, out_type=(), interpret=True)\n", "True", "interpret=True",
                       "plgpu.kernel(body, out_type=(), interpret=True)", "plgpu.kernel"),
    "a constant that is true": ("INTERPRET = True\nk = plgpu.kernel(body, out_type=(), interpret=INTERPRET)\n",
                                ("INTERPRET", 2), "interpret=INTERPRET", "plgpu.kernel(body, out_type=(), interpret=INTERPRET)",
                                "plgpu.kernel"),
    "plgpu.InterpretGPUParams": ("k = plgpu.kernel(body, out_type=(), interpret=plgpu.InterpretGPUParams())\n",
                                 "plgpu.InterpretGPUParams()", "interpret=plgpu.InterpretGPUParams()",
                                 "plgpu.kernel(body, out_type=(), interpret=plgpu.InterpretGPUParams())", "plgpu.kernel"),
    "pltpu.InterpretParams on pallas_call": (
        "k = pl.pallas_call(body, out_shape=(), interpret=pltpu.InterpretParams())\n", "pltpu.InterpretParams()",
        "interpret=pltpu.InterpretParams()", "pl.pallas_call(body, out_shape=(), interpret=pltpu.InterpretParams())",
        "pl.pallas_call"),
    "pl.kernel with a mesh": ("k = pl.kernel(body, out_type=(), mesh=plgpu.Mesh(), interpret=True)\n", "True",
                              "interpret=True", "pl.kernel(body, out_type=(), mesh=plgpu.Mesh(), interpret=True)", "pl.kernel"),
}


@pytest.mark.parametrize("name", list(LAUNCHES))
def test_interpret_mode_launch(ws, name):
    launch, site, reason, entry, api = LAUNCHES[name]
    source = HEADER + BODY + launch
    assert ws.check(source=source) == [("PAL002", at(source, SEM), message(SCRATCH[api]))]
    site_range = at(source, *site) if isinstance(site, tuple) else at(source, site)
    assert related(ws, source) == [
        ("kernel.py", site_range, f"the kernel runs in interpret mode because of {reason}"),
        ("kernel.py", at(source, entry), f"kernel entry point ({api})"),
    ]


@pytest.mark.parametrize("launch", [
    "k = plgpu.kernel(body, out_type=())\n",
    "k = plgpu.kernel(body, out_type=(), interpret=False)\n",
    "k = plgpu.kernel(body, out_type=(), interpret=None)\n",
    "DEBUG = False\nk = plgpu.kernel(body, out_type=(), interpret=DEBUG)\n",
    "k = plgpu.kernel(body, out_type=(), interpret=flag)\n",
])
def test_not_interpret_mode(ws, launch):
    assert ws.check(source=HEADER + "flag = object()\n" + BODY + launch) == []


@pytest.mark.parametrize("alias,call", [
    ("functools.partial(pl.get_global)", "gg(plgpu.SemaphoreType.REGULAR)"),
    ("functools.partial(pl.get_global, what=plgpu.SemaphoreType.REGULAR)", "gg()"),
])
def test_get_global_through_a_partial_alias(ws, alias, call):
    source = (HEADER + f"gg = {alias}\n\ndef body(o_ref):\n    s = {call}\n    pl.semaphore_signal(s)\n"
              "    pl.semaphore_wait(s)\n\nk = plgpu.kernel(body, out_type=(), interpret=True)\n")
    assert ws.check(source=source) == [("PAL002", at(source, call), MESSAGE)]


def test_interpret_kernel_without_get_global_is_fine(ws):
    source = HEADER + "def body(o_ref):\n    o_ref[...] = 1\n\nk = plgpu.kernel(body, out_type=(), interpret=True)\n"
    assert ws.check(source=source) == []


REACHED = {
    "decorator @plgpu.kernel(...)": f"@plgpu.kernel(out_type=(), interpret=True)\ndef k():\n    {SEM}\n",
    "decorator @functools.partial(plgpu.kernel, ...)":
        f"@functools.partial(plgpu.kernel, out_type=(), interpret=True)\ndef k():\n    {SEM}\n",
    "pl.core_map": f"mesh = plgpu.Mesh()\n@pl.core_map(mesh, interpret=True)\ndef k():\n    {SEM}\n",
    "functools.partial body": f"def body(o_ref, *, n):\n    {SEM}\n\n"
                              "k = plgpu.kernel(functools.partial(body, n=2), out_type=(), interpret=True)\n",
    "helper called from the body": f"def helper():\n    return {SEM}\n\ndef body(o_ref):\n    helper()\n\n"
                                   "k = plgpu.kernel(body, out_type=(), interpret=True)\n",
    "pl.run_scoped body": f"def body(o_ref):\n    def scoped(r):\n        {SEM}\n    pl.run_scoped(scoped, plgpu.SMEM((8,), jnp.float32))\n\n"
                          "k = plgpu.kernel(body, out_type=(), interpret=True)\n",
    "pl.when body": f"def body(o_ref):\n    @pl.when(True)\n    def _():\n        {SEM}\n\n"
                    "k = plgpu.kernel(body, out_type=(), interpret=True)\n",
    "lax.fori_loop body": f"def step(i, c):\n    {SEM}\n    return c\n\ndef body(o_ref):\n    lax.fori_loop(0, 4, step, 0)\n\n"
                          "k = plgpu.kernel(body, out_type=(), interpret=True)\n",
    "method used as body": f"class K:\n    def body(self, o_ref):\n        {SEM}\n\n    def build(self):\n"
                           "        return plgpu.kernel(self.body, out_type=(), interpret=True)\n",
}


@pytest.mark.parametrize("name", list(REACHED))
def test_get_global_reached_from_interpreted_kernel(ws, name):
    source = HEADER + REACHED[name]
    expected = message(SCRATCH["pl.kernel"]) if name == "pl.core_map" else MESSAGE  # a Mosaic GPU mesh: no scratch
    assert ws.check(source=source) == [("PAL002", at(source, SEM), expected)]


def test_force_gpu_interpret_mode_context(ws):
    source = HEADER + BODY + ("k = plgpu.kernel(body, out_type=())\n\ndef run(x):\n"
                              "    with plgpu.force_gpu_interpret_mode():\n        return k(x)\n")
    assert ws.check(source=source) == [("PAL002", at(source, SEM), MESSAGE)]
    assert related(ws, source)[0] == ("kernel.py", at(source, "plgpu.force_gpu_interpret_mode()"),
                                      "the kernel runs in interpret mode because of with plgpu.force_gpu_interpret_mode()")


def test_force_tpu_interpret_mode_around_a_function_that_builds_the_kernel(ws):
    source = HEADER + BODY + ("def launch(x):\n    return pl.pallas_call(body, out_shape=())(x)\n\n"
                              "def test():\n    with pltpu.force_tpu_interpret_mode():\n        launch(1)\n")
    assert ws.check(source=source) == [("PAL002", at(source, SEM), message(SCRATCH["pl.pallas_call"]))]


def test_set_gpu_interpret_mode(ws):
    source = HEADER + BODY + ("def test():\n    plgpu.set_gpu_interpret_mode(plgpu.InterpretGPUParams())\n"
                              "    plgpu.kernel(body, out_type=())()\n")
    assert ws.check(source=source) == [("PAL002", at(source, SEM), MESSAGE)]


WRAPPED = (f"@functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))\n"
           f"def body_kernel(x_ref, o_ref):\n    s = {SEM}\n    pl.semaphore_signal(s)\n    pl.semaphore_wait(s)\n"
           "    o_ref[...] = x_ref[...]\n\ndef body(*operands):\n    return body_kernel(*operands)\n\n")


def test_set_gpu_interpret_mode_reaches_a_kernel_launched_by_a_wrapper(ws):
    # What a PAL001 operand fix leaves: the decorated kernel renamed, a wrapper of the old name launching it.
    # jax 0.12: test() fails with the TypeError.
    source = HEADER + WRAPPED + ("def test():\n    plgpu.set_gpu_interpret_mode()\n    fn = body\n"
                                 "    return fn(jnp.ones((128,), jnp.float32))\n")
    assert ws.check(source=source) == [("PAL002", at(source, SEM), MESSAGE)]


def test_set_gpu_interpret_mode_reaches_a_kernel_launched_by_a_lambda(ws):
    source = HEADER + WRAPPED + ("def test():\n    plgpu.set_gpu_interpret_mode()\n"
                                 "    fn = lambda x: body(x)\n    return fn(jnp.ones((128,), jnp.float32))\n")
    assert ws.check(source=source) == [("PAL002", at(source, SEM), MESSAGE)]


def test_wrapper_launched_before_set_interpret_mode_is_compiled(ws):
    source = HEADER + WRAPPED + ("def test():\n    y = body(jnp.ones((128,), jnp.float32))\n"
                                 "    plgpu.set_gpu_interpret_mode()\n    return y\n")
    assert ws.check(source=source) == []


def test_kernel_launched_before_set_interpret_mode_or_after_reset_is_compiled(ws):
    source = HEADER + BODY + ("def test():\n    plgpu.kernel(body, out_type=())()\n"
                              "    plgpu.set_gpu_interpret_mode(None)\n")
    assert ws.check(source=source) == []


def test_unused_get_global_in_interpreted_pallas_call_is_dead_code(ws):
    source = HEADER + ("def body(o_ref):\n    pl.get_global(plgpu.SemaphoreType.REGULAR)\n    o_ref[...] = 1\n\n"
                       "k = pl.pallas_call(body, out_shape=(), interpret=True)\n")
    assert ws.check(source=source) == []


def test_non_semaphore_in_interpreted_kernel_gets_both(ws):
    source = HEADER + ("def body(o_ref):\n    g = pl.get_global(plgpu.GMEM((128,), jnp.float32))\n    o_ref[...] = g[...]\n\n"
                       "k = plgpu.kernel(body, out_type=(), interpret=True)\n")
    assert [c[0] for c in ws.check(source=source)] == ["PAL001", "PAL002"]


def test_helper_in_another_module_is_reported_there(ws):
    helper = ws.write("helpers.py", HEADER + f"def grab():\n    return {SEM}\n")
    kernel = HEADER + ("from helpers import grab\n\ndef body(o_ref):\n    grab()\n\n"
                       "k = plgpu.kernel(body, out_type=(), interpret=True)\n")
    ws.write("kernel.py", kernel)
    helper_source = helper.read_text()
    assert ws.check("kernel.py") == []
    assert ws.check("helpers.py") == [("PAL002", at(helper_source, SEM), MESSAGE)]
    (finding,) = ws.findings("helpers.py")
    assert [(r.path.rsplit("/", 1)[-1], r.message) for r in finding.related] == [
        ("kernel.py", "the kernel runs in interpret mode because of interpret=True"),
        ("kernel.py", "kernel entry point (plgpu.kernel)")]


def test_kernel_body_in_another_module_launched_interpreted(ws):
    ws.write("bodies.py", HEADER + BODY)
    ws.write("launch.py", HEADER + "import bodies\n\ndef run(x):\n"
                          "    return plgpu.kernel(bodies.body, out_type=(), interpret=True)(x)\n")
    source = (ws.root / "bodies.py").read_text()
    assert ws.check("bodies.py") == [("PAL002", at(source, SEM), MESSAGE)]


def test_pallas_call_built_outside_force_interpret_context_is_not_interpreted(ws):
    """pallas_call reads the switch when it is built (on the CPU JAX then fails with 'Only interpret mode is
    supported on CPU'): compiled for a GPU it is a Triton kernel, where get_global has no lowering (PAL003)."""
    source = HEADER + BODY + ("k = pl.pallas_call(body, out_shape=())\n\ndef run(x):\n"
                              "    with plgpu.force_gpu_interpret_mode():\n        return k(x)\n")
    assert [c[0] for c in ws.check(source=source)] == ["PAL003"]


def test_kernel_built_before_a_module_level_set_interpret_mode_is_traced_interpreted(ws):
    source = HEADER + BODY + ("k = plgpu.kernel(body, out_type=())\n"
                              "plgpu.set_gpu_interpret_mode(plgpu.InterpretGPUParams())\n"
                              "early = pl.pallas_call(body, out_shape=())\n")
    (finding,) = ws.findings(source=source)
    assert [r.message for r in finding.related] == [
        "the kernel runs in interpret mode because of plgpu.set_gpu_interpret_mode(plgpu.InterpretGPUParams())",
        "kernel entry point (plgpu.kernel)"]


def test_first_sentence_fits_the_problems_panel():
    assert len(MESSAGE.split(". ")[0]) <= 120 and len(MAYBE.split(". ")[0]) <= 120


def test_interpret_through_a_wrappers_kwargs_is_certain(ws):
    source = HEADER + BODY + ("def make(body, **kwargs):\n    return plgpu.kernel(body, out_type=(), **kwargs)\n\n"
                              "debug_kernel = make(body, interpret=True)\n")
    (finding,) = ws.findings(source=source)
    assert (finding.code, finding.severity, finding.message) == ("PAL002", "error", MESSAGE)
    assert [r.message for r in finding.related][0] == "the kernel runs in interpret mode because of interpret=True"


def test_interpret_from_a_dict_literal(ws):
    source = HEADER + BODY + ("OPTIONS = {'interpret': True, 'debug': False}\n"
                              "k = plgpu.kernel(body, out_type=(), interpret=OPTIONS['interpret'])\n"
                              "k2 = plgpu.kernel(body, out_type=(), **{'interpret': True})\n")
    assert ws.check(source=source) == [("PAL002", at(source, SEM), MESSAGE)]


def test_interpret_decided_at_run_time_is_a_warning(ws):
    source = HEADER + "import os\n" + BODY + (
        "def make(flag):\n    return plgpu.kernel(body, out_type=(), interpret=plgpu.InterpretGPUParams() if flag else None)\n")
    (finding,) = ws.findings(source=source)
    assert (finding.code, finding.severity, finding.message) == ("PAL002", "warning", MAYBE)
    assert finding.related[0].message == ("the kernel may run in interpret mode because of "
                                          "interpret=plgpu.InterpretGPUParams() if flag else None")


def test_interpret_from_the_environment_is_a_warning(ws):
    source = HEADER + "import os\n" + BODY + (
        "k = plgpu.kernel(body, out_type=(), interpret=os.environ.get('PALLAS_INTERPRET') == '1')\n")
    assert [(f.code, f.severity) for f in ws.findings(source=source)] == [("PAL002", "warning")]


@pytest.mark.parametrize("switch", [
    "interpret=jax.default_backend() == 'cpu'",
    "interpret=jax.devices()[0].platform == 'cpu'",
    "interpret=not ON_GPU",  # ON_GPU = jax.default_backend() == 'gpu'
    "interpret=jtu.test_device_matches(['cpu'])",
    "interpret=MESH.devices.flat[0].platform != 'gpu'",  # a device reached through a mesh (maxtext's moe.py)
])
def test_interpret_decided_by_the_platform_is_a_warning(ws, switch):
    """Interpreted on the CPU, where JAX fails (agreement fixtures bad_interpret_default_backend*.py), compiled on
    a GPU: a warning, as for the environment."""
    source = HEADER + "from jax._src import test_util as jtu\n" + BODY + (
        f"ON_GPU = jax.default_backend() == 'gpu'\nMESH = jax.make_mesh((1,), ('x',))\nk = plgpu.kernel(body, out_type=(), {switch})\n")
    (finding,) = ws.findings(source=source)
    assert (finding.code, finding.severity, finding.message) == ("PAL002", "warning", MAYBE)
    assert finding.related[0].message == f"the kernel may run in interpret mode because of {switch}"


def test_both_branches_interpreted_is_certain(ws):
    source = HEADER + BODY + ("def make(flag):\n    return plgpu.kernel(body, out_type=(), "
                              "interpret=True if flag else plgpu.InterpretGPUParams())\n")
    assert [(f.code, f.severity) for f in ws.findings(source=source)] == [("PAL002", "error")]


def test_semaphore_only_read_into_a_dead_value_is_dropped_by_pallas_call(ws):
    source = HEADER + ("def ignore(sem):\n    pass\n\n"
                       "def body(o_ref):\n    count = pl.semaphore_read(pl.get_global(plgpu.SemaphoreType.REGULAR))\n"
                       "    ignore(pl.get_global(plgpu.SemaphoreType.REGULAR))\n    o_ref[...] = 1\n\n"
                       "k = pl.pallas_call(body, out_shape=(), interpret=True)\n")
    assert ws.check(source=source) == []


def test_where_jax_fails_earlier_in_interpret_mode_it_says_so(ws):
    source = HEADER + ("def body(o_ref):\n    block = lax.axis_index('block')\n    s = pl.get_global(plgpu.SemaphoreType.REGULAR)\n"
                       "    pl.semaphore_signal(s)\n\n"
                       "k = plgpu.kernel(body, out_type=(), grid=(2,), grid_names=('block',), interpret=True)\n")
    (finding,) = ws.findings(source=source)
    assert finding.message == MESSAGE + (". In this kernel JAX stops earlier, at lax.axis_index('block'): NameError: "
                                         "Found an unbound axis name: block (interpret=True does not bind plgpu.kernel "
                                         "grid names; plgpu.InterpretGPUParams() does)")
    assert (finding.related[-1].message, finding.related[-1].span.line + 1) == (
        "JAX fails here first, in interpret mode", source.count("\n", 0, source.index("lax.axis_index('block')")) + 1)
    gpu_params = source.replace("interpret=True", "interpret=plgpu.InterpretGPUParams()")
    assert [f.message for f in ws.findings(source=gpu_params)] == [MESSAGE]


def test_collective_run_scoped_in_interpret_mode_fails_first(ws):
    source = HEADER + ("def inner(sem):\n    pl.semaphore_signal(sem)\n\n"
                       "def body(o_ref):\n    s = pl.get_global(plgpu.SemaphoreType.REGULAR)\n    pl.semaphore_signal(s)\n"
                       "    pl.run_scoped(inner, plgpu.SemaphoreType.REGULAR, collective_axes='block')\n\n"
                       "k = plgpu.kernel(body, out_type=(), grid=(2,), grid_names=('block',), interpret=True)\n")
    (finding,) = [f for f in ws.findings(source=source) if f.code == "PAL002"]
    assert finding.message.endswith("at the collective pl.run_scoped: NotImplementedError: run_scoped interpret rule "
                                    "does not support collective axes")
