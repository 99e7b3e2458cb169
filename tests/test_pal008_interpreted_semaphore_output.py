"""PAL008 reports a semaphore a pallas_call returns in `pltpu.SEMAPHORE` (the split async copy's way, which a TPU
compiles) when an interpreter certainly runs the kernel: the TPU interpreter fills the outputs with NaN first
(`nan + semaphore`, `nan + dma_sem`), `interpret=True` with `full`; the out_shape may come from a dataclass
method. The same launch compiled for a TPU is left alone. Each source is run through real JAX
(`tests/jax_truth.py`) and the two must agree on which fail, with the quote the finding gives."""

import pytest

from conftest import jax_truth

pytestmark = pytest.mark.jax

TEMPLATE = """\
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class Outputs:
  values: jax.ShapeDtypeStruct
  flag: object = pltpu.SemaphoreType.{kind}

  def shapes(self):
    return (self.values, self.flag)


def _body(x_ref, o_ref, flag_ref):
  o_ref[...] = x_ref[...] + 1.0


def launch(x):
  outs = Outputs(jax.ShapeDtypeStruct(x.shape, x.dtype))
  values, _flag = pl.pallas_call(
      _body, out_shape=outs.shapes(), grid=(2,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
      out_specs=(pl.BlockSpec((8, 128), lambda i: (i, 0)), pl.BlockSpec(memory_space=pltpu.SEMAPHORE)),
      {interpret})(x)
  return values


def target():
  return launch, ({args},), "{mode}"
"""

CONCRETE = "jnp.zeros((16, 128), jnp.float32)"
ABSTRACT = "jax.ShapeDtypeStruct((16, 128), jnp.float32)"
SOURCES = {
    "tpu_interpreter_regular.py": (TEMPLATE.format(kind="REGULAR", interpret="interpret=pltpu.InterpretParams(),",
                                                   args=CONCRETE, mode="interpret"), "nan + semaphore"),
    "interpret_true_dma.py": (TEMPLATE.format(kind="DMA", interpret="interpret=True,", args=CONCRETE,
                                              mode="interpret"), "'AbstractSemaphoreTyRules' has no attribute 'full'"),
    "compiled_tpu_regular.py": (TEMPLATE.format(kind="REGULAR", interpret="", args=ABSTRACT, mode="tpu"), None),
}


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
  folder = tmp_path_factory.mktemp("interpreted_semaphore_output")
  for name, (source, _) in SOURCES.items():
    (folder / name).write_text(source)
  return jax_truth([folder / name for name in SOURCES])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_reported_exactly_where_an_interpreter_refuses_the_semaphore_output(ws, truth, name):
  source, quote = SOURCES[name]
  found = [(code, message) for code, _, message in ws.check(name, source)]
  if quote is None:
    assert truth[name]["ok"], truth[name]
    assert found == []
    return
  assert quote in truth[name]["message"]
  assert [code for code, _ in found] == ["PAL008"] and quote in found[0][1], found
