"""PAL015: a TPU copy waited on through its descriptor with a REGULAR (or BARRIER) semaphore (JAX's dma_wait takes
DMA semaphores only, checked while tracing; agreement fixtures bad_dma_wait_* and good_dma_regular_*)."""

import pytest

from conftest import at

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)
"""


def message(method="wait", kind="REGULAR"):
    """The words for a semaphore only copies use: the DMA semaphore first, JAX's own hint second."""
    return ('JAX: "ValueError: dma_wait requires a DMA semaphore, but got a regular semaphore."; allocate a '
            f"pltpu.SemaphoreType.DMA. Only copies use this {kind} semaphore, and the copy's .{method}() binds "
            "dma_wait, which takes a DMA semaphore only; JAX's hint, pl.semaphore_wait, waits on a copy only where it "
            "was started with a REGULAR semaphore (TPU v6 and later).")


def launch(scratch):
    return f"k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, scratch_shapes=[{scratch}])\n"


REPORTED = {
    "a scratch semaphore, the descriptor assigned": (
        "def body(x, o, sem):\n  copy = pltpu.make_async_copy(x, o, sem)\n  copy.start()\n  copy.wait()\n\n",
        "pltpu.SemaphoreType.REGULAR", "copy.wait()", message()),
    "a view of a semaphore array, waited on for the write": (
        "def body(x, o, sems):\n  copy = pltpu.make_async_copy(x, o, sems.at[1])\n  copy.start()\n"
        "  copy.wait_recv()\n\n", "pltpu.SemaphoreType.REGULAR((2,))", "copy.wait_recv()", message("wait_recv")),
    "pl.run_scoped, async_copy waited on at once (jax's test_dma_wait_with_regular_semaphore_raises)": (
        "def body(x, o):\n  def scoped(v, sem):\n    pltpu.async_copy(x, v, sem).wait()\n    o[...] = v[...]\n"
        "  pl.run_scoped(scoped, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.REGULAR)\n\n",
        "", "pltpu.async_copy(x, v, sem).wait()", message()),
    "the send semaphore, through a helper": (
        "def send(x, o, s, r):\n  copy = pltpu.make_async_remote_copy(x, o, s, r, device_id=0,\n"
        "                                     device_id_type=pl.DeviceIdType.LOGICAL)\n  copy.start()\n"
        "  copy.wait_recv()\n  copy.wait_send()\n\n"
        "def body(x, o, s, r):\n  send(x, o, s, r)\n\n",
        "pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA", "copy.wait_send()", message("wait_send")),
    "a barrier semaphore": (
        "def body(x, o, sem):\n  copy = pltpu.make_async_copy(x, o, sem)\n  copy.start()\n  copy.wait()\n\n",
        "pltpu.SemaphoreType.BARRIER", "copy.wait()", message(kind="BARRIER")),
    "tracing stops at the first wait": (
        "def body(x, o, sem):\n  copy = pltpu.make_async_copy(x, o, sem)\n  copy.start()\n  copy.wait()\n"
        "  copy.start()\n  copy.wait()\n\n", "pltpu.SemaphoreType.REGULAR", "copy.wait()", message()),
}


@pytest.mark.parametrize("name", list(REPORTED))
def test_a_copy_waited_on_with_a_regular_semaphore(ws, name):
    body, scratch, reported, expected = REPORTED[name]
    source = HEADER + "\n" + body + launch(scratch)
    assert ws.check(source=source) == [("PAL015", at(source, reported), expected)]
    (finding,) = ws.findings(source=source)
    assert finding.related[0].message.startswith("the semaphore, a ")


QUIET = {
    "a DMA semaphore and .wait()": (
        "def body(x, o, sem):\n  copy = pltpu.make_async_copy(x, o, sem)\n  copy.start()\n  copy.wait()\n\n",
        "pltpu.SemaphoreType.DMA"),
    "a REGULAR semaphore waited on with pl.semaphore_wait (jax's test_dma_with_regular_semaphore)": (
        "def body(x, o):\n  def scoped(v, sem):\n    pltpu.async_copy(x, v, sem)\n    pl.semaphore_wait(sem)\n"
        "    o[...] = v[...]\n"
        "  pl.run_scoped(scoped, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.REGULAR)\n\n", ""),
}


@pytest.mark.parametrize("name", list(QUIET))
def test_no_finding_where_dma_wait_gets_a_dma_semaphore_or_is_not_used(ws, name):
    body, scratch = QUIET[name]
    assert [f.code for f in ws.findings(source=HEADER + "\n" + body + launch(scratch))] == []


def test_a_semaphore_array_not_indexed_is_pal005_first(ws):
    source = HEADER + "\ndef body(x, o, sems):\n  copy = pltpu.make_async_copy(x, o, sems)\n  copy.start()\n" \
        "  copy.wait()\n\n" + launch("pltpu.SemaphoreType.REGULAR((2,))")
    assert [f.code for f in ws.findings(source=source)] == ["PAL005"]


def test_a_regular_send_semaphore_waited_on_by_hand_is_no_pal015_but_a_local_copy_with_src_sem(ws):
    """A REGULAR send semaphore, only the receive (DMA) one waited on through the copy (pl.semaphore_wait for the
    send one): no dma_wait of a REGULAR one, but the local copy's src_sem is refused as Mosaic TPU lowers it
    (jax 0.12: "Source semaphore (`src_sem`) on a local copy without device_id is not implemented on TensorCore.",
    checked by cross-lowering for tpu): PAL017, whose fix is not offered (nothing would signal the semaphore
    pl.semaphore_wait waits on)."""
    from pallas_lsp.fixes import fixes_and_reason

    source = HEADER + "\ndef body(x, o, s, r):\n  copy = pltpu.make_async_copy(x, o, r, src_sem=s)\n  copy.start()\n" \
        "  copy.wait_recv()\n  pl.semaphore_wait(s)\n\n" + launch("pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA")
    assert [(code, where) for code, where, _ in ws.check(source=source)] == [("PAL017", at(source, "copy.start()"))]
    [finding] = ws.findings(source=source)
    assert fixes_and_reason(ws.project, finding)[1] == "the send semaphore is used elsewhere too, where nothing would signal it"
