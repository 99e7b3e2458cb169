"""The kernel search in the importers of an analysed module (PAL005 and the other rules about any
semaphore) follows a parameter to call sites in its own module only: a workspace's importers of
importers are not modelled for it (in jax's package that was most of `jax/_src`, 342 MiB for one
file). That restricted search keeps its answers apart: the importer's own analysis afterwards still
finds a kernel that only another module's call site makes."""

import os

import pytest

from conftest import at, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""
HELPERS = HEADER + """
def body(x_ref, o_ref, sems):
    pl.semaphore_signal(sems)
"""
# Imports helpers (its kernel runs helpers.body); `lower`'s `ctx` is a parameter whose receiver is called, so
# its values are asked for while the entry points are sought; they come only from third.py, and there from
# fourth.py. `launch_with` builds a kernel only with the factory third.py passes it.
LAUNCHER = HEADER + """
import helpers

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def run(x):
    return plgpu.kernel(helpers.body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))])(x)


def lower(ctx, x):
    return ctx.cache.get(x)


def own_body(x_ref, o_ref, flags):
    pl.semaphore_wait(flags)


def launch_with(factory, x):
    return factory(own_body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((3,))])(x)
"""
THIRD = """\
from jax.experimental.pallas import mosaic_gpu as plgpu

import launcher


def go(ctx, x):
    return launcher.lower(ctx, x)


def start(x):
    return launcher.launch_with(plgpu.kernel, x)
"""
FOURTH = "import third\n\n\ndef outer(ctx):\n    return third.go(ctx, 1)\n"


def _signal(shape, verb):
    return (f'JAX: "ValueError: Cannot {verb} on a non-()-shaped semaphore: {shape!r}"; index it down to one '
            f"semaphore: .at[i]. The semaphore has shape {shape!r} and 0 of its 1 dimension are indexed; "
            "signal and wait act on a single semaphore.")


@pytest.fixture
def workspace(tmp_path):
    for name, text in {"helpers.py": HELPERS, "launcher.py": LAUNCHER, "third.py": THIRD, "fourth.py": FOURTH}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _found(project, path):
    return [(f.code, f"{f.span.line + 1}:{f.span.column + 1}-{f.span.end_line + 1}:{f.span.end_column + 1}",
             f.message) for f in analyze(project, str(path))]


def _modelled(project):
    return sorted(os.path.basename(path) for path in project._models)


def test_the_importers_kernels_are_found_without_modelling_the_importers_of_importers(workspace):
    project = Project(str(workspace), python=jax_python())
    assert _found(project, workspace / "helpers.py") == [
        ("PAL005", at(HELPERS, "pl.semaphore_signal(sems)"), _signal((2,), "signal"))]
    assert _modelled(project) == ["helpers.py", "launcher.py"]  # following `ctx` would model third.py, fourth.py


def test_the_importers_own_analysis_afterwards_follows_every_call_site(workspace):
    """Its kernel of `launch_with` exists only through third.py's call: the restricted search of it, made by
    helpers.py's analysis, must not be what launcher.py's own analysis reads."""
    fresh = Project(str(workspace), python=jax_python())
    expected = [("PAL005", at(LAUNCHER, "pl.semaphore_wait(flags)"), _signal((3,), "wait"))]
    assert _found(fresh, workspace / "launcher.py") == expected
    project = Project(str(workspace), python=jax_python())
    _found(project, workspace / "helpers.py")
    assert _found(project, workspace / "launcher.py") == expected
    assert _modelled(project) == ["fourth.py", "helpers.py", "launcher.py", "third.py"]


def test_a_module_without_functions_searches_no_importer(tmp_path):
    """A package's `__init__.py` that only re-exports (no def, no lambda) holds no code a kernel runs: its
    importers are not modelled for it (jax's `pallas/__init__.py`, imported by every test, cost a third of a
    check of them); the helper's own analysis still finds the kernel that importer launches."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.helpers import body  # signals a semaphore\n")
    (package / "helpers.py").write_text(HELPERS)
    (tmp_path / "launcher.py").write_text(LAUNCHER.replace("import helpers", "from pkg import helpers"))
    project = Project(str(tmp_path), python=jax_python())
    assert _found(project, package / "__init__.py") == []
    assert "launcher.py" not in _modelled(project)
    assert _found(project, package / "helpers.py") == [
        ("PAL005", at(HELPERS, "pl.semaphore_signal(sems)"), _signal((2,), "signal"))]


SETTINGS = '''\
from jax.experimental import pallas as pl

ASYNC_CHECKPOINTING = True  # the words "async" and "decrement" here are settings; nothing here copies


def steps_left():
    return pl.cdiv(7, 2) - 1  # decrement while profiling
'''
COPIES = '''\
from jax.experimental.pallas import tpu as pltpu


def copy_in(src, dst, sems):
    pltpu.make_async_copy(src, dst, sems).start()
'''
COPY_LAUNCHER = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import copies
import settings

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sems):
    copies.copy_in(x_ref, o_ref, sems)


def run(x):
    steps = settings.steps_left()
    return pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x), steps
'''


def test_a_module_no_kernel_can_report_in_searches_no_importer(tmp_path):
    """A module whose words pass the rules' first test ("async", "decrement") but that calls no semaphore op or
    copy and names no semaphore holds nothing an importer's kernel can be reported for: its importers are not
    modelled for it. A helper that only copies (no semaphore named) is still searched: the importer's kernel
    hands it a semaphore array, and the copy's start is reported there."""
    for name, text in {"settings.py": SETTINGS, "copies.py": COPIES, "launcher.py": COPY_LAUNCHER}.items():
        (tmp_path / name).write_text(text)
    project = Project(str(tmp_path), python=jax_python())
    assert _found(project, tmp_path / "settings.py") == []
    assert _modelled(project) == ["settings.py"]
    found = _found(project, tmp_path / "copies.py")
    assert [(code, where) for code, where, _ in found] == [("PAL005", at(COPIES, "pltpu.make_async_copy(src, dst, sems).start()"))]
    assert "launcher.py" in _modelled(project)


BARRIER_SETTINGS = '''\
from jax.experimental import pallas as pl

USE_BARRIER_SYNC = True  # a setting's word "barrier": nothing here waits on one


def sync_mode(steps):
    return ("barrier" if USE_BARRIER_SYNC else "none"), pl.cdiv(steps, 2)
'''
BARRIER_HELPERS = '''\
from jax.experimental.pallas import mosaic_gpu as plgpu


def wait_on(sem):
    plgpu.barrier_wait(sem)
'''
BARRIER_LAUNCHER = HEADER + '''
import barrier_helpers
import barrier_settings

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sem):
    barrier_helpers.wait_on(sem)


def run(x):
    mode = barrier_settings.sync_mode(8)
    return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])(x), mode
'''


def test_a_module_naming_barrier_without_a_barrier_use_searches_no_importer(tmp_path):
    """PAL006's semaphores allocated by a kernel and used as barriers: every finding is a barrier use of the
    analysed module, so a module whose text says "barrier" (a setting) but calls no barrier op, no copy taking
    one and nothing with `barrier=` has its importers' kernels left alone. A helper whose barrier_wait is given
    the importer's kernel semaphore is still searched, and reported."""
    for name, text in {"barrier_settings.py": BARRIER_SETTINGS, "barrier_helpers.py": BARRIER_HELPERS,
                       "launcher.py": BARRIER_LAUNCHER}.items():
        (tmp_path / name).write_text(text)
    project = Project(str(tmp_path), python=jax_python())
    assert _found(project, tmp_path / "barrier_settings.py") == []
    assert _modelled(project) == ["barrier_settings.py"]
    found = _found(project, tmp_path / "barrier_helpers.py")
    assert [(code, where) for code, where, _ in found] == [("PAL006", at(BARRIER_HELPERS, "plgpu.barrier_wait(sem)"))]
    assert "launcher.py" in _modelled(project)
