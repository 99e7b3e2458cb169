"""The split async copy of the Pallas TPU docs: one pallas_call returns a DMA semaphore through out_shape, the next
waits on it (exact diagnostics; each case's JAX verdict is an agreement fixture, `*split_copy*`)."""

import pytest

from conftest import at

SOURCE = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)
SEM = pl.BlockSpec(memory_space={space})


def start_body(x_ref, o_ref, sem):
  pltpu.make_async_copy(x_ref, o_ref, sem).start()


def wait_body(x_ref, sem, o_ref):
  {wait}


start = pl.pallas_call(start_body, out_shape=(X, {semaphore}), in_specs=[ANY], out_specs=(ANY, SEM))
finish = pl.pallas_call(wait_body, out_shape=X, in_specs=[ANY, SEM], out_specs=ANY, input_output_aliases={{0: 0}})


def run(x):
  y, sem = start(x)
  return finish(y, sem)
"""
WAIT = "pltpu.make_async_copy(x_ref, o_ref, sem).wait()"


@pytest.mark.parametrize("platform", ["gpu", "tpu"])
def test_the_pattern_jax_lowers_is_clean_whatever_the_platform(ws, platform):
    ws.write("pyproject.toml", f'[tool.pallas-lsp]\nplatform = "{platform}"\n')
    source = SOURCE.format(space="pltpu.SEMAPHORE", wait=WAIT, semaphore="pltpu.SemaphoreType.DMA")
    assert ws.check(source=source) == []


@pytest.mark.parametrize("platform", ["gpu", "tpu"])
def test_a_semaphore_returned_as_a_block_is_refused(ws, platform):
    ws.write("pyproject.toml", f'[tool.pallas-lsp]\nplatform = "{platform}"\n')
    source = SOURCE.format(space="pl.ANY", wait=WAIT, semaphore="pltpu.SemaphoreType.DMA")
    assert ws.check(source=source) == [(
        "PAL008", at(source, "pltpu.SemaphoreType.DMA"),
        'JAX: "The Pallas TPU lowering currently supports only blocks of rank >= 1"; give it '
        "memory_space=pltpu.SEMAPHORE. In out_specs, pl.BlockSpec(memory_space=pltpu.SEMAPHORE): a TPU pallas_call "
        "returns a semaphore (for the next kernel to wait on: the split async copy) only in the semaphore memory "
        "space; anywhere else it is taken for an array block. For a semaphore only this kernel uses, allocate it "
        "in scratch_shapes or with pl.run_scoped.")]


@pytest.mark.parametrize("wait,reported,code,words", [
    ("pltpu.make_async_copy(x_ref, o_ref, sem.at[0]).wait()", "sem.at[0]", "PAL005",
     'JAX: "ValueError: `indices` must not be longer than `shape`: ..., shape=()"; use 0 indexes.'),
    ("pltpu.make_async_copy(x_ref, o_ref, sem[...]).wait()", "pltpu.make_async_copy(x_ref, o_ref, sem[...]).wait()",
     "PAL010", 'JAX: "ValueError: Expected the destination semaphore to be a reference"; pass the ref sem, not sem[...].'),
    ("pl.semaphore_signal(sem)", "pl.semaphore_signal(sem)", "PAL013",
     'JAX: "ValueError: Must signal semaphores of the following types: {...}. Got dma_sem."; wait on the copy'),
    ("pl.semaphore_signal(sem[...])", "pl.semaphore_signal(sem[...])", "PAL014",
     'JAX: "ValueError: Cannot signal on a non-semaphore Ref: dma_sem[]"; pass the ref sem, not sem[...].'),
])
def test_the_waiting_kernels_semaphore_operand_is_checked(ws, wait, reported, code, words):
    source = SOURCE.format(space="pltpu.SEMAPHORE", wait=wait, semaphore="pltpu.SemaphoreType.DMA")
    found = ws.check(source=source)
    assert [(c, r) for c, r, _ in found] == [(code, at(source, reported))]
    assert found[0][2].startswith(words)


GRID_SPEC_SOURCE = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)


def start_body({prefetch}x_ref, o_ref, sem):
  pltpu.make_async_copy(x_ref, o_ref, sem).start()


start = pl.pallas_call(start_body, out_shape=(X, pltpu.SemaphoreType.DMA(())), grid_spec={grid_spec})
"""
GRID_SPECS = {
    "pl.GridSpec": ("", "pl.GridSpec(in_specs=[ANY], out_specs=(ANY, {spec}))"),
    "pltpu.PrefetchScalarGridSpec": (
        "index_ref, ", "pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, in_specs=[ANY], out_specs=(ANY, {spec}))"),
}


@pytest.mark.parametrize("constructor", GRID_SPECS)
def test_out_specs_in_a_grid_spec_are_the_launchs(ws, constructor):
    """The semaphore output's memory space written in the grid spec's out_specs: lowered in pltpu.SEMAPHORE,
    refused (a block of rank 0) in pl.ANY."""
    prefetch, grid_spec = GRID_SPECS[constructor]
    lowers = GRID_SPEC_SOURCE.format(prefetch=prefetch,
                                     grid_spec=grid_spec.format(spec="pl.BlockSpec(memory_space=pltpu.SEMAPHORE)"))
    assert ws.check(source=lowers) == []
    refused = GRID_SPEC_SOURCE.format(prefetch=prefetch, grid_spec=grid_spec.format(spec="ANY"))
    found = ws.check(source=refused)
    assert [(c, r) for c, r, _ in found] == [("PAL008", at(refused, "pltpu.SemaphoreType.DMA(())"))]
    assert found[0][2].startswith('JAX: "The Pallas TPU lowering currently supports only blocks of rank >= 1"')


def test_a_grid_spec_not_known_statically_is_not_taken_for_no_out_specs(ws):
    source = GRID_SPEC_SOURCE.format(prefetch="", grid_spec="make_grid_spec()").replace(
        "\n\nstart =", "\n\ndef make_grid_spec():\n  return make_grid_spec.cached\n\n\nstart =")
    assert ws.check(source=source) == []
