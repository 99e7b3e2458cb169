"""Where a fix cannot be made safely it is not offered (only `# noqa` is); never a wrong edit."""

from __future__ import annotations

import pytest

HEADER = """\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""

CASES = {
    # A list of semaphore types read both as `.at[i]` and with a constant index: as one shaped semaphore,
    # `sems[0]` would read the semaphore's value, not a ref (PAL029).
    "a semaphore list read with .at and with a constant index": """
def body(x_ref, o_ref, sems):
  o_ref[...] = x_ref[...] + 1.0
  pl.semaphore_signal(sems.at[1])
  pl.semaphore_wait(sems[1])

double = plgpu.kernel(body, out_type=X, scratch_types=[[plgpu.SemaphoreType.REGULAR] * 2])
""",
    # A scratch semaphore under the GPU interpreter in a kernel with a grid: interpret=True binds no grid axis for
    # lax.axis_index ("Found an unbound axis name"), so it is not offered in the GPU interpreter's place (PAL016).
    "a GPU-interpreted semaphore in a kernel with a grid": """
def body(x_ref, o_ref, ready):
  b = jax.lax.axis_index("b")
  o_ref[pl.ds(b * 64, 64)] = x_ref[pl.ds(b * 64, 64)] + 1.0
  pl.semaphore_signal(ready)
  pl.semaphore_wait(ready)

double = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("b",), scratch_types=[plgpu.SemaphoreType.REGULAR],
                      interpret=plgpu.InterpretGPUParams())
""",
    # The TPU interpreter's parameters built by a helper a TPU kernel takes too: rewriting the helper would take
    # the TPU kernel's interpreter away (PAL026).
    "TPU interpreter parameters shared with a TPU kernel": """
from jax.experimental.pallas import tpu as pltpu

def suite_interpreter():
  return pltpu.InterpretParams(detect_races=True)

def body(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0

gpu_double = plgpu.kernel(body, out_type=X, interpret=suite_interpreter())
tpu_double = pl.pallas_call(body, out_shape=X, interpret=suite_interpreter())
""",
    # An option only the TPU interpreter has: plgpu.InterpretGPUParams takes no `dma_execution_mode` (PAL026).
    "a TPU-only interpreter option": """
from jax.experimental.pallas import tpu as pltpu

def body(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0

gpu_double = plgpu.kernel(body, out_type=X, interpret=pltpu.InterpretParams(dma_execution_mode="eager"))
""",
    # A module-level get_global two kernel bodies read: which one it belongs in is not known (moving it into
    # one would leave the other reading nothing).
    "a module-level get_global read by two kernel bodies": """
DONE = pl.get_global(plgpu.SemaphoreType.REGULAR)

def first(x_ref, o_ref):
  pl.semaphore_signal(DONE)
  o_ref[...] = x_ref[...]

def second(x_ref, o_ref):
  pl.semaphore_wait(DONE)
  o_ref[...] = x_ref[...]

f = plgpu.kernel(first, out_type=X, grid=(2,), grid_names=("b",))
g = plgpu.kernel(second, out_type=X, grid=(2,), grid_names=("b",))
""",
    # A get_global of a jitted host function that the host also signals: it is used outside the kernel.
    "a host function's get_global the host signals too": """
@jax.jit
def step(x):
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(ready)

  def body(x_ref, o_ref):
    pl.semaphore_wait(ready)
    o_ref[...] = x_ref[...]

  return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("b",))(x)
""",
    # Warp specialization whose producer arrives in a helper: how many warpgroups arrive per phase depends on
    # where the helper is called, and a barrier sized by the thread count would leave the consumer waiting.
    "a warp-specialized barrier arrived on in a helper": """
def produce(x_ref, tile_ref, staged):
  tile_ref[...] = x_ref[...] * 2.0
  plgpu.barrier_arrive(staged)

def body(x_ref, o_ref, tile_ref):
  staged = pl.get_global(plgpu.SemaphoreType.REGULAR)
  wg = jax.lax.axis_index("wg")
  pl.when(wg == 0)(lambda: produce(x_ref, tile_ref, staged))

  @pl.when(wg == 1)
  def _consume():
    plgpu.barrier_wait(staged)
    o_ref[...] = tile_ref[...] + 1.0

kernel = plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg",
                      scratch_types=[plgpu.SMEM((128,), jnp.float32)])
""",
    # A compiled pl.kernel takes no scratch; allocated with pl.run_scoped in the helper, the barrier would be
    # stored on the object and returned out of its scope (jax 0.12: "AttributeError: 'NoneType' object has no
    # attribute 'physical_element_aval'").
    "a helper object's barrier stored on it and returned (pl.kernel)": """
class Sync:
  def __init__(self):
    self.kind = plgpu.Barrier(num_arrivals=1)
    self.barrier = None

  def acquire(self):
    self.barrier = pl.get_global(self.kind)
    return self.barrier

SYNC = Sync()

def body(x_ref, o_ref):
  def scoped(tile):
    plgpu.copy_gmem_to_smem(x_ref, tile, SYNC.acquire())
    plgpu.barrier_wait(SYNC.barrier)
    o_ref[...] = tile[...]
  pl.run_scoped(scoped, plgpu.SMEM((128,), jnp.float32))

kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))
""",
    "a helper's buffer returned (pl.kernel)": """
def staging():
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  tile[...] = jnp.zeros((128,), jnp.float32)
  return tile

def body(x_ref, o_ref):
  tile = staging()
  tile[...] += x_ref[...]
  o_ref[...] = tile[...]

kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))
""",
    # `jnp.zeros_like(tile)` reads the buffer as an array (no escape), but the helper still returns the buffer
    # itself, which would outlive a pl.run_scoped in the helper.
    "a helper's buffer zeroed with jnp.zeros_like and returned (pl.kernel)": """
def zeroed_staging():
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  tile[...] = jnp.zeros_like(tile)
  return tile

def body(x_ref, o_ref):
  tile = zeroed_staging()
  tile[...] += x_ref[...]
  o_ref[...] = tile[...]

kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))
""",
    # The buffer zeroed with jnp.zeros_like and then kept in a list the body reads after the function returns.
    "a buffer zeroed with jnp.zeros_like and appended to a list (pl.kernel)": """
KEPT = []

def stage(x_ref):
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  tile[...] = jnp.zeros_like(tile) + x_ref[...]
  KEPT.append(tile)

def body(x_ref, o_ref):
  stage(x_ref)
  o_ref[...] = KEPT[-1][...]

kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))
""",
    # A nested function after the get_global stores the buffer on an object, where it would outlive pl.run_scoped.
    "a buffer a nested function stores on a module object (pl.kernel)": """
class Box:
  tile = None

BOX = Box()

def body(x_ref, o_ref):
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))

  def keep():
    BOX.tile = tile

  keep()
  tile[...] = jnp.zeros_like(tile) + x_ref[...]
  o_ref[...] = tile[...]

kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))
""",
    # Hoisted out of the warp-level function, `flag` would clash with the kernel's own `flag`.
    "a warp-level get_global whose name the kernel code uses too": """
def body(x_ref, o_ref):
  flag = x_ref[...]

  @pl.core_map(plgpu.WarpMesh(axis_name="warp"))
  def _per_warp():
    flag = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(flag)

  o_ref[...] = flag

fn = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("b",))
""",
    # A TPU VMEM buffer in a pallas_call of a module that imports Mosaic GPU: a GPU (Triton) kernel, no VMEM.
    # (Written in part: a buffer written whole and read back whole would be kept as a value, which Triton runs.)
    "a TPU VMEM buffer in a pallas_call of a Mosaic GPU module": """
from jax.experimental.pallas import tpu as pltpu

def body(x_ref, o_ref):
  stage = pl.get_global(pltpu.VMEM((128,), jnp.float32))
  stage[0:64] = x_ref[0:64]
  o_ref[...] = stage[...]

fn = pl.pallas_call(body, out_shape=X)
""",
    # The rest of a loop body moves into a nested function, where `break` has no loop.
    "a compiled pl.kernel's buffer in a loop body that breaks": """
def body(x_ref, o_ref):
  for step in range(2):
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tile[...] = x_ref[...]
    if step:
      break
  o_ref[...] = x_ref[...]

fn = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",)))
""",
    # `total = total + 1` in the nested function would read its own, unbound, total.
    "a compiled pl.kernel's buffer in a loop body that updates a name of the function": """
def body(x_ref, o_ref):
  total = 0.0
  for step in range(2):
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tile[...] = x_ref[...]
    total = total + 1.0
  o_ref[...] = x_ref[...]

fn = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",)))
""",
    # jax 0.12: the GPU interpreter has no TPU semaphore scratch ('KeyError: SEMAPHORE'; interpret=True runs it,
    # which the launch's own interpret= keyword can become, or a force_gpu_interpret_mode around that launch alone:
    # not one that also interprets another kernel).
    "TPU semaphore in a pallas_call the GPU interpreter runs": """
from jax.experimental.pallas import tpu as pltpu

def body(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  o_ref[...] = x_ref[...] + 1.0

def double(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0

def run(x):
  with plgpu.force_gpu_interpret_mode():
    y = pl.pallas_call(double, out_shape=X)(x)
    return pl.pallas_call(body, out_shape=X)(y)
""",
    # A barrier in the function a body hands to pl.run_scoped, in a pallas_call interpreted or not as the
    # environment says: interpret=True's interpreter runs no barrier (jax 0.12: 'No state discharge rule
    # implemented for primitive: barrier_arrive'), so the relaunch as a plgpu.kernel with an SMEM barrier
    # must make it the GPU interpreter, and a value known only at run time cannot be (it was offered before).
    "barrier in a run_scoped function of a pallas_call interpreted at run time": """
import os

def body(x_ref, o_ref):
  def scoped(tmp_ref):
    ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
    plgpu.barrier_arrive(ready)
    plgpu.barrier_wait(ready)
  pl.run_scoped(scoped, plgpu.SMEM((8,), jnp.float32))
  o_ref[...] = x_ref[...] + 1.0

fn = pl.pallas_call(body, out_shape=X, interpret=os.environ.get("INTERPRET", "1") == "1")
""",
    # pl.run_scoped's function may end in a return (golden barrier_run_scoped_fori_loop_body_returns), but a
    # return before the end would leave the nested function only, not the loop body.
    "barrier in a compiled pl.kernel's loop body that returns early": """
from jax import lax

SKIP = False

def body(x_ref, o_ref):
  def step(i, carry):
    ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
    plgpu.barrier_arrive(ready)
    if SKIP:
      return carry
    plgpu.barrier_wait(ready)
    return carry + 1.0
  total = lax.fori_loop(0, 2, step, 0.0)
  o_ref[...] = x_ref[...] + total

fn = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",)))
""",
    "one body, a pallas_call and a plgpu.kernel": """
def body(x_ref, o_ref):
  lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  o_ref[...] = x_ref[...] + lut[...]

a = plgpu.kernel(body, out_type=X)
b = pl.pallas_call(body, out_shape=X, interpret=True)
""",
    # Its decorator is the launch, whose callers pass the operand: they have no `n` (golden
    # operand_shape_from_factory_parameter, launched by a call, carries `(n,)` there).
    "shape not known statically": """
def make(n):
  @functools.partial(plgpu.kernel, out_type=X)
  def body(x_ref, o_ref):
    lut = pl.get_global(plgpu.GMEM((n,), jnp.float32))
    o_ref[...] = x_ref[...] + lut[...]
  return body
""",
    "body picked from a dict whose other body is also launched on its own (it would take an operand it is not given)": """
def add_body(x_ref, o_ref):
  o_ref[...] = x_ref[...] + 1.0

def lut_body(x_ref, o_ref):
  lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  o_ref[...] = x_ref[...] + lut[...]

BODIES = {"add": add_body, "lut": lut_body}

def make(name):
  return plgpu.kernel(BODIES[name], out_type=X)

kernel = make("lut")
plain = plgpu.kernel(add_body, out_type=X)
""",
    "body picked from a dict that is also changed at run time": """
def add_body(x_ref, o_ref):
  o_ref[...] = x_ref[...] + 1.0

def lut_body(x_ref, o_ref):
  lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  o_ref[...] = x_ref[...] + lut[...]

BODIES = {"add": add_body, "lut": lut_body}

def register(name, body):
  BODIES[name] = body

def make(name):
  return plgpu.kernel(BODIES[name], out_type=X)

kernel = make("lut")
""",
    "semaphore type returned by a method that is also used elsewhere": """
class Kernel:
  def sem_type(self):
    return plgpu.SemaphoreType.BARRIER

  def body(self, x_ref, o_ref):
    sem = pl.get_global(self.sem_type())
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...]

  def describe(self):
    return str(self.sem_type())

kernel = plgpu.kernel(Kernel().body, out_type=X)
""",
    "body takes *args": """
def body(*refs):
  lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  refs[1][...] = refs[0][...] + lut[...]

kernel = plgpu.kernel(body, out_type=X)
""",
    "barrier semaphore passed on to a helper that keeps it": """
SEEN = []

def keep(sem):
  SEEN.append(sem)

def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.BARRIER)
  keep(sem)
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X)
""",
    # A BARRIER semaphore only signalled and waited on under interpret=True now becomes a REGULAR
    # scratch semaphore (golden case scratch_tpu_type_interpreted_gpu_kernel); under the GPU interpreter:
    "shaped semaphore without index, no axis index held for its length": """
def body(x_ref, o_ref):
  block = jax.lax.axis_index("blocks")
  flags = pl.get_global(plgpu.SemaphoreType.REGULAR((4,)))
  pl.semaphore_signal(flags)

kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("blocks",))
""",
    "shaped semaphore, two axes of its length (which one is meant?)": """
def body(x_ref, o_ref):
  row = jax.lax.axis_index("rows")
  column = jax.lax.axis_index("columns")
  flags = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))
  pl.semaphore_signal(flags)

kernel = plgpu.kernel(body, out_type=X, grid=(2, 2), grid_names=("rows", "columns"))
""",
    "shaped semaphore waited on in a helper (other callers may pass others)": """
def wait_for(sem):
  pl.semaphore_wait(sem)

def body(x_ref, o_ref):
  flags = pl.get_global(plgpu.SemaphoreType.REGULAR((1,)))
  wait_for(flags)

kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("blocks",))
""",
    "global semaphore waited on as a barrier, nothing arrives (a barrier would wait forever)": """
def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.barrier_wait(sem)
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))
""",
    "global semaphore used as a barrier by warpgroups whose number is not written": """
def make(threads):
  def body(x_ref, o_ref):
    sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
    plgpu.barrier_arrive(sem)
    plgpu.barrier_wait(sem)
  return plgpu.kernel(body, out_type=X, num_threads=threads, thread_name="wg")
""",
    "a Triton pallas_call with block specs (plgpu.kernel has no one form for them)": """
def body(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...]
  pl.semaphore_signal(done)

kernel = pl.pallas_call(body, out_shape=X, grid=(2,), in_specs=[pl.BlockSpec((64,), lambda i: (i,))])
""",
    "global semaphore array used whole as one barrier": """
def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR((4,)))
  plgpu.barrier_arrive(sem)
  plgpu.barrier_wait(sem)

kernel = plgpu.kernel(body, out_type=X)
""",
    "semaphore output before the array output (its parameter is not the body's last)": """
def body(x_ref, sem_ref, o_ref):
  pl.semaphore_signal(sem_ref)
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=(plgpu.SemaphoreType.REGULAR, X))
""",
    "too many indices (which one to drop?)": """
def body(x_ref, o_ref):
  flags = pl.get_global(plgpu.SemaphoreType.REGULAR((4,)))
  pl.semaphore_signal(flags.at[0, 1])

kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("blocks",))
""",
    "a global semaphore signalled outside the kernel": """
def body(x_ref, o_ref):
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X)

@jax.jit
def run(x):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  return kernel(x)
""",
    # PAL009: JAX accepts the wait compiled for a TPU (and it decrements): the signal back would change what runs.
    # PAL009: compiled for a TPU the wait decrements (a warning); interpret=True runs it as written, atomically.
    "a non-decrementing wait compiled for a TPU that interpret=True also runs": """
from jax.experimental.pallas import tpu as pltpu

def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem, 1, decrement=False)

fn = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR],
                    compiler_params=pltpu.CompilerParams())
b = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR], interpret=True)
""",
    "a non-decrementing wait sharing its line with another statement": """
from jax.experimental.pallas import tpu as pltpu

def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem); pl.semaphore_wait(sem, 1, decrement=False)

fn = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR],
                    interpret=pltpu.InterpretParams())
""",
    # PAL009: interpret=True runs the helper's wait as written; only the TPU interpreter's launch refuses it.
    "a non-decrementing wait that the TPU interpreter and interpret=True both run": """
from jax.experimental.pallas import tpu as pltpu

def peek(sem):
  pl.semaphore_wait(sem, 1, decrement=False)

def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem)
  peek(sem)

a = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR],
                   interpret=pltpu.InterpretParams())
b = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR], interpret=True)
""",
    # Its semaphore reaches two kernels: giving both a semaphore in_spec may be meant, or only one.
    "a TPU semaphore output passed to two pallas_calls": """
from jax.experimental.pallas import tpu as pltpu

def start_body(x_ref, o_ref, sem):
  pltpu.make_async_copy(x_ref, o_ref, sem).start()

def wait_body(x_ref, sem, o_ref):
  pltpu.make_async_copy(x_ref, o_ref, sem).wait()

start = pl.pallas_call(start_body, out_shape=(X, pltpu.SemaphoreType.DMA), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                       out_specs=(pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)))
specs = [pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)]
wait = pl.pallas_call(wait_body, out_shape=X, in_specs=specs, out_specs=pl.BlockSpec(memory_space=pl.ANY))
again = pl.pallas_call(wait_body, out_shape=X, in_specs=specs, out_specs=pl.BlockSpec(memory_space=pl.ANY))

def run(x):
  y, sem = start(x)
  return wait(y, sem), again(y, sem)
""",
    # The body is also launched with a whole ref of one semaphore: its parameter cannot become the ref of two.
    "one semaphore read out of its ref, the body launched twice": """
def body(sem_ref, x_ref, o_ref):
  pl.semaphore_signal(sem_ref)
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X)
other = plgpu.kernel(body, out_type=X)

def step(x):
  sems = plgpu.alloc_semaphore((2,))
  return kernel(sems[0], x), other(plgpu.alloc_semaphore(()), x)
""",    # Two tiles over the shared memory budget whose lives overlap: the output tile is written before the input
    # tile's last read (its second half), so one buffer cannot serve both.
    "two scratch tiles over budget whose lives overlap": """
T = jax.ShapeDtypeStruct((128, 256), jnp.float32)

def swap_halves(x_gmem, o_gmem, a_smem, b_smem, loaded):
  plgpu.copy_gmem_to_smem(x_gmem, a_smem, loaded)
  plgpu.barrier_wait(loaded)
  b_smem[:64] = a_smem[64:]
  b_smem[64:] = a_smem[:64]
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(b_smem, o_gmem)
  plgpu.wait_smem_to_gmem(0)

def run(x):
  return plgpu.kernel(swap_halves, out_type=T, scratch_types=[
      plgpu.SMEM((128, 256), jnp.float32), plgpu.SMEM((128, 256), jnp.float32),
      plgpu.Barrier(num_arrivals=1)])(x)
""",
    # The same tiles, one read and the other written in one statement, but one also handed to a helper: what the
    # helper does with it is not followed.
    "two scratch tiles over budget, one handed to a helper": """
T = jax.ShapeDtypeStruct((128, 256), jnp.float32)

def fill(ref):
  ref[...] = jnp.zeros(ref.shape, ref.dtype)

def scale(x_gmem, o_gmem, a_smem, b_smem, loaded):
  plgpu.copy_gmem_to_smem(x_gmem, a_smem, loaded)
  plgpu.barrier_wait(loaded)
  fill(b_smem)
  b_smem[...] = a_smem[...] * 2.0
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(b_smem, o_gmem)
  plgpu.wait_smem_to_gmem(0)

def run(x):
  return plgpu.kernel(scale, out_type=T, scratch_types=[
      plgpu.SMEM((128, 256), jnp.float32), plgpu.SMEM((128, 256), jnp.float32),
      plgpu.Barrier(num_arrivals=1)])(x)
""",
    # Each trace of a get_global makes a buffer of its own: a helper traced twice whose buffer outlives the call
    # (returned, kept in a list) would share the one scratch buffer or operand the fix makes, and its two results
    # would alias (the buffer kept inside the helper is fixed: golden case scratch_helper_called_twice_buffer_kept_inside;
    # a helper nested in the body gets a buffer per call: golden cases buffer_per_call_*).
    # pl.run_scoped scopes only the rest of the block holding the get_global: a name read below that block would
    # not be the buffer there (a parameter given a default buffer when None stays None; a branch's local is unbound).
    "a parameter given a get_global buffer when it is None, read after the if": """
def body(x_ref, o_ref, stage=None, *, width):
  if stage is None:
    stage = pl.get_global(plgpu.SMEM((width,), jnp.float32))
  stage[...] = x_ref[...] * 3.0
  o_ref[...] = stage[...]

kernel = pl.kernel(functools.partial(body, width=128), out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))
""",
    "a branch's get_global buffer read after the branch": """
STAGE_IN_F32 = True

def body(x_ref, o_ref):
  if STAGE_IN_F32:
    staged = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    staged[...] = x_ref[...]
  o_ref[...] = staged[...] + 1.0

kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))
""",
    "a module-level helper called twice returning its get_global buffer": """
def staged(src):
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  tile[...] = src[...] * 2.0
  return tile

def body(x_ref, y_ref, o_ref):
  first = staged(x_ref)
  second = staged(y_ref)
  o_ref[...] = first[...] - second[...]

kernel = plgpu.kernel(body, out_type=X)
""",
    "a nested helper called in a loop, its buffers kept in a list": """
def body(x_ref, y_ref, o_ref):
  def staged(src):
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tile[...] = src[...]
    return tile

  tiles = [staged(src) for src in (x_ref, y_ref)]
  o_ref[...] = tiles[0][...] * tiles[1][...]

kernel = plgpu.kernel(body, out_type=X)
""",
    "get_global in a loop of the body, each buffer appended to a list": """
def body(x_ref, y_ref, o_ref):
  tiles = []
  for src in (x_ref, y_ref):
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tile[...] = src[...]
    tiles.append(tile)
  o_ref[...] = tiles[0][...] + tiles[1][...]

kernel = plgpu.kernel(body, out_type=X)
""",
    # A barrier array waited on whole: which of its barriers the wait means is not known.
    "a barrier array waited on whole": """
def body(x_gmem, o_gmem, ring, bars):
  for s in range(2):
    plgpu.copy_gmem_to_smem(x_gmem, ring.at[s], bars.at[s])
  plgpu.barrier_wait(bars)
  o_gmem[...] = ring[0]

kernel = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SMEM((2, 128), jnp.float32),
                                                       plgpu.Barrier(num_arrivals=1, num_barriers=2)])
""",
    # A copy into a ring whose slots do not line up with the barriers (four slots, two barriers): the slot's index
    # is no barrier's.
    "a barrier array given whole to a copy into a ring of another length": """
def body(x_gmem, o_gmem, ring, bars):
  for s in range(4):
    plgpu.copy_gmem_to_smem(x_gmem, ring.at[s], bars)
    plgpu.barrier_wait(bars.at[s % 2])
  o_gmem[...] = ring[0]

kernel = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SMEM((4, 128), jnp.float32),
                                                       plgpu.Barrier(num_arrivals=1, num_barriers=2)])
""",
}


# No rewrite keeps these kernels interpreted (a barrier under interpret=True, any semaphore under the GPU
# interpreter); compiled they mean what they say, so "Run the kernel compiled" is all that is offered (unsafe).
# Under `interpret=plgpu.InterpretGPUParams()` of the launch a REGULAR semaphore becomes scratch run with
# interpret=True instead (unsafe; golden case scratch_semaphore_gpu_interpreter_unsafe).
COMPILED = "Run the kernel compiled (remove {}) (unsafe: it runs on a GPU only, not in interpret mode on the CPU{})"
SWITCH = "; the other kernels this switch made interpreted run compiled too"
ONLY_COMPILED = {
    "a barrier as scratch under interpret=True (NotImplementedError: barrier)": """
def body(x_ref, o_ref):
  bar = pl.get_global(plgpu.Barrier(num_arrivals=1))
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X, interpret=True)
""",
    "barrier semaphore under InterpretGPUParams": """
def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.BARRIER)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X, interpret=plgpu.InterpretGPUParams())
""",
    "semaphore under force_gpu_interpret_mode (the GPU interpreter runs none)": """
def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X)

def run(x):
  with plgpu.force_gpu_interpret_mode():
    return kernel(x)
""",
}
ONLY_COMPILED_TITLES = {
    "a barrier as scratch under interpret=True (NotImplementedError: barrier)": COMPILED.format("interpret=True", ""),
    "barrier semaphore under InterpretGPUParams": COMPILED.format("interpret=plgpu.InterpretGPUParams()", ""),
    "semaphore under force_gpu_interpret_mode (the GPU interpreter runs none)": COMPILED.format(
        "with plgpu.force_gpu_interpret_mode()", SWITCH),
}


@pytest.mark.parametrize("name", ONLY_COMPILED)
def test_only_running_compiled_is_offered_where_no_interpreter_runs_it(ws, name):
    (finding,) = [f for f in ws.findings("kernel.py", HEADER + ONLY_COMPILED[name]) if f.code == "PAL002"]
    assert [fix.title for fix in ws.fixes(finding)] == [
        f"pallas-lsp (PAL002): {ONLY_COMPILED_TITLES[name]}", "pallas-lsp (PAL002): Disable PAL002 for this line"]


@pytest.mark.parametrize("name", CASES)
def test_only_noqa_is_offered(ws, name):
    findings = ws.findings("kernel.py", HEADER + CASES[name])
    assert findings, "the case must have a finding"
    for finding in findings:
        assert [fix.title for fix in ws.fixes(finding)] == [
            f"pallas-lsp ({finding.code}): Disable {finding.code} for this line"]


def test_no_fix_edits_a_file_that_does_not_parse(ws):
    source = HEADER + CASES["body takes *args"].replace("kernel = plgpu", "kernel = = plgpu")
    findings = ws.findings("kernel.py", source)
    assert sorted(f.code for f in findings) == ["PAL000", "PAL001"]
    assert all(fix.kind == "noqa" for f in findings for fix in ws.fixes(f))


ARRAY = "Use one semaphore array"
TRACED_TWICE = {
    "a helper called twice": """
def new_flag():
  return pl.get_global(plgpu.SemaphoreType.REGULAR)

def body(x_ref, o_ref):
  ready, done = new_flag(), new_flag()
  pl.semaphore_signal(ready)
  pl.semaphore_signal(done)

kernel = plgpu.kernel(body, out_type=X)
""",
    "a loop": """
def body(x_ref, o_ref):
  for _ in range(2):
    sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)

kernel = plgpu.kernel(body, out_type=X)
""",
}


@pytest.mark.parametrize("name", TRACED_TWICE)
def test_no_semaphore_array_where_a_get_global_is_traced_twice(ws, name):
    """Each trace of that get_global made its own semaphore: one `.at[i]` in its place would share one."""
    findings = ws.findings("kernel.py", HEADER + TRACED_TWICE[name])
    assert [f.code for f in findings] == ["PAL004"]
    titles = [fix.title for fix in ws.fixes(findings[0])]
    assert "pallas-lsp (PAL004): Launch the kernel on a one-block grid (grid=(1,))" in titles
    assert not any(ARRAY in title for title in titles)


@pytest.mark.parametrize("name", ["bad_semaphore_operand_view_read.py"])
def test_no_ref_fix_for_one_semaphore_read_out_of_its_ref(ws, name):
    """`kernel(sems.at[1][...], x)`: the view `sems.at[i]` is no operand JAX takes (TransformedRefs cannot be
    abstractified, jax 0.12), so only noqa is offered (`kernel(sems[0], x)` passes `sems`, indexed in the body:
    golden case semaphore_ref_indexed_in_body)."""
    from conftest import REPO

    fixture = REPO / "tests" / "fixtures" / "agreement" / name
    [finding] = ws.findings("kernel.py", fixture.read_text())
    assert finding.code == "PAL008"
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL008): Disable PAL008 for this line"]


# What the editor's disabled "No automatic fix" action says (fixes.fixes_and_reason): the builders' own
# refusal where one applies, else the rule's "no fix" reason.
WHY_NOT = {
    # pl.run_scoped's refusal first: it is the fix a compiled pl.kernel's buffer has (fixes._get_global_rewrites)
    "a compiled pl.kernel's buffer in a loop body that breaks": ("PAL001", (
        "a statement after the get_global breaks or continues a loop; a compiled pl.kernel takes no scratch "
        "(Mosaic GPU: 'Scratch operands are not supported by the Mosaic GPU mpmd_map lowering')")),
    "a compiled pl.kernel's buffer in a loop body that updates a name of the function": ("PAL001", (
        "total is bound after the get_global and used before it; a compiled pl.kernel takes no scratch "
        "(Mosaic GPU: 'Scratch operands are not supported by the Mosaic GPU mpmd_map lowering')")),
    "shape not known statically": ("PAL001", "the array's type depends on n, which the launch cannot write, and "
                                             "spelled from the value it has here it would hold for one configuration "
                                             "only"),
    "one body, a pallas_call and a plgpu.kernel": (
        "PAL002", "compiled, a pl.pallas_call has no get_global (Triton: 'Unimplemented primitive in Pallas Triton "
                  "lowering: get_global')"),
    "too many indices (which one to drop?)": (
        "PAL005", "which index is meant is not known (no axis matches the dimension, or there are too many indices)"),
    "a non-decrementing wait compiled for a TPU that interpret=True also runs": (
        "PAL009", "a kernel that runs decrement=False as written (Mosaic GPU, interpret=True) also runs this wait: "
                  "there, waiting and signalling back would let another waiter see the count drop"),
    "a non-decrementing wait sharing its line with another statement": (
        "PAL009", "the wait shares its line with another statement"),
    "a non-decrementing wait that the TPU interpreter and interpret=True both run": (
        "PAL009", "a kernel that runs decrement=False as written (Mosaic GPU, interpret=True) also runs this wait: "
                  "there, waiting and signalling back would let another waiter see the count drop"),
    "a global semaphore signalled outside the kernel": (
        "PAL008", "the semaphore is used outside the kernel, not only passed into one launch: which kernel code it "
                  "was meant for is not known"),
    "a TPU semaphore output passed to two pallas_calls": (
        "PAL008", "sem is not passed to one pallas_call launch and used nowhere else"),
    "one semaphore read out of its ref, the body launched twice": (
        "PAL008", "body is not launched only here, so its parameter cannot become the whole ref"),
}


@pytest.mark.parametrize("name", WHY_NOT)
def test_the_reason_why_no_fix_is_offered(ws, name):
    from pallas_lsp.fixes import fixes_and_reason

    code, reason = WHY_NOT[name]
    (finding,) = [f for f in ws.findings("kernel.py", HEADER + {**CASES, **ONLY_COMPILED}[name]) if f.code == code]
    assert fixes_and_reason(ws.project, finding)[1] == reason


def test_a_get_global_in_a_lambda_says_why(ws):
    from pallas_lsp.fixes import fixes_and_reason

    (finding,) = ws.findings("kernel.py", HEADER + """
def body(x_ref, o_ref):
  get_lut = lambda: pl.get_global(plgpu.SMEM((128,), jnp.float32))
  for _ in range(2):
    lut = get_lut()
    o_ref[...] = x_ref[...] + lut[...]

kernel = plgpu.kernel(body, out_type=X)
""")
    assert fixes_and_reason(ws.project, finding)[1] == (
        "the get_global is in a lambda, and not one bound to a name that is called once, outside loops "
        "(`get = lambda: pl.get_global(...)`, `sem = get()`), so its buffer has no one place")



def test_no_ref_fix_for_a_signal_given_a_number(ws):
    """PAL014 on `pl.semaphore_signal(0)`: a number names no semaphore ref, so only noqa is offered, and the
    disabled action says why."""
    from conftest import REPO
    from pallas_lsp.fixes import fixes_and_reason

    fixture = REPO / "tests" / "fixtures" / "agreement" / "bad_signal_number_gpu.py"
    [finding] = ws.findings("kernel.py", fixture.read_text())
    assert finding.code == "PAL014"
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL014): Disable PAL014 for this line"]
    assert fixes_and_reason(ws.project, finding)[1] == "the semaphore is a number, which names no semaphore ref"



def test_no_ref_fix_for_a_semaphore_the_gpu_interpreter_cannot_run(ws):
    """PAL014 on `sems[1]` in a kernel run by the GPU interpreter: `.at[1]` makes it a ref, but that interpreter
    allocates no semaphore at all (jax 0.12: "nan + semaphore", found by running the fixed fixture), so the fix
    would leave JAX failing otherwise: only noqa is offered, and the disabled action says why."""
    from conftest import REPO
    from pallas_lsp.fixes import fixes_and_reason

    fixture = REPO / "tests" / "fixtures" / "agreement" / "bad_wait_loaded_semaphore_gpu_interpreter.py"
    [finding] = ws.findings("kernel.py", fixture.read_text())
    assert finding.code == "PAL014"
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL014): Disable PAL014 for this line"]
    assert "the GPU interpreter runs no semaphore" in fixes_and_reason(ws.project, finding)[1]

_SIGNALLED_BESIDE_A_COPY = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, copy_sem, sem):
  copy = pltpu.make_async_copy(x_ref, o_ref, COPY_SEMAPHORE)
  copy.start()
  copy.wait()
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


kernel = pl.pallas_call(body, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pl.ANY),
                        scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA])
'''


def test_regular_semaphore_fix_where_every_copy_signals_another_semaphore(ws):
    """PAL013 on a DMA semaphore signalled beside a copy that signals another one (`copy_sem`): it takes part
    in no copy, so it is made REGULAR (JAX 0.12 lowers the fixed kernel for a TPU: checked by hand with
    tests/fixes/jax_lower.py)."""
    [finding] = [f for f in ws.findings("kernel.py", _SIGNALLED_BESIDE_A_COPY.replace("COPY_SEMAPHORE", "copy_sem"))
                 if f.code == "PAL013"]
    assert "pallas-lsp (PAL013): Allocate a REGULAR semaphore (only signalled and waited on)" in [
        fix.title for fix in ws.fixes(finding)]


def test_no_regular_semaphore_fix_where_a_copy_may_signal_it(ws):
    """The copy's semaphore is chosen at run time between the two (`both[pl.program_id(0) % 2]`): it may be the
    signalled one, so it is not made REGULAR; the disabled action says why."""
    from pallas_lsp.fixes import fixes_and_reason

    source = _SIGNALLED_BESIDE_A_COPY.replace("COPY_SEMAPHORE", "both[pl.program_id(0) % 2]").replace(
        "  copy = pltpu", "  both = (copy_sem, sem)\n  copy = pltpu")
    [finding] = [f for f in ws.findings("kernel.py", source) if f.code == "PAL013"]
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL013): Disable PAL013 for this line"]
    assert fixes_and_reason(ws.project, finding)[1] == (
        "the kernel makes DMA copies: which semaphore a copy signals is not checked here")


def test_no_regular_semaphore_fix_for_another_modules_constant_that_a_third_module_imports(ws):
    """PAL013 on a DMA semaphore whose type is another module's constant: where a third module imports that
    constant too (it may allocate a DMA semaphore there for a copy), it is not made REGULAR; the disabled action
    says why. With the third module gone, the same finding gets the fix."""
    from pallas_lsp.fixes import fixes_and_reason

    ws.write("sem_types.py", '''
from jax.experimental.pallas import tpu as pltpu

SEM_TYPE = pltpu.SemaphoreType.DMA
''')
    ws.write("copies.py", '''
from sem_types import SEM_TYPE

COPY_SEMAPHORES = [SEM_TYPE]
''')
    kernel = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from sem_types import SEM_TYPE

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


kernel = pl.pallas_call(body, out_shape=X, scratch_shapes=[SEM_TYPE])
'''
    [finding] = [f for f in ws.findings("kernel.py", kernel) if f.code == "PAL013"]
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL013): Disable PAL013 for this line"]
    assert fixes_and_reason(ws.project, finding)[1] == (
        "the DMA semaphore's type is not written where it is allocated, in this module, nor in a module "
        "constant read only there")
    (ws.root / "copies.py").unlink()
    [finding] = [f for f in ws.findings("kernel.py", kernel) if f.code == "PAL013"]
    assert [fix.title for fix in ws.fixes(finding)] == [
        "pallas-lsp (PAL013): Allocate a REGULAR semaphore (only signalled and waited on)",
        "pallas-lsp (PAL013): Disable PAL013 for this line"]


def test_no_regular_scratch_for_a_barrier_semaphore_waited_on_as_a_barrier(ws):
    """A BARRIER semaphore's get_global in a pl.pallas_call only interpret=True runs gets a REGULAR scratch
    semaphore where it is only signalled and waited on (golden scratch_barrier_semaphore_interpreted_pallas_call);
    waited on as a barrier, a REGULAR semaphore would not mean the same, so no scratch fix is offered."""
    from pallas_lsp.fixes import fixes_and_reason

    findings = ws.findings("kernel.py", HEADER + '''

def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.BARRIER)
  pl.semaphore_signal(sem)
  plgpu.barrier_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


fn = pl.pallas_call(body, out_shape=X, interpret=True)
''')
    reasons = {f.code: fixes_and_reason(ws.project, f)[1] for f in findings}
    assert sorted(reasons) == ["PAL001", "PAL002", "PAL006"]
    assert not any("scratch" in fix.title for f in findings for fix in ws.fixes(f))
    assert reasons["PAL001"] == ("the semaphore is used other than signalled, waited on or read (as a barrier, "
                                 "or passed on), where a REGULAR one would not mean the same")


def test_no_scratch_for_a_tpu_semaphore_in_a_compiled_triton_pallas_call_of_a_mosaic_gpu_module(ws):
    """A TPU semaphore type in a bare pl.pallas_call of a module that imports Mosaic GPU: a GPU kernel, Triton
    (setting platform = "gpu"), which takes no scratch (jax 0.12 fails the scratch fix's result with 'scratch
    memory not implemented in the Triton backend': generated kernel g2_00026). Only the relaunch as a
    plgpu.kernel is offered; a module that names only TPU keeps the scratch fix (golden
    scratch_tpu_semaphore_pallas_call)."""
    from pallas_lsp.fixes import fixes_and_reason

    [finding] = ws.findings("kernel.py", HEADER + '''from jax.experimental.pallas import tpu as pltpu


def body(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


fn = pl.pallas_call(body, out_shape=X, grid=(2,))
''')
    assert finding.code == "PAL003"
    assert [fix.title for fix in ws.fixes(finding)] == [
        "pallas-lsp (PAL003): Launch the kernel with plgpu.kernel (Mosaic GPU), which has global semaphores, instead "
        "of Triton (unsafe: Mosaic GPU compiles for NVIDIA Hopper GPUs and later only), and use a global semaphore "
        "(plgpu.SemaphoreType.REGULAR)",
        "pallas-lsp (PAL003): Disable PAL003 for this line"]
    assert fixes_and_reason(ws.project, finding)[1] is None


def test_no_tpu_semaphore_scratch_under_the_gpu_interpreter(ws):
    """A TPU semaphore's get_global in a pl.pallas_call run by the GPU interpreter: as scratch there, jax 0.12
    fails with 'KeyError: SEMAPHORE' (no semaphore error). Where that interpreter is asked for other than by
    the launch's own interpret= keyword (which can become interpret=True: golden
    scratch_tpu_semaphore_gpu_interpreter_unsafe) or a force_gpu_interpret_mode around that launch alone (golden
    scratch_semaphore_force_gpu_interpret_mode_to_interpret_true), here one that serves another kernel of its
    block too, the scratch fix is not offered; the action says why."""
    from pallas_lsp.fixes import fixes_and_reason

    findings = ws.findings("kernel.py", HEADER + '''from jax.experimental.pallas import tpu as pltpu


def body(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  o_ref[...] = x_ref[...] + 1.0


def double(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0


def run(x):
  with plgpu.force_gpu_interpret_mode():  # a pallas_call reads it when built
    y = pl.pallas_call(double, out_shape=X)(x)
    return pl.pallas_call(body, out_shape=X)(y)
''')
    reasons = {f.code: fixes_and_reason(ws.project, f)[1] for f in findings}
    assert not any("scratch" in fix.title for f in findings for fix in ws.fixes(f))
    assert reasons["PAL001"].startswith("the GPU interpreter (plgpu.InterpretGPUParams) allocates no TPU semaphore as "
                                        "scratch;")


TPU_HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref):
    sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...]
"""
# A launch with a grid spec takes its scratch in the grid spec only (jax 0.12: "If `grid_spec` is specified, then
# `scratch_shapes` must be `()`"): where that grid spec is built out of the fix's reach, or serves another launch
# too, no scratch fix (goldens scratch_grid_spec_prefetch_scalar, scratch_grid_spec_variable,
# scratch_grid_spec_from_method and scratch_into_grid_spec_of_other_module are offered).
GRID_SPEC_ELSEWHERE = {
    "a grid spec a helper returns to two launches": ('''
def grid_spec(rows):
    return pl.GridSpec(grid=(1,), in_specs=[pl.BlockSpec((rows, 128), lambda i: (i, 0))],
                       out_specs=pl.BlockSpec((rows, 128), lambda i: (i, 0)))


def copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    y = pl.pallas_call(copy, out_shape=X, grid_spec=grid_spec(8))(x)
    return pl.pallas_call(body, out_shape=X, grid_spec=grid_spec(8))(y)
''', "grid_spec builds the grid spec of other launches too, which the new scratch would reach"),
    "a grid spec two launches share": ('''
SPEC = pl.GridSpec(grid=(1,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                   out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))


def copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    y = pl.pallas_call(copy, out_shape=X, grid_spec=SPEC)(x)
    return pl.pallas_call(body, out_shape=X, grid_spec=SPEC)(y)
''', "the grid spec SPEC is used by other code too, which the new scratch would reach"),
}


@pytest.mark.parametrize("name", GRID_SPEC_ELSEWHERE)
def test_no_scratch_beside_a_grid_spec_built_out_of_reach(ws, name):
    from pallas_lsp.fixes import fixes_and_reason

    source, reason = GRID_SPEC_ELSEWHERE[name]
    ws.write("specs.py", "from jax.experimental import pallas as pl\n\n\ndef row_grid_spec(rows):\n"
                         "    return pl.GridSpec(grid=(1,), in_specs=[pl.BlockSpec((rows, 128), lambda i: (i, 0))])\n")
    [finding] = ws.findings("kernel.py", TPU_HEADER + source)
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL003): Disable PAL003 for this line"]
    assert fixes_and_reason(ws.project, finding)[1].startswith(reason + ";")



def test_scratch_goes_into_a_grid_spec_function_of_another_module_it_alone_calls(ws):
    """`grid_spec=row_grid_spec(8)` from another module that only this launch calls: the fix edits that module's
    `pl.GridSpec(...)` (and imports `pltpu` there), not the launch (golden scratch_into_grid_spec_of_other_module)."""
    ws.write("specs.py", "from jax.experimental import pallas as pl\n\n\ndef row_grid_spec(rows):\n"
                         "    return pl.GridSpec(grid=(1,), in_specs=[pl.BlockSpec((rows, 128), lambda i: (i, 0))])\n")
    [finding] = ws.findings("kernel.py", TPU_HEADER + '''
from specs import row_grid_spec


def run(x):
    return pl.pallas_call(body, out_shape=X, grid_spec=row_grid_spec(8))(x)
''')
    fix = ws.fixes(finding)[0]
    assert fix.title == "pallas-lsp (PAL003): Allocate sem as scratch (scratch_shapes) in the grid spec"
    in_specs = [e.new_text for e in fix.edits if e.path.endswith("specs.py")]
    assert "scratch_shapes=[pltpu.SemaphoreType.REGULAR]" in "".join(in_specs)
    assert "from jax.experimental.pallas import tpu as pltpu" in "".join(in_specs)
    assert not any("scratch_shapes" in e.new_text for e in fix.edits if e.path.endswith("kernel.py"))

PIPELINE = '''
import dataclasses


@dataclasses.dataclass(frozen=True)
class StageConfig:
    blocks: int = 2
    width: int = 128

    @property
    def shape(self):
        return (self.blocks * self.width,)


def _produce(x_ref, o_ref, flags_ref):
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(flags_ref)


def _consume(y_ref, flags_ref, o_ref):
    pl.semaphore_wait(flags_ref)
    o_ref[...] = y_ref[...] * 2.0


def make_stages(cfg: StageConfig):
    out = jax.ShapeDtypeStruct(cfg.shape, jnp.float32)
    produce = plgpu.kernel(_produce, out_type=(out, plgpu.SemaphoreType.REGULAR), grid=(cfg.blocks,),
                           grid_names=("b",))
    consume = plgpu.kernel(_consume, out_type=out, grid=(cfg.blocks,), grid_names=("b",))
    return produce, consume


def pipeline(x, cfg: StageConfig = StageConfig()):
    produce, consume = make_stages(cfg)
    {use}
'''
# Dropping a semaphore output changes what every launch returns: where a caller unpacks the results (jax 0.12,
# after the fix: 'not enough values to unpack (expected 2, got 1)', and the consumer kernel loses the flags it
# waited on) or reads the dropped one, PAL008's fix is refused (golden
# global_semaphore_not_an_output_caller_reads_first keeps it where callers read [0] only).
DROPPED_OUTPUT_USED = {
    "the results unpacked and the flags passed to a consumer": (
        "y, flags = produce(x)\n    return consume(y, flags)",
        "a caller unpacks its 2 results (kernel.py:42), which one output fewer would break"),
    "the flags read by index through a returning helper": (
        "return consume(_first(produce, x), _last(produce, x))\n\n\n"
        "def _first(kernel, x):\n    return kernel(x)[0]\n\n\ndef _last(kernel, x):\n    return kernel(x)[-1]",
        "a caller reads its results by an index that one output fewer changes (kernel.py:50)"),
}


@pytest.mark.parametrize("name", DROPPED_OUTPUT_USED)
def test_no_semaphore_output_dropped_where_a_caller_uses_it(ws, name):
    from pallas_lsp.fixes import fixes_and_reason

    use, reason = DROPPED_OUTPUT_USED[name]
    [finding] = ws.findings("kernel.py", HEADER + PIPELINE.replace("{use}", use))
    assert finding.code == "PAL008"
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL008): Disable PAL008 for this line"]
    assert fixes_and_reason(ws.project, finding)[1] == reason


def test_no_semaphore_output_dropped_where_an_importing_module_unpacks_the_results(ws):
    from pallas_lsp.fixes import fixes_and_reason

    ws.write("pipeline.py", "from kernel import produce\n\n\ndef run(x):\n    y, flags = produce(x)\n    return y\n")
    [finding] = ws.findings("kernel.py", HEADER + '''

def _produce(x_ref, o_ref, flags_ref):
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(flags_ref)


produce = plgpu.kernel(_produce, out_type=(X, plgpu.SemaphoreType.REGULAR), grid=(2,), grid_names=("b",))
''')
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL008): Disable PAL008 for this line"]
    assert fixes_and_reason(ws.project, finding)[1] == (
        "a caller unpacks its 2 results (pipeline.py:5), which one output fewer would break")


# Compiled, a Pallas kernel does not run on a CPU (jax 0.12: 'Only interpret mode is supported on CPU backend'):
# "Run the kernel compiled" is refused where something in the workspace runs the kernel on one (golden
# scratch_semaphore_interpreted_by_config_tested_on_cpu gets the scratch fix instead).
BARRIER_INTERPRETED = '''
def body(x_ref, o_ref):
  bar = pl.get_global(plgpu.Barrier(num_arrivals=1))
  o_ref[...] = x_ref[...]

kernel = plgpu.kernel(body, out_type=X, interpret={interpret})
'''
ON_A_CPU = {
    "interpret= from a command-line flag": (
        {"kernel.py": HEADER + BARRIER_INTERPRETED.split("kernel =")[0] + '''
def scale(x, interpret=True):
  return plgpu.kernel(body, out_type=X, interpret=interpret)(x)

def main():
  import argparse
  parser = argparse.ArgumentParser()
  parser.add_argument("--interpret", action=argparse.BooleanOptionalAction, default=True)
  args = parser.parse_args()
  print(scale(jnp.ones((128,), jnp.float32), interpret=args.interpret))
'''},
        "interpret=interpret is decided by a caller, a setting or a flag: the runs that set it want the "
        "interpreter, and on a CPU a compiled kernel does not run (jax 0.12: 'Only interpret mode is supported on "
        "CPU backend')"),
    "a test runs the module's kernels": (
        {"kernel.py": HEADER + BARRIER_INTERPRETED.format(interpret="True"),
         "tests/test_kernel.py": "import jax.numpy as jnp\nfrom kernel import kernel\n\n\ndef test_kernel():\n"
                                 "    kernel(jnp.ones((128,), jnp.float32))\n"},
        "tests/test_kernel.py is a test that reaches this kernel's module and may run it on a CPU, where a compiled "
        "kernel does not run (jax 0.12: 'Only interpret mode is supported on CPU backend')"),
    "a script picks the CPU platform": (
        {"kernel.py": HEADER + BARRIER_INTERPRETED.format(interpret="True"),
         "ops.py": "from kernel import kernel\n\n\ndef op(x):\n    return kernel(x)\n",
         "demo.py": "import jax\nfrom ops import op\n\njax.config.update('jax_platforms', 'cpu')\n"},
        "demo.py picks the CPU platform and reaches this kernel's module, and on a CPU a compiled kernel does not "
        "run (jax 0.12: 'Only interpret mode is supported on CPU backend')"),
}


@pytest.mark.parametrize("name", ON_A_CPU)
def test_not_run_compiled_where_the_workspace_runs_it_on_a_cpu(ws, name):
    from pallas_lsp.fixes import fixes_and_reason

    files, reason = ON_A_CPU[name]
    for path, text in files.items():
        ws.write(path, text)
    [finding] = [f for f in ws.findings("kernel.py") if f.code == "PAL002"]
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL002): Disable PAL002 for this line"]
    # After the scratch fix's refusal: interpret=True runs no barrier (jax 0.12: 'NotImplementedError: barrier').
    assert fixes_and_reason(ws.project, finding)[1].split("; ")[1:] == [reason]


def test_a_kernel_class_its_test_runs_interpreted_gets_scratch_not_compiled(ws):
    """Golden scratch_semaphore_interpreted_by_config_tested_on_cpu: `interpret=cfg.interpret` of a config
    dataclass, and test_ring.py runs the kernel on the CPU: the scratch fix (which the test passes with) only."""
    from golden_cases import GOLDEN

    for path in (GOLDEN / "scratch_semaphore_interpreted_by_config_tested_on_cpu" / "before").glob("*.py"):
        ws.write(path.name, path.read_text())
    [finding] = ws.findings("ring.py")
    assert [fix.title for fix in ws.fixes(finding)] == [
        "pallas-lsp (PAL002): Allocate arrived as scratch (scratch_types) (unsafe: the grid has more than one block, "
        "so the semaphore is no longer shared by all of them)", "pallas-lsp (PAL002): Disable PAL002 for this line"]


def test_no_scratch_type_copied_from_one_configuration(ws):
    """A body a factory builds for a config asks get_global for `plgpu.SMEM((cfg.rows, 128), cfg.dtype)`; the launch
    has no name for that factory's `cfg` (it builds the config in the call, which written again would run again),
    and spelled from the value the analysis sees the type would hold for one configuration only: the scratch fix
    is refused, saying so (goldens scratch_type_from_* and scratch_getattr_shim_factory_body carry the expression
    where the launch can write it); the buffer is allocated with pl.run_scoped where its type stands instead,
    `cfg` as written (golden run_scoped_plgpu_kernel_type_of_helper_built_scratch)."""
    from pallas_lsp.fixes import fixes_and_reason, _get_global_at, allocate_as_scratch
    from pallas_lsp.fixes.kernel_edits import CannotFix

    [finding] = ws.findings("kernel.py", HEADER + '''
import dataclasses


@dataclasses.dataclass(frozen=True)
class Config:
    rows: int = 128
    dtype: object = jnp.float32


def make_body(cfg):
    def body(x_ref, o_ref):
        tile = pl.get_global(plgpu.SMEM((cfg.rows, 128), cfg.dtype))
        tile[...] = x_ref[...]
        o_ref[...] = tile[...]
    return body


def run(x):
    return plgpu.kernel(make_body(Config(rows=x.shape[0])), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    return run, (jax.ShapeDtypeStruct((128, 128), jnp.float32),), "cuda"
''')
    titles = [fix.title for fix in ws.fixes(finding)]
    assert not any("as scratch" in title for title in titles)
    [scoped] = [fix for fix in ws.fixes(finding) if "pl.run_scoped" in fix.title]
    assert any("pl.run_scoped(scoped, plgpu.SMEM((cfg.rows, 128), cfg.dtype))" in e.new_text for e in scoped.edits)
    model = ws.project.model(finding.path)
    call = _get_global_at(ws.project, model, finding)
    with pytest.raises(CannotFix, match="the buffer's type depends on cfg, which the launch cannot write, and "
                                        "spelled from the value it has here it would hold for one configuration only"):
        allocate_as_scratch.fix(ws.project, model, call, ws.project.evaluator.value(model, call.args[0]), "PAL001")
    assert fixes_and_reason(ws.project, finding)[1] is None


def test_a_type_from_a_helper_parameter_a_call_passes_is_not_copied(ws):
    """`staged(x_ref, kind=plgpu.SMEM((64,), ...))`: the helper's `kind` is what each call passes, not its default,
    so no one value may be spelled at the launch (where no call passes it, the default is the type: generated
    kernel g0_00031's `get_sem_0()` keeps its fix); pl.run_scoped in the helper allocates what each call passes."""
    from pallas_lsp.fixes import fixes_and_reason

    [finding] = ws.findings("kernel.py", HEADER + '''

def staged(x_ref, kind=plgpu.SMEM((128,), jnp.float32)):
    tile = pl.get_global(kind)
    tile[...] = x_ref[...]
    return tile[...]


def body(x_ref, o_ref):
    o_ref[...] = staged(x_ref, kind=plgpu.SMEM((128,), jnp.float32))


kernel = plgpu.kernel(body, out_type=X)
''')
    assert not any("scratch" in fix.title for fix in ws.fixes(finding))
    # What is offered allocates it in the helper, with what each call passes: pl.run_scoped(scoped, kind).
    fixes, _ = fixes_and_reason(ws.project, finding)
    [scoped] = [fix for fix in fixes if "run_scoped" in fix.title]
    assert scoped.title.endswith("Allocate tile with pl.run_scoped for the rest of staged")
    from pallas_lsp.fixes.edits import apply_edits

    assert "return pl.run_scoped(scoped, kind)" in apply_edits((ws.root / "kernel.py").read_text(), scoped.edits)



def test_no_scratch_in_a_grid_spec_factory_of_another_module_with_another_caller(ws):
    """`grid_spec=tiles.row_sum_spec(self.tiling)`, a factory of another module that a third module also calls:
    the scratch added to its `PrefetchScalarGridSpec` would reach that launch too, so only noqa is offered, and
    the disabled action says why (with this launch its only caller the fix edits the factory: golden case
    scratch_into_grid_spec_of_other_module)."""
    from conftest import REPO
    from pallas_lsp.fixes import fixes_and_reason

    golden = REPO / "tests" / "fixes" / "golden" / "scratch_into_grid_spec_of_other_module" / "before"
    ws.write("tiles.py", (golden / "tiles.py").read_text())
    ws.write("other.py", """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

import tiles


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


def copy(x, tiling):
  return pl.pallas_call(copy_kernel, grid_spec=tiles.row_sum_spec(tiling),
                        out_shape=jax.ShapeDtypeStruct((tiling.rows, tiling.cols), x.dtype))(x)
""")
    [finding] = ws.findings("kernel.py", (golden / "kernel.py").read_text())
    assert finding.code == "PAL001"
    assert [fix.title for fix in ws.fixes(finding)] == ["pallas-lsp (PAL001): Disable PAL001 for this line"]
    assert fixes_and_reason(ws.project, finding)[1] == (
        "row_sum_spec builds the grid spec of other launches too, which the new scratch would reach")
