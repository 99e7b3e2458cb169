"""Fixes on generated kernels nobody here wrote (issue 20): `check --fix --unsafe-fixes` on a seeded sample of
tests/kernel_generator/'s kernels, each judged by real JAX before and after (bench/fix_rate_generated.py
prints the same figures, per construct family, for larger samples).

No fix may make JAX fail for another reason, and no kernel JAX accepts may be changed. The number of
rejected kernels that end accepted by JAX with no finding left is at least the recorded one: a fix that
gets better raises FIXED_AT_LEAST here."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

pytestmark = [pytest.mark.jax, pytest.mark.slow]

SEED, COUNT = 0, 60
# The grammar's "meaningful" profile (the same draws, with what has no meaning to preserve written as a person
# writes it: docs/benchmarks.md, issue 20). The full grammar's floor was 21 of 53; 21 fixed there still.
PROFILE = "meaningful"
# 15 before ade92c1: since then PAL004 is not reported for a vmapped pl.kernel (the analysis takes vmap for
# a grid axis), so g0_00019's second error is not fixed, though JAX still raises PAL004's IndexError there.
# 20 since get_globals in a lambda called once, helpers with defaulted parameters, compiled pl.kernel's
# block-local buffers (pl.run_scoped) and unused semaphore outputs get fixes; 21 with fix-all trying a
# finding again after another fix changed the text (45d3b9a). With the meaningful profile: 32 of 50 (PAL006's
# barrier for several warpgroups and barrier arrays, PAL008's type names moving into the body). 39: Triton
# launches made plgpu.kernel, barriers under the GPU interpreter, helper-returned barriers (issue 20, fourth round).
# 41 (on 32 alone) with a decorated kernel's wrapper for unknown callers and fixes joined to PAL004's / PAL002's
# fix of what they would add. 40 (on 39) with scratch through another module's helper, a get_global outside any
# kernel, run_scoped collective_axes (fix20a, fourth round). 47 with all three (fix20a's tip on main faa2517).
# 48 with PAL001's fix joined to PAL006's relaunch of a Triton pallas_call (2026-12-04). 47 since "Run the kernel
# compiled" is refused where an environment variable decides interpret= (the runs that set it are on a CPU, where
# a compiled kernel fails 'Only interpret mode is supported on CPU backend'): one kernel whose semaphore is a
# barrier had no other fix. 45 since the barrier-as-scratch fix sizes `num_arrivals` only where the warpgroups
# that arrive per phase are proven (a handoff barrier sized by the thread count hangs): g0_00017 and g0_00018
# arrive inside `lax.cond` branch functions, which the count did not follow. 47 again since it follows them (a
# predicate every warpgroup computes alike: every warpgroup running the call arrives) and pl.run_scoped bodies.
FIXED_AT_LEAST = 47


# The semaphore family (issue 25's kernels, no get_global): its 57 kernels among seed 0's first 200, meaningful
# profile (one `.at[]` index per semaphore dimension there too). 9 of 17 fixed: PAL014's read-out values
# (`sem[...]` -> `sem`, every signal and wait of the same read) and PAL013's DMA semaphores only signalled and
# waited on (allocated REGULAR). 13 with the two joined where a DMA semaphore's value is signalled, and
# another module's constant made REGULAR (sem14). 15 with PAL009's wait, then signal back, under the TPU
# interpreter (sem9). 16 with a TPU semaphore returned in memory_space=pltpu.SEMAPHORE (sem8).
SEM_SEED, SEM_COUNT, SEM_KERNELS, SEM_FIXED_AT_LEAST = 0, 200, 57, 16


def test_fixes_of_generated_kernels_are_accepted_by_jax(tmp_path):
    from fix_rate_generated import measure

    result = measure(SEED, COUNT, tmp_path, profile=PROFILE)
    _check(result, COUNT, FIXED_AT_LEAST)


def test_fixes_of_generated_semaphore_family_kernels_are_accepted_by_jax(tmp_path):
    from fix_rate_generated import measure

    result = measure(SEM_SEED, SEM_COUNT, tmp_path, profile=PROFILE, family="semaphore")
    assert all("family:semaphore" in k["tags"] for k in result["kernels"])
    _check(result, SEM_KERNELS, SEM_FIXED_AT_LEAST)


def _check(result, count, fixed_at_least):
    kernels = result["kernels"]
    assert len(kernels) == count
    broke = {k["name"]: k["why"] for k in kernels if k["outcome"] == "broke"}
    clean_changed = {k["name"]: k["fixed_files"] for k in kernels if k["outcome"] == "clean_changed"}
    assert (broke, clean_changed) == ({}, {})
    for kernel in kernels:
        if kernel["outcome"] == "fixed":
            assert kernel["fixed_files"] and kernel["jax_after"] == "ok" and kernel["remaining"] == [], kernel
    total = result["summary"]["total"]
    assert total["rejected"] == sum(total[o] for o in ("fixed", "unfixed", "broke"))
    assert total["fixed"] >= fixed_at_least, result["summary"]["unfixed_reasons"]
