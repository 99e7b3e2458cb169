"""PAL008 follows an out_type bound to a name (`out_type = {...}` then `out_type=out_type`) to the semaphore in
its dict or tuple display, where JAX refuses it ('Kernels cannot return semaphores'), and stays silent on the
twin whose caller allocates the semaphore with plgpu.alloc_semaphore. Each source is run through real JAX
(`tests/jax_truth.py`): the analyser's finding is on the semaphore's entry, JAX's error at the launch, and the
two must agree on which sources fail. The alloc_semaphore fix for a dict of outputs is offered only where the
dict stays in the caller (not where it is returned to the caller's caller, which would carry the ref out)."""

import pytest

from conftest import jax_truth

pytestmark = pytest.mark.jax

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128, 256), jnp.float32)


def _produce(x_ref, ready_ref, y_ref):
  y_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(ready_ref)


def _consume(y_ref, ready_ref, o_ref):
  pl.semaphore_wait(ready_ref)
  o_ref[...] = y_ref[...] + 1.0


def consume(outs):
  return plgpu.kernel(_consume, out_type=X)(outs["y"], outs["ready"])
"""

NAMED_DICT = HEADER + """

def produce(x):
  out_type = {
      "y": X,
      "ready": plgpu.SemaphoreType.REGULAR,
  }
  return plgpu.kernel(_produce, out_type=out_type)(x)


def pipeline(x):
  outs = produce(x)
  return consume(outs)


def target():
  return pipeline, (X,), "cuda"
"""

NAMED_DICT_ALLOCATED = HEADER + """

def produce(x, ready):
  out_type = {"y": X}
  return {**plgpu.kernel(_produce, out_type=out_type)(x, ready), "ready": ready}


def pipeline(x):
  outs = produce(x, plgpu.alloc_semaphore())
  return consume(outs)


def target():
  return pipeline, (X,), "cuda"
"""

NAMED_TUPLE = HEADER.replace("x_ref, ready_ref, y_ref", "x_ref, y_ref, ready_ref") + """

def pipeline(x):
  outputs = (X, plgpu.SemaphoreType.REGULAR)
  y, ready = plgpu.kernel(_produce, out_type=outputs)(x)
  return consume({"y": y, "ready": ready})


def target():
  return pipeline, (X,), "cuda"
"""

SOURCES = {"named_dict.py": NAMED_DICT, "named_dict_allocated.py": NAMED_DICT_ALLOCATED, "named_tuple.py": NAMED_TUPLE}


def semaphore_line(source: str) -> int:
  return next(i for i, row in enumerate(source.splitlines(), 1) if "plgpu.SemaphoreType.REGULAR" in row)


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
  folder = tmp_path_factory.mktemp("named_out_type")
  for name, source in SOURCES.items():
    (folder / name).write_text(source)
  return jax_truth([folder / name for name in SOURCES])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_finding_is_on_the_semaphore_entry_where_jax_refuses_the_launch(ws, truth, name):
  source = SOURCES[name]
  found = [(code, int(where.split(":")[0])) for code, where, _ in ws.check(name, source)]
  if truth[name]["ok"]:
    assert found == []
    return
  assert "Kernels cannot return semaphores" in truth[name]["message"]
  assert found == [("PAL008", semaphore_line(source))]


def dict_fix_titles(ws, source):
  titles = []
  for finding in ws.findings("kernel.py", source):
    titles += [fix.title for fix in ws.fixes(finding) if "alloc_semaphore" in fix.title]
  return titles


def test_the_dict_fix_is_offered_where_the_dict_stays_in_the_caller(ws):
  assert dict_fix_titles(ws, NAMED_DICT) == [
      'pallas-lsp (PAL008): Allocate "ready" with plgpu.alloc_semaphore before the launch and pass it in, '
      "not as an output of _produce"]


@pytest.mark.parametrize("returned", [
    "  outs = produce(x)\n  return consume(outs), outs\n",  # the dict goes to the caller's caller
    "  outs = produce(x)\n  return consume(outs), [v for v in outs.values()]\n",  # iterated: the ref with it
    "  outs = produce(x)\n  keep(outs['ready'])\n  return consume(outs)\n",  # the semaphore read by a non-kernel
])
def test_the_dict_fix_is_not_offered_where_the_ref_would_leave_the_kernels(ws, returned):
  source = NAMED_DICT.replace("  outs = produce(x)\n  return consume(outs)\n", returned) + "\n\ndef keep(sem):\n  return sem\n"
  assert returned in source
  assert [code for code, _, _ in ws.check("kernel.py", source)] == ["PAL008"]
  assert dict_fix_titles(ws, source) == []
