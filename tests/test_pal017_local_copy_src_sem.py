"""PAL017: a local TPU copy given src_sem= in a TensorCore kernel, which jax 0.12 refuses as it lowers the copy
(agreement fixtures bad_local_copy_src_sem_*, bad_async_copy_src_sem_view_tpu, good_local_copy_*; the fixes are
golden cases src_sem_*). Each case below is cross-lowered for a TPU by real JAX too."""

import pytest

from conftest import at, jax_truth

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)
"""
START = 'JAX: "NotImplementedError: Source semaphore (`src_sem`) on a local copy ... on TensorCore."; drop src_sem.'
WAIT = 'JAX: "NotImplementedError: `wait_read` on a local copy ... is not implemented on TensorCore."; drop src_sem.'
VERIFIED = ('JAX: "VerificationError: ... device_id or core_id must be specified when source semaphore is specified"; '
            "drop src_sem.")


def launch(scratch="pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA", extra=""):
    return (f"k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, scratch_shapes=[{scratch}]{extra})\n"
            "\ndef target():\n  return k, (X,), 'tpu'\n")


# name -> (body, launch, the code reported, the message's first sentence)
REPORTED = {
    "make_async_copy, at its start": (
        "def body(x, o, r, s):\n  copy = pltpu.make_async_copy(x, o, r, src_sem=s)\n  copy.start()\n  copy.wait()\n\n",
        launch(), "copy.start()", START),
    "async_copy, which starts it": (
        "def body(x, o, r, s):\n  pltpu.async_copy(x, o, r, src_sem=s).wait_recv()\n\n", launch(),
        "pltpu.async_copy(x, o, r, src_sem=s)", START),
    "through a helper, from pl.run_scoped": (
        "def copy_in(x, o, r, s):\n  c = pltpu.make_async_copy(x, o, r, src_sem=s)\n  c.start()\n  c.wait()\n\n"
        "def body(x, o):\n  pl.run_scoped(lambda r, s: copy_in(x, o, r, s), pltpu.SemaphoreType.DMA, "
        "pltpu.SemaphoreType.DMA)\n\n", launch(""), "c.start()", START),
    "a copy only waited on: at its .wait()": (
        "def body(x, o, r, s):\n  pltpu.make_async_copy(x, o, r, src_sem=s).wait()\n\n", launch(),
        "pltpu.make_async_copy(x, o, r, src_sem=s).wait()", WAIT),
    "a copy only waited on for the write: Mosaic TPU's verifier": (
        "def body(x, o, r, s):\n  pltpu.make_async_copy(x, o, r, src_sem=s).wait_recv()\n\n", launch(),
        "pltpu.make_async_copy(x, o, r, src_sem=s).wait_recv()", VERIFIED),
}

QUIET = {
    "src_sem=None": "def body(x, o, r, s):\n  c = pltpu.make_async_copy(x, o, r, src_sem=None)\n  c.start()\n  c.wait()\n\n",
    "no src_sem": "def body(x, o, r, s):\n  pltpu.async_copy(x, o, r).wait()\n\n",
}


@pytest.mark.parametrize("name", list(REPORTED))
def test_a_local_copy_given_src_sem(ws, name):
    body, tail, reported, first = REPORTED[name]
    source = HEADER + "\n" + body + tail
    [(code, where, message)] = ws.check(source=source)
    assert (code, where) == ("PAL017", at(source, reported)) and message.startswith(first)


@pytest.mark.parametrize("name", list(QUIET))
def test_no_finding_without_a_send_semaphore_to_lower(ws, name):
    assert ws.check(source=HEADER + "\n" + QUIET[name] + launch()) == []


def test_the_interpreters_run_it(ws):
    body = REPORTED["make_async_copy, at its start"][0]
    for interpret in ("True", "pltpu.InterpretParams()"):
        assert ws.check(source=HEADER + "\n" + body + launch(extra=f", interpret={interpret}")) == []


def test_jax_before_0_12_has_no_src_sem_to_refuse(ws):
    """jax 0.11 has no `src_sem` on a local copy (docs/jax-versions.md): nothing to report for it."""
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze

    path = ws.write("kernel.py", HEADER + "\n" + REPORTED["make_async_copy, at its start"][0] + launch())
    project = Project(root=str(ws.root), python=ws.python)
    project._jax_version = (0, 11, 2)
    assert analyze(project, str(path)) == []


def test_jax_agrees_with_each_case(tmp_path):
    """Every case above, cross-lowered for a TPU: JAX fails with the quoted words where PAL017 is reported, and
    lowers the quiet ones."""
    cases = {}
    for index, (name, (body, tail, reported, first)) in enumerate(REPORTED.items()):
        cases[f"bad_{index}.py"] = (HEADER + "\n" + body + tail, reported, first)
    for index, body in enumerate(QUIET.values()):
        cases[f"good_{index}.py"] = (HEADER + "\n" + body + launch(), None, None)
    for file, (source, _, _) in cases.items():
        (tmp_path / file).write_text(source)
    truths = jax_truth([tmp_path / file for file in cases])
    for file, (source, reported, first) in cases.items():
        truth = truths[file]
        if reported is None:
            assert truth["ok"], (file, truth)
            continue
        quoted = f'{truth["exc_type"]}: {truth["message"]}'
        head, tail = first[len('JAX: "'):].split(" ... ")
        assert quoted.startswith(head.rstrip(":")) and tail.split('"')[0] in quoted, (file, truth)
        assert [loc["line"] for loc in truth["locations"]] == [int(at(source, reported).split(":")[0])], (file, truth)


def test_no_fix_where_the_descriptor_waits_for_the_read(ws):
    """`.wait_read()` waits on the send semaphore: without it there is nothing to wait on, so the fix is refused."""
    from pallas_lsp.fixes import fixes_and_reason

    source = HEADER + "\ndef body(x, o, r, s):\n  c = pltpu.make_async_copy(x, o, r, src_sem=s)\n  c.start()\n" \
        "  c.wait_read()\n  c.wait_recv()\n\n" + launch()
    [finding] = ws.findings(source=source)
    assert finding.code == "PAL017"
    assert fixes_and_reason(ws.project, finding)[1] == "the copy's .wait_read() waits on its send semaphore"
