"""The launch that runs a function through objects and decorators (analysis/call_graph.py), and the fixes it
allows: where the call is ambiguous (a method a subclass overrides, a helper launches of two backends reach, a
decorated body also called directly), no fix that threads a parameter or edits a launch is offered."""

from __future__ import annotations

import pytest

GPU = """\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""

REACHED = {
    # a callable object called in the body runs its `__call__`
    "__call__": """
class Finish:
  def __call__(self, v, o_ref):
    o_ref[...] = v

def body(x_ref, o_ref):
  Finish()(x_ref[...], o_ref)

k = plgpu.kernel(body, out_type=X)
""",
    # `with` runs `__enter__` and `__exit__`
    "__enter__": """
class Stage:
  def __enter__(self):
    return 1
  def __exit__(self, *exc):
    return False

def body(x_ref, o_ref):
  with Stage():
    o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X)
""",
    # a method a mixin gives the subclasses of the body's class
    "widen": """
class Mixin:
  def widen(self, v):
    return v * 2.0

class Base:
  def body(self, x_ref, o_ref):
    o_ref[...] = self.widen(x_ref[...])
  def __call__(self, x):
    return plgpu.kernel(self.body, out_type=X)(x)

class Concrete(Mixin, Base):
  pass
""",
    # a function picked from a table in a loop, bound by a partial and run by pl.when
    "_role": """
def _role(lo, x_ref, o_ref):
  o_ref[...] = x_ref[...] + lo

TABLE = {0: functools.partial(_role, 0), 1: functools.partial(_role, 1)}

def body(x_ref, o_ref):
  i = jax.lax.axis_index("b")
  for key, role in TABLE.items():
    pl.when(i == key)(functools.partial(role, x_ref, o_ref))

k = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("b",))
""",
    # a decorator's wrapper runs in place of the decorated body
    "wrapped": """
def traced(fn):
  def wrapped(*refs):
    return fn(*refs)
  return wrapped

@traced
def body(x_ref, o_ref):
  o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X)
""",
    # the callable object handed to the launch is the body: its `__call__`
    "callable body": """
class Body:
  def __call__(self, x_ref, o_ref):
    o_ref[...] = x_ref[...]

k = plgpu.kernel(Body(), out_type=X)
""",
}


@pytest.mark.parametrize("name", REACHED)
def test_the_launch_reaches_functions_run_through_objects_and_decorators(ws, name):
    from pallas_lsp.analysis.kernels import KernelIndex, reachable_functions

    ws.findings("kernel.py", GPU + REACHED[name])
    model = ws.project.model(str(ws.root / "kernel.py"))
    [entry] = KernelIndex.of(ws.project, model).entries
    assert entry.body is not None
    reached = [getattr(f.node, "name", "<lambda>") for f in reachable_functions(ws.project, entry.body)]
    wanted = "__call__" if name == "callable body" else name
    assert wanted in reached


def test_an_object_passed_on_but_not_called_runs_nothing(ws):
    from pallas_lsp.analysis.kernels import KernelIndex, reachable_functions

    ws.findings("kernel.py", GPU + """
class Finish:
  def __call__(self, v):
    return v

def keep(f):
  return f

def body(x_ref, o_ref):
  keep(Finish())
  o_ref[...] = x_ref[...]

k = plgpu.kernel(body, out_type=X)
""")
    model = ws.project.model(str(ws.root / "kernel.py"))
    [entry] = KernelIndex.of(ws.project, model).entries
    assert "__call__" not in [getattr(f.node, "name", "") for f in reachable_functions(ws.project, entry.body)]


NOT_THREADED = {
    # `self.stage()` may run the subclass's own `stage`, which would not take the new parameter
    "a helper method a subclass overrides": """
class Base:
  def stage(self):
    buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    return buf

  def body(self, x_ref, o_ref):
    buf = self.stage()
    buf[...] = x_ref[...]
    o_ref[...] = buf[...]

  def __call__(self, x):
    return plgpu.kernel(self.body, out_type=X)(x)

class Other(Base):
  def stage(self):
    return pl.get_global(plgpu.SMEM((128,), jnp.float32))
""",
    # an abstract hook whose two implementations the body may run: only one asks for the buffer
    "a strategy with a sibling implementation": """
class Finish:
  def apply(self, v, o_ref):
    raise NotImplementedError

class Plain(Finish):
  def apply(self, v, o_ref):
    o_ref[...] = v

class Staged(Finish):
  def apply(self, v, o_ref):
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tile[...] = v
    o_ref[...] = tile[...]

def body(finish, x_ref, o_ref):
  finish.apply(x_ref[...], o_ref)

k = plgpu.kernel(functools.partial(body, Staged()), out_type=X)
""",
}


@pytest.mark.parametrize("name", NOT_THREADED)
def test_no_parameter_is_threaded_where_another_implementation_may_run(ws, name):
    findings = [f for f in ws.findings("kernel.py", GPU + NOT_THREADED[name]) if f.code == "PAL001"]
    assert findings
    for finding in findings:
        titles = [fix.title for fix in ws.fixes(finding)]
        assert not any("scratch" in title for title in titles), titles


def test_a_callable_object_two_backends_launch_gets_no_fix(ws):
    """One `__call__` reached by a Mosaic GPU launch and a TPU one: no one allocation fits both."""
    source = GPU + """
class Doubler:
  def __call__(self, x_ref, o_ref):
    tmp = pl.get_global(pltpu.VMEM((8, 128), jnp.float32))
    tmp[...] = x_ref[...] * 2.0
    o_ref[...] = tmp[...]

def gpu_body(x_ref, o_ref):
  Doubler()(x_ref, o_ref)

def tpu_body(x_ref, o_ref):
  Doubler()(x_ref, o_ref)

gpu = plgpu.kernel(gpu_body, out_type=X)
tpu = pl.pallas_call(tpu_body, out_shape=X)
"""
    findings = [f for f in ws.findings("kernel.py", source) if f.code == "PAL001"]
    assert findings
    for finding in findings:
        assert [fix.kind for fix in ws.fixes(finding)] == ["noqa"]


NO_DECORATOR_FIX = {
    # the decorated body is also called directly: without the decorator that call would lack its buffer
    "a decorated body also called directly": """
def staged(fn):
  def run(*refs):
    return fn(*refs, pl.get_global(plgpu.SMEM((128,), jnp.float32)))
  return run

@staged
def body(x_ref, o_ref, tmp):
  tmp[...] = x_ref[...]
  o_ref[...] = tmp[...]

k = plgpu.kernel(body, out_type=X)

def twice(x_ref, o_ref):
  body(x_ref, o_ref)
""",
    # the op keeps the body in a field that is also called outside the launch
    "a held body also called through its field": """
def staged(fn):
  def run(*refs):
    return fn(*refs, pl.get_global(plgpu.SMEM((128,), jnp.float32)))
  return run

@staged
def body(x_ref, o_ref, tmp):
  tmp[...] = x_ref[...]
  o_ref[...] = tmp[...]

class Op:
  def __init__(self, fn):
    self.fn = fn
  def __call__(self, x):
    return plgpu.kernel(self.fn, out_type=X)(x)
  def reference(self, x_ref, o_ref):
    return self.fn(x_ref, o_ref)

OP = Op(body)
""",
    # the wrapper does more than hand the buffer on
    "a wrapper that also computes": """
def staged(fn):
  def run(*refs):
    tmp = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tmp[...] = refs[0][...]
    return fn(*refs, tmp)
  return run

@staged
def body(x_ref, o_ref, tmp):
  o_ref[...] = tmp[...]

k = plgpu.kernel(body, out_type=X)
""",
    # the decorator's parameter is computed at the application, which the launch would run again
    "a decorator parameter that is a call": """
def sized(n):
  def decorate(fn):
    def run(*refs):
      return fn(*refs, pl.get_global(plgpu.SMEM((n,), jnp.float32)))
    return run
  return decorate

def make(width):
  @sized(max(width, 128))
  def body(x_ref, o_ref, tmp):
    tmp[...] = x_ref[...]
    o_ref[...] = tmp[...]
  return plgpu.kernel(body, out_type=X)
""",
}


@pytest.mark.parametrize("name", NO_DECORATOR_FIX)
def test_the_decorator_stays_where_its_removal_would_change_the_code(ws, name):
    findings = [f for f in ws.findings("kernel.py", GPU + NO_DECORATOR_FIX[name]) if f.code == "PAL001"]
    assert findings
    for finding in findings:
        assert not any("in place of the decorator" in fix.title for fix in ws.fixes(finding))


def test_a_keyword_only_default_is_no_scratch(ws):
    """JAX passes scratch by position: a keyword-only parameter's default is not where it lands."""
    source = GPU + """
def launch(x):
  def body(x_ref, o_ref, *, tmp=pl.get_global(plgpu.SMEM((128,), jnp.float32))):
    tmp[...] = x_ref[...]
    o_ref[...] = tmp[...]
  return plgpu.kernel(body, out_type=X)(x)
"""
    findings = [f for f in ws.findings("kernel.py", source) if f.code == "PAL001"]
    assert findings
    for finding in findings:
        assert not any("default of" in fix.title for fix in ws.fixes(finding))


NO_PARTIAL_KEYWORD_FIX = {
    # the dict of keywords is read again after the launch: its item must stay
    "a dict of keywords read twice": """
def _body(x_ref, o_ref, *, tmp):
  tmp[...] = x_ref[...]
  o_ref[...] = tmp[...]

def launch(x):
  extras = {"tmp": pl.get_global(plgpu.SMEM((128,), jnp.float32))}
  out = plgpu.kernel(functools.partial(_body, **extras), out_type=X)(x)
  print(extras)
  return out
""",
    # JAX's refs land in `*refs`, not in the keyword's parameter
    "a body taking *refs": """
def _body(*refs, tmp):
  tmp[...] = refs[0][...]
  refs[1][...] = tmp[...]

def launch(x):
  return plgpu.kernel(functools.partial(_body, tmp=pl.get_global(plgpu.SMEM((128,), jnp.float32))), out_type=X)(x)
""",
}


@pytest.mark.parametrize("name", NO_PARTIAL_KEYWORD_FIX)
def test_a_keyword_the_partial_binds_stays_where_scratch_would_not_reach_it(ws, name):
    findings = [f for f in ws.findings("kernel.py", GPU + NO_PARTIAL_KEYWORD_FIX[name]) if f.code == "PAL001"]
    assert findings
    for finding in findings:
        assert not any("which the launch's partial binds" in fix.title for fix in ws.fixes(finding))
