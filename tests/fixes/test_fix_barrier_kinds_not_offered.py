"""Barrier kinds and waits: where the count, the kind or the scope is not provable, only `# noqa` is offered,
with the reason said (fixes semaphore_as_barrier, semaphore_wait_count, barrier_wait_call, run_scoped_local and
barrier_arrivals' lax.cond branches)."""

from __future__ import annotations

import pytest

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""

CASES = {
    # The predicate depends on the warpgroup: the branch may run in one warpgroup only, or in both.
    "a barrier arrived on in a lax.cond branch taken by warpgroup": ("PAL006", """
def body(x_ref, o_ref):
  wg = jax.lax.axis_index("wg")

  def meet():
    met = pl.get_global(plgpu.SemaphoreType.REGULAR)
    plgpu.barrier_arrive(met)
    plgpu.barrier_wait(met)

  jax.lax.cond(wg == 0, meet, lambda: None)
  o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg")
""", "how many warpgroups arrive on the barrier per phase is not provable"),
    # The predicate reads a scratch ref, which one warpgroup may have written otherwise than the other.
    "a barrier arrived on in a lax.cond branch on a scratch value": ("PAL006", """
def body(x_ref, o_ref, flag_ref):
  wg = jax.lax.axis_index("wg")
  flag_ref[0] = wg.astype(jnp.float32)

  def meet():
    met = pl.get_global(plgpu.SemaphoreType.REGULAR)
    plgpu.barrier_arrive(met)
    plgpu.barrier_wait(met)

  jax.lax.cond(flag_ref[0] > 0, meet, lambda: None)
  o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg", scratch_types=[plgpu.SMEM((1,), jnp.float32)])
""", "how many warpgroups arrive on the barrier per phase is not provable"),
    # A scratch semaphore used as a barrier and signalled too: what it was meant to be is not known.
    "a scratch semaphore both signalled and used as a barrier": ("PAL006", """
def body(x_ref, o_ref, flag):
  pl.semaphore_signal(flag)
  plgpu.barrier_wait(flag)
  o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])
""", "the semaphore is also used as a semaphore"),
    # Several blocks wait: each would take every signal, so a count of all of them would hang.
    "a counter waited on by every block but the first": ("PAL006", """
def body(x_ref, o_ref):
  i = jax.lax.axis_index("i")
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @pl.when(i == 0)
  def _():
    pl.semaphore_signal(done)

  @pl.when(i != 0)
  def _wait():
    plgpu.barrier_wait(done)

  o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X, grid=(4,), grid_names=("i",))
""", "the semaphore is also used as a semaphore; the wait is not in one block (pl.when(axis_index(axis) == k) for "
     "every grid axis)"),
    # A signal in a loop: how many times it runs is not followed.
    "a counter signalled in a loop": ("PAL006", """
def body(x_ref, o_ref):
  i = jax.lax.axis_index("i")
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  for _ in range(2):
    pl.semaphore_signal(done)

  @pl.when(i == 0)
  def _wait():
    plgpu.barrier_wait(done)

  o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X, grid=(4,), grid_names=("i",))
""", "the semaphore is also used as a semaphore; how many signals the semaphore gets is not provable"),
    # A wait for two "signals" of a barrier has no barrier meaning.
    "a barrier waited on for a count of two": ("PAL013", """
def body(x_ref, o_ref, tile, bar):
  plgpu.copy_gmem_to_smem(x_ref, tile, bar)
  pl.semaphore_wait(bar, 2)
  o_ref[...] = tile[...]

k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier()])
""", "the wait is for more than one signal, which has no barrier meaning"),
    # With warpgroups, sharing the run_scoped buffer among them (the thread axis) or not is a choice.
    "a run_scoped buffer over the grid axis in a kernel with warpgroups": ("PAL007", """
def body(x_ref, o_ref):
  def staged(tile):
    tile[...] = x_ref[...]
    o_ref[...] = tile[...]

  pl.run_scoped(staged, plgpu.SMEM((128,), jnp.float32), collective_axes="b")

k = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("b",), num_threads=2, thread_name="wg")
""", "the kernel has warpgroups: whether they share the allocation is a choice"),
}


@pytest.mark.parametrize("name", CASES)
def test_only_noqa_is_offered_with_the_reason(ws, name):
    from pallas_lsp.fixes import fixes_and_reason

    code, source, reason = CASES[name]
    findings = [f for f in ws.findings("kernel.py", HEADER + source) if f.code == code]
    assert findings, "the case must have a finding"
    for finding in findings:
        fixes, why = fixes_and_reason(ws.project, finding)
        assert [fix.title for fix in fixes] == [f"pallas-lsp ({code}): Disable {code} for this line"]
        assert why == reason


def test_a_barrier_signalled_as_a_semaphore_is_reported_without_a_rewrite(ws):
    """`pl.semaphore_signal(barrier)`: JAX refuses it (PAL013); whether it is one more arrival is not known."""
    from pallas_lsp.fixes import fixes_and_reason

    source = HEADER + """
def body(x_ref, o_ref, tile, bar):
  plgpu.copy_gmem_to_smem(x_ref, tile, bar)
  pl.semaphore_signal(bar)
  plgpu.barrier_wait(bar)
  o_ref[...] = tile[...]

k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier()])
"""
    (finding,) = ws.findings("kernel.py", source)
    assert finding.code == "PAL013" and "plgpu.barrier_arrive(barrier)" in finding.message
    assert fixes_and_reason(ws.project, finding)[1] == (
        "a signal of a barrier may or may not be one of the arrivals its num_arrivals counts")
