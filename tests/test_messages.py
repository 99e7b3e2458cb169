"""What every message's first sentence holds (issue 25 §4): JAX's words and what to do, and JAX's
words only once; the scratch keyword named is the one the kernel's own launch takes."""

from __future__ import annotations

import re

import pytest

from conftest import REPO
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

FIXTURES = sorted((REPO / "tests" / "fixtures" / "agreement").glob("*.py")) + sorted(
    (REPO / "examples" / "kernels").glob("*.py"))
QUOTED = re.compile(r'^JAX(?:, [^:"]+)?: "(?P<quote>(?:[^"\\]|\\.)*)"; (?P<todo>[^.]+)\.')


@pytest.fixture(scope="module")
def messages(jax_env) -> list[tuple[str, str, str]]:
    found = []
    for path in FIXTURES:
        project = Project(root=str(path.parent), python=jax_env)
        found += [(path.name, f.code, f.message) for f in analyze(project, str(path))]
    return found


def test_the_fixtures_give_messages_of_every_rule_that_quotes_jax(messages):
    assert {code for _, code, _ in messages} >= {f"PAL00{n}" for n in range(1, 10)} | {"PAL010", "PAL011", "PAL012"}


def test_jax_is_quoted_once_in_the_first_sentence(messages):
    """`JAX: "<exception>"; <what to do>. <details>`: the details never repeat the quote (nor the
    exception's own words with another prefix)."""
    twice = []
    for name, code, message in messages:
        found = QUOTED.match(message)
        if found is None:
            continue
        words = [w for w in re.split(r"\.\.\.", re.sub(r"^\w+(Error|Exception): ", "", found["quote"])) if len(w.strip()) > 20]
        rest = message[found.end():]
        if any(w.strip() in rest for w in words):
            twice.append((name, code, message))
    assert twice == []


def test_messages_name_one_scratch_keyword_where_the_launch_is_known(messages):
    """Naming both keywords is left to a get_global no launch reaches (PAL001 then lists each kind's)."""
    both = [(name, code) for name, code, message in messages
            if "scratch_types" in message and "scratch_shapes" in message]
    assert both == []


def test_pal003_on_a_tpu_pl_kernel_names_scratch_types(jax_env):
    path = REPO / "tests" / "fixtures" / "agreement" / "bad_tpu_tensorcore_mesh.py"
    (finding,) = analyze(Project(root=str(path.parent), python=jax_env), str(path))
    assert finding.code == "PAL003"
    assert finding.message.startswith('JAX: "Unimplemented primitive in Pallas TPU lowering for tc: get_global"; use a '
                                      'scratch_types semaphore. pl.kernel with a ')
    assert "scratch_shapes" not in finding.message


def test_pal008_quotes_the_ir_type_error_for_a_semaphore_bound_into_a_launched_body(ws):
    """A get_global of a jitted launcher bound into the body with functools.partial: jax 0.12 says 'TypeError: No
    ir_type_handler for aval type' (bench/apart_fixes2/jitted_launch_partial_sem), not 'Cannot lower jaxpr with
    effects'."""
    (finding,) = ws.findings("kernel.py", """\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _body(sem, x_ref, o_ref):
  o_ref[...] = x_ref[...]
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


@jax.jit
def launch(x):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  body = functools.partial(_body, sem)
  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
""")
    assert finding.code == "PAL008"
    assert finding.message.startswith('JAX: "TypeError: No ir_type_handler for aval type"')
