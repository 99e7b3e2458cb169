"""Semaphore and buffer reservations in the order JAX lowers them: what a kernel allocates, where the
first overflow is, and the total an estimate counts."""

from __future__ import annotations

from .allocations import Allocation


def estimate(allocations: tuple[Allocation, ...] | list[Allocation], block_local: bool = True) -> int:
    """What Mosaic GPU's resource estimator reserves for a kernel's get_global semaphores. Block-local ones (no
    grid and no cluster axes): the MAX over equations (`Resources.or_`), a run_scoped counting its own
    allocation plus its body. Global ones (a grid or a cluster): the SUM of the get_globals, each once."""
    if not block_local:
        return sum(a.size for a in flatten_allocations(allocations) if a.kind == "get_global" and not a.repeat)
    best = 0
    for allocation in allocations:
        size = allocation.size + estimate(allocation.body) if allocation.kind == "run_scoped" else allocation.size
        best = max(best, size)
    return best


def flatten_allocations(allocations):
    for allocation in allocations:
        yield allocation
        yield from flatten_allocations(allocation.body)


def first_overflow(allocations: tuple[Allocation, ...], block_local: bool = True) -> tuple[Allocation, int, int] | None:
    """The reservation at which lowering (which adds get_global reservations up and never releases them)
    exceeds the estimate: (allocation, semaphores reserved then, estimate), or None if none does. With a grid
    or a cluster the get_globals have a pool of their own (run_scoped semaphores are block-local)."""
    limit = estimate(allocations, block_local)
    used = 0

    def walk(items) -> tuple[Allocation, int, int] | None:
        nonlocal used
        for allocation in items:
            if not block_local and allocation.kind != "get_global":
                found = walk(allocation.body)
                if found:
                    return found
                continue
            used += allocation.size
            if used > limit:
                return allocation, used, limit
            if allocation.kind == "run_scoped":
                found = walk(allocation.body)
                if found:
                    return found
                used -= allocation.size
        return None

    return walk(allocations)
