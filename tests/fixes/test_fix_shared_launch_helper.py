"""A launch shared by several bodies through a helper's parameter gets its scratch from the calls passing the body
(golden cases `scratch_through_shared_launch_helper_*`); not where a call passes a body the analysis does not know
(the new scratch might reach it), nor for a method's launch (its calls bind `self` first)."""

KERNELS = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _double(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0


def _staged(x_ref, o_ref):
  stage = pl.get_global(pltpu.VMEM((8, 128), jnp.float32))
  stage[...] = x_ref[...]
  o_ref[...] = stage[...] + 1.0
"""

UNKNOWN_BODY = KERNELS + """

def _launch(kernel, x):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32), interpret=True)(x)


def run(x, extra):
  return _launch(extra, _launch(_staged, _launch(_double, x)))
"""

METHOD = KERNELS + """

class Runner:
  def launch(self, kernel, x):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32), interpret=True)(x)

  def run(self, x):
    return self.launch(_staged, self.launch(_double, x))
"""


def scratch_titles(ws, source):
  titles = []
  for finding in ws.findings("kernel.py", source):
    titles += [fix.title for fix in ws.fixes(finding) if "scratch" in fix.title]
  return titles


def test_a_call_passing_a_body_not_known_gets_no_helper_option(ws):
  assert not any("given by the calls" in title for title in scratch_titles(ws, UNKNOWN_BODY))


def test_a_method_launching_several_bodies_gets_no_helper_option(ws):
  assert not any("given by the calls" in title for title in scratch_titles(ws, METHOD))


def test_the_module_level_helper_gets_it(ws):
  source = UNKNOWN_BODY.replace("_launch(extra, ", "(").replace(", extra)", ")")
  assert any("given by the calls of _launch" in title for title in scratch_titles(ws, source))
