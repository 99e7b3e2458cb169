"""A kernel builder's scratch list (`scratch_types=self._scratch`, filled by `.with_scratch(*types)`): the new
entry goes into the one kernel's `.with_scratch(...)` call (goldens scratch_at_builder_call_site); a builder that
fills from several calls gets no scratch fix, since the entry in the builder would reach every kernel's body: the
buffer is allocated with `pl.run_scoped` where it stands instead (per block, as scratch is on a GPU)."""

from __future__ import annotations

from conftest import jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_and_reason

BUILDER = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 128), jnp.float32)


class Builder:

  def __init__(self, body):
    self.body = body
    self._scratch = []

  def with_scratch(self, *types):
    self._scratch.extend(types)
    return self

  def build(self):
    return plgpu.kernel(self.body, out_type=X, grid=(2,), grid_names=("b",), scratch_types=self._scratch)


def body(x_gmem, o_gmem, loaded):
  i = jax.lax.axis_index("b")
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  plgpu.copy_gmem_to_smem(x_gmem.at[i], tile, loaded)
  plgpu.barrier_wait(loaded)
  o_gmem[i] = tile[...] * 2.0


def target():
  kernel = Builder(body).with_scratch(plgpu.Barrier(num_arrivals=1)).build()
{other}  return kernel, (X,), "cuda"
'''


def _fixes(tmp_path, other: str):
    path = tmp_path / "k.py"
    path.write_text(BUILDER.format(other=other))
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = [f for f in analyze(project, str(path)) if f.code == "PAL001"]
    fixes, reason = fixes_and_reason(project, finding)
    return [f.title for f in fixes if f.kind == "rewrite"], reason


def test_the_one_kernel_of_a_builder_gets_the_entry_at_its_call(tmp_path):
    titles, _ = _fixes(tmp_path, "")
    assert titles == ["pallas-lsp (PAL001): Allocate tile as scratch (scratch_types)"]


def test_a_builder_of_two_kernels_gets_run_scoped_not_scratch(tmp_path):
    other = "  Builder(body).with_scratch(plgpu.Barrier(num_arrivals=1)).build()\n"
    titles, reason = _fixes(tmp_path, other)
    assert titles == ["pallas-lsp (PAL001): Allocate tile with pl.run_scoped for the rest of body"]
    assert reason is None  # a fix is offered: the scratch fix's refusal is not the answer
