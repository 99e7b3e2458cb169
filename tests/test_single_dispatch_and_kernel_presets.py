"""Values followed through `functools.singledispatch` and through kernel presets (`functools.partial(pl.kernel,
mesh=...)` in a registry): the analyser reports where real JAX (`tests/jax_truth.py`) refuses the kernel, and
stays silent on the look-alikes JAX accepts (a dispatched REGULAR semaphore; implementations that disagree where
the argument's class is not known; a preset's Mosaic GPU mesh with a valid global semaphore)."""

import pytest

from conftest import jax_truth

pytestmark = pytest.mark.jax

GPU_HEADER = """\
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


class Fast:
  pass


class Careful(Fast):
  pass
"""

DISPATCHED_BUFFER = GPU_HEADER + """

@functools.singledispatch
def staging(mode):
  raise NotImplementedError


@staging.register
def _(mode: Fast):
  return plgpu.SMEM((256,), jnp.float32)


def run(x):
  mode = Careful()

  def body(x_ref, o_ref):
    tile = pl.get_global(staging(mode))
    tile[...] = x_ref[...] * 2.0
    o_ref[...] = tile[...]

  return plgpu.kernel(body, out_type=X)(x)


def target():
  return run, (X,), "cuda"
"""

DISPATCHED_SEMAPHORE = GPU_HEADER + """

@functools.singledispatch
def arrival(mode):
  raise NotImplementedError


@arrival.register(Fast)
def _fast_arrival(mode):
  return plgpu.SemaphoreType.REGULAR


def run(x):
  mode = Careful()

  def body(x_ref, o_ref):
    done = pl.get_global(arrival(mode))
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(done)
    pl.semaphore_wait(done)

  return plgpu.kernel(body, out_type=X, grid=(1,), grid_names=("b",))(x)


def target():
  return run, (X,), "cuda"
"""

# The argument's class is a run-time choice: one implementation gives a semaphore, the other a buffer. JAX
# accepts the launch it is run with (Fast); the analyser, which cannot tell, says nothing.
DISPATCHED_UNKNOWN = GPU_HEADER + """

@functools.singledispatch
def flag(mode):
  return plgpu.SemaphoreType.REGULAR


@flag.register
def _(mode: Careful):
  return plgpu.SMEM((256,), jnp.float32)


def run(x, modes=(Fast, Careful), pick=0):
  mode = modes[pick]()

  def body(x_ref, o_ref):
    done = pl.get_global(flag(mode))
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(done)
    pl.semaphore_wait(done)

  return plgpu.kernel(body, out_type=X, grid=(1,), grid_names=("b",))(x)


def target():
  return run, (X,), "cuda"
"""

PRESET_SEMAPHORE = GPU_HEADER + """

PRESETS = {"two": functools.partial(pl.kernel, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))}


def body(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  b = jax.lax.axis_index("b")

  @pl.when(b == 0)
  def _():
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(done)

  @pl.when(b == 1)
  def _():
    pl.semaphore_wait(done)


def run(x, preset="two"):
  return PRESETS[preset](body, out_type=X)(x)


def target():
  return run, (X,), "cuda"
"""

SOURCES = {"dispatched_buffer.py": DISPATCHED_BUFFER, "dispatched_semaphore.py": DISPATCHED_SEMAPHORE,
           "dispatched_unknown.py": DISPATCHED_UNKNOWN, "preset_semaphore.py": PRESET_SEMAPHORE}
REJECTED = {"dispatched_buffer.py": "get_global only supports semaphores, got Ref<smem>{float32[256]}"}


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
  folder = tmp_path_factory.mktemp("dispatch")
  for name, source in SOURCES.items():
    (folder / name).write_text(source)
  return jax_truth([folder / name for name in SOURCES])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_findings_where_jax_refuses_and_none_where_it_accepts(ws, truth, name):
  found = [code for code, _, _ in ws.check(name, SOURCES[name])]
  if name in REJECTED:
    assert not truth[name]["ok"] and REJECTED[name] in truth[name]["message"]
    assert found == ["PAL001"]
  else:
    assert truth[name]["ok"], truth[name]
    assert found == []
