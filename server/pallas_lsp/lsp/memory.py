"""Giving memory back to the system: a big document's text and model are made again at every edit."""

from __future__ import annotations

import contextlib
import gc
import logging




log = logging.getLogger(__name__)

# Analyses between two full collections of what `settle_heap` set aside.
FULL_COLLECTION_EVERY = 50
_settled = [0]
# Python collects its youngest generation every 700 allocations and the whole heap once it has grown by
# a quarter: a file's first analysis allocates what it keeps (its model and those of the modules it
# reads, their answers: the heap grows from 40 to 150 MiB), and those collections walked it again and
# again, a quarter of the first analysis of jax-linear-attention's biggest kernel file (490 of 1,770 ms
# CPU; 90 ms with these). `check` collects as rarely (check_jobs.BATCH_GC_THRESHOLD). A keystroke's
# analysis keeps Python's own (a collection of a million young objects would land inside one).
FIRST_ANALYSIS_GC_THRESHOLD = (50_000, 20, 20)


# The thresholds a first analysis left for `settle_heap` to restore (`collecting_less_often(until_settled=True)`).
_restore_at_settle: list[tuple[int, ...]] = []


@contextlib.contextmanager
def collecting_less_often(until_settled: bool = False):
    """Meanwhile fewer automatic garbage collections (a file's first analysis: above); what became garbage
    is collected between analyses (`settle_heap`). `until_settled`: Python's thresholds come back in
    `settle_heap` (the server calls it once the diagnostics are out), not at the end: restored there, the
    next allocation collected the analysis's young objects (jla's first pass: 0.13 s of CPU, about a tenth of it)
    before its diagnostics went out."""
    before = _restore_at_settle[0] if _restore_at_settle else gc.get_threshold()
    gc.set_threshold(*FIRST_ANALYSIS_GC_THRESHOLD)
    try:
        yield
    finally:
        if until_settled:
            _restore_at_settle[:] = [before]
        else:
            _restore_at_settle.clear()
            gc.set_threshold(*before)


def restore_collections() -> None:
    """Python's thresholds back after a first analysis (`collecting_less_often(until_settled=True)`), and
    the collection they would have started at once: the analysis's young objects, its garbage found."""
    if _restore_at_settle:
        gc.set_threshold(*_restore_at_settle.pop())
        gc.collect(1)


def settle_heap() -> None:
    """Between analyses: what they keep (models, answers: 750k objects for a kernel file of a big
    package) is set aside from Python's automatic collections (`gc.freeze`), which otherwise walked
    all of it every twenty keystrokes or so (300 ms, inside a keystroke's analysis). Every
    `FULL_COLLECTION_EVERY` calls the cycles that became garbage meanwhile (a model dropped, answers
    forgotten: ~70 objects a keystroke) are collected, here, between analyses."""
    restore_collections()
    _settled[0] += 1
    if _settled[0] % FULL_COLLECTION_EVERY == 0:
        gc.unfreeze()
        gc.collect()
    gc.freeze()


def give_big_blocks_back_when_freed() -> None:
    """glibc raises its mmap threshold each time a big block is freed, so the next big strings (a
    document's whole text, made again at every edit) come from the heap and their memory stays with
    the process; a fixed threshold gives each back when freed (a 5.6 MB document after ten edits:
    +27 MiB -> +11 MiB). Elsewhere (no glibc) nothing changes."""
    import ctypes

    try:
        ctypes.CDLL(None).mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD, glibc's default value, now fixed
    except (OSError, AttributeError):
        pass


def give_freed_memory_back() -> None:
    """After a big document's whole model is dropped: the heap's free pages go back to the system
    (glibc keeps them otherwise; a 5 MB module's model is ~400 MiB). No-op without glibc."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
