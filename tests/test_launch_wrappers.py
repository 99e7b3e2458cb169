"""A call of a launch wrapper, a function or method that hands its `*args` and `**kwargs` on to a kernel factory,
is a launch of that factory with the same arguments (JAX's own Pallas tests launch every kernel so). Each form's
JAX verdict is an agreement fixture (`*launch_wrapper*`); here the forms JAX 0.12 cannot run: the base class
of JAX's own TPU tests, `jax._src.pallas.pallas_test_util.PallasTPUTest`, which newer JAX ships and which is read
from a JAX checkout's own source."""

from conftest import FIXTURES, at

# The shape of jax/_src/pallas/pallas_test_util.py in a JAX checkout (after 0.12), written here.
TEST_UTIL = """\
from jax._src.pallas import pallas_call as pl_lib


class PallasTest:
  INTERPRET: bool = False

  def pallas_call(self, *args, **kwargs):
    return pl_lib.pallas_call(*args, **kwargs, interpret=self.INTERPRET)


class PallasTPUTest(PallasTest):
  pass
"""

# The agreement fixture whose base class is a workspace module's, on JAX's own test case instead.
FIXTURE = (FIXTURES / "agreement" / "bad_launch_wrapper_method_of_base_class_in_other_module.py").read_text()
TEST = FIXTURE.replace("from pkg_helpers import test_cases", "from jax._src.pallas import pallas_test_util as ptu") \
    .replace("test_cases.PallasCase", "ptu.PallasTPUTest").replace("y_hbm_ref, sem)", "y_hbm_ref, {semaphore})")


def test_jax_checkouts_own_tpu_test_case_launches_the_kernel(ws):
    ws.write("jax/_src/pallas/__init__.py", "")
    ws.write("jax/_src/pallas/pallas_test_util.py", TEST_UTIL)
    bad = TEST.format(semaphore="sem")
    found = ws.check("tests/pallas/dma_test.py", bad)
    assert [(code, where) for code, where, _ in found] == [
        ("PAL005", at(bad, "pltpu.async_copy(x_hbm_ref, y_hbm_ref, sem)"))]
    assert found[0][2].startswith('JAX: "ValueError: Cannot signal on a non-()-shaped semaphore: (1,)"')
    assert ws.check("tests/pallas/dma_test.py", TEST.format(semaphore="sem.at[0]")) == []


def test_without_the_test_case_source_nothing_is_guessed(ws):
    """Where neither the workspace nor the analysed jax (0.12 has no pallas_test_util) holds the base class,
    `self.pallas_call` is not known: no kernel, and no finding."""
    assert ws.check("tests/pallas/dma_test.py", TEST.format(semaphore="sem")) == []


def test_a_launcher_taking_the_body_as_its_parameter_runs_it_in_the_kernel(ws):
    """jax-linear-attention's `_kernel(cfg, name, body, **kwargs)`, called for two kernels: each call is a launch of
    plgpu.kernel with that body and those keywords, so a get_global in a body is inside a kernel (PAL001, JAX's
    error: the agreement fixture) and not outside one (PAL008, which the launcher's own call of plgpu.kernel, its
    body one of several, gave)."""
    bad = (FIXTURES / "agreement" / "bad_launcher_body_parameter_get_global_barrier.py").read_text()
    found = ws.check("kernels.py", bad)
    assert [(code, where) for code, where, _ in found] == [
        ("PAL001", at(bad, "pl.get_global(plgpu.Barrier(num_arrivals=1))"))]
