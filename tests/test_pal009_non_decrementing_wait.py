"""PAL009: `pl.semaphore_wait(..., decrement=False)` where TPU code runs it: exact diagnostics, and JAX's IR
for the silent case."""

import json
import subprocess

import pytest

from conftest import FIXTURES, REPO, at, jax_python

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
"""
WAIT = "pl.semaphore_wait(sem, 1, decrement=False)"
BODY = f"def body(x_ref, o_ref, sem):\n    pl.semaphore_signal(sem)\n    {WAIT}\n\n"
TPU_SCRATCH = "scratch_shapes=[pltpu.SemaphoreType.REGULAR]"
ERROR = ('JAX: "NotImplementedError: Non-decrementing wait is not supported."; wait, then pl.semaphore_signal the '
         "value back. The TPU interpreter implements only waits that decrement the semaphore.")
SILENT = ("TPU ignores decrement=False: this wait decrements, with no error; wait, then pl.semaphore_signal the value "
          'back. JAX\'s check ("Non-decrementing wait is not supported.") never fires when compiling: the TPU lowering '
          "gets decrement as an MLIR value, always true, and emits tpu.sem_wait, which decrements. The TPU interpreter "
          "raises that error for the same wait.")


INTERPRETED = ERROR, "error"
COMPILED = SILENT, "warning"


@pytest.mark.parametrize("launch,expected", [
    (f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, interpret=pltpu.InterpretParams())\n", INTERPRETED),
    (f"P = pltpu.InterpretParams(detect_races=True)\nk = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, interpret=P)\n",
     INTERPRETED),
    (f"pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())\nk = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH})\n",
     INTERPRETED),
    (f"def run(x):\n    with pltpu.force_tpu_interpret_mode():\n        return pl.pallas_call(body, out_shape=X, {TPU_SCRATCH})(x)\n",
     INTERPRETED),
    # Compiled for a TPU, the wait silently decrements.
    (f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, compiler_params=pltpu.CompilerParams())\n", COMPILED),
    (f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, compiler_params=pltpu.CompilerParams(), interpret=False)\n",
     COMPILED),
])
def test_reported_with_the_severity_of_what_runs_it(ws, launch, expected):
    message, severity = expected
    source = HEADER + BODY + launch
    assert ws.check(source=source) == [("PAL009", at(source, WAIT), message)]
    assert [(f.code, f.severity) for f in ws.findings(source=source)] == [("PAL009", severity)]


def test_through_a_helper_and_a_constant(ws):
    source = HEADER + ("KEEP = False\n\ndef peek(s):\n    pl.semaphore_wait(s, 2, decrement=KEEP)\n\n"
                       "def body(x_ref, o_ref, sem):\n    peek(sem)\n\n"
                       f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, interpret=pltpu.InterpretParams())\n")
    assert ws.check(source=source) == [("PAL009", at(source, "pl.semaphore_wait(s, 2, decrement=KEEP)"), ERROR)]


@pytest.mark.parametrize("source", [
    # Mosaic GPU lowers a non-decrementing wait (a load loop); interpret=True discharges it faithfully.
    BODY + "k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])\n",
    BODY + f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, interpret=True)\n",
    # A decrementing wait, or a value not known statically.
    BODY.replace("decrement=False", "decrement=True")
    + f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, interpret=pltpu.InterpretParams())\n",
    BODY.replace("decrement=False", "decrement=flag")
    + f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, interpret=pltpu.InterpretParams())\n",
])
def test_not_reported(ws, source):
    assert ws.check(source=HEADER + "flag = object()\n" + source) == []


@pytest.mark.jax
def test_jax_compiles_the_wait_as_a_decrementing_one():
    """The warning's claim, from JAX itself: the TPU lowering raises nothing and emits tpu.sem_wait (a decrement)."""
    fixture = FIXTURES / "silent" / "tpu_nondecrementing_wait.py"
    assert "decrement=False" in fixture.read_text()
    run = subprocess.run([jax_python(), str(REPO / "tests" / "jax_truth.py"), str(fixture)],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert json.loads(run.stdout)[str(fixture)]["ok"] is True, run.stderr[-2000:]
    mosaic = run.stderr[run.stderr.index("func.func @copy_kernel"):]  # debug=True prints the Mosaic module
    assert "tpu.sem_wait %sem" in mosaic.split("func.func @main")[0]


def test_silent_fixture_gets_the_warning(ws):
    fixture = FIXTURES / "silent" / "tpu_nondecrementing_wait.py"
    source = fixture.read_text()
    assert ws.check(source=source) == [("PAL009", at(source, "pl.semaphore_wait(sem, 1, decrement=False)"), SILENT)]


def test_a_helper_in_another_module_is_reported_there(ws):
    helper = "from jax.experimental import pallas as pl\n\ndef peek(s):\n    pl.semaphore_wait(s, 1, decrement=False)\n"
    ws.write("helpers.py", helper)
    ws.write("kernel.py", HEADER + "from helpers import peek\n\ndef body(x_ref, o_ref, sem):\n    peek(sem)\n\n"
             f"k = pl.pallas_call(body, out_shape=X, {TPU_SCRATCH}, interpret=pltpu.InterpretParams())\n")
    assert ws.check("helpers.py") == [("PAL009", at(helper, "pl.semaphore_wait(s, 1, decrement=False)"), ERROR)]
    assert ws.check("kernel.py") == []
