"""How many arrivals a barrier gets per phase in a warp-specialized Mosaic GPU kernel, where provable.

A `plgpu.Barrier(num_arrivals=n)` completes a phase after n arrivals; each warpgroup that runs a
`plgpu.barrier_arrive` (or a copy completing on the barrier) arrives once. A body run by every warpgroup
arrives `num_threads` times; one whose producer branch `pl.when(lax.axis_index("wg") == 0)` arrives
once per phase (jax's own pipelines size such barriers `num_arrivals=num_compute_wgs`). Sizing the barrier
by the thread count there would make the waiting warpgroup wait forever, so anything not provable here
(a helper's arrival, a condition that is not a test of the thread axis, a warpgroup that arrives at two
places) gives None: no fix.
"""

from __future__ import annotations

import ast

_WHEN = "pl.when"


def arrivals_per_phase(project, kernel, arrive_uses, threads: int) -> int | None:
    """Arrivals per phase of the barrier the `arrive_uses` arrive on; None where not provable."""
    if threads == 1:
        return 1
    body = kernel.entry.body
    axes = kernel.thread_axes
    axis = axes[0] if axes and len(axes) == 1 and axes[0] else None
    groups: list[frozenset[int]] = []
    for use in arrive_uses:
        arriving = _warpgroups(project, body, use, axis, threads)
        if arriving is None:
            return None
        groups.append(arriving)
    union: set[int] = set()
    for arriving in groups:
        if union & arriving:
            return None  # a warpgroup arriving at two places may arrive twice a phase, or once each phase
        union |= arriving
    return len(union) or None


def _warpgroups(project, body, use, axis: str | None, threads: int) -> frozenset[int] | None:
    """The warpgroups that run `use`; None where not provable (another condition, a helper called twice)."""
    return _runners(project, body, use.model, use.node, axis, threads, depth=0) if body is not None else None


def _runners(project, body, model, node, axis, threads, depth) -> frozenset[int] | None:
    arriving = frozenset(range(threads))
    while node is not body.node:
        parent = model.parents.get(node)
        if parent is None or depth > 3:
            return None
        if isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Try, ast.Match)):
            return None
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and parent is not body.node:
            if model is body.model and _inside(model, parent, body.node):
                narrowed = _function_condition(project, model, body, parent, axis, threads)
            else:  # a helper: the warpgroups that run its one call in the body
                narrowed = _helper_runners(project, body, model, parent, axis, threads, depth)
                if narrowed is not None:
                    return arriving & narrowed
            if narrowed is None:
                return None
            arriving &= narrowed
        node = parent
    return arriving


def _inside(model, node, ancestor) -> bool:
    while node is not None and node is not ancestor:
        node = model.parents.get(node)
    return node is ancestor


def _helper_runners(project, body, model, helper, axis, threads, depth) -> frozenset[int] | None:
    from ..analysis.values import Func

    if isinstance(helper, ast.Lambda):
        return None
    sites = [call for call in ast.walk(body.node) if isinstance(call, ast.Call)
             and isinstance(value := project.evaluator.value(body.model, call.func), Func) and value.node is helper]
    if len(sites) != 1:
        return None  # called twice, a warpgroup may arrive twice a phase; not called from the body: not seen
    return _runners(project, body, body.model, sites[0], axis, threads, depth + 1)


def _function_condition(project, model, body, function, axis, threads) -> frozenset[int] | None:
    """The warpgroups that run nested function `function`: narrowed by a `pl.when` that names it."""
    everyone = frozenset(range(threads))
    conditions = []
    for decorator in getattr(function, "decorator_list", []):
        if isinstance(decorator, ast.Call) and _api(project, model, decorator.func) == _WHEN and decorator.args:
            conditions.append(decorator.args[0])
        elif isinstance(decorator, ast.Call) and _api(project, model, decorator.func) in ("pl.loop", "plgpu.nd_loop"):
            continue
        else:
            return None
    name = getattr(function, "name", None)
    if isinstance(function, ast.Lambda) or name is None:
        return None
    arriving = everyone
    passed = {id(a) for call in ast.walk(body.node) if isinstance(call, ast.Call) for a in call.args}
    branch_items = {id(item): call for call in ast.walk(body.node) if isinstance(call, ast.Call)
                    and _api(project, model, call.func) in _SWITCH and len(call.args) > 1
                    and isinstance(call.args[1], (ast.List, ast.Tuple)) for item in call.args[1].elts}
    for call in ast.walk(body.node):  # `pl.when(c)(f)`, `lax.fori_loop(0, n, f, x)`, `lax.cond(p, f, g)`, ...
        if isinstance(call, ast.Name) and call.id == name and isinstance(call.ctx, ast.Load) \
                and id(call) not in passed and id(call) not in branch_items:
            return None  # called, or handed on some other way: who runs it is not followed
        if id(call) in branch_items:  # a branch of `lax.switch(i, [f, g])`
            runners = _branch_runners(project, model, body, branch_items[id(call)], axis, threads)
            if runners is None:
                return None
            arriving &= runners
        if not isinstance(call, ast.Call):
            continue
        if not any(isinstance(a, ast.Name) and a.id == name for a in call.args):
            continue
        inner = call.func
        if isinstance(inner, ast.Call) and _api(project, model, inner.func) == _WHEN and inner.args:
            conditions.append(inner.args[0])
        elif _api(project, model, inner) in _COND and call.args[0] is not None and not (
                isinstance(call.args[0], ast.Name) and call.args[0].id == name):
            runners = _branch_runners(project, model, body, call, axis, threads)
            if runners is None:
                return None
            arriving &= runners
        elif _api(project, model, inner) == "pl.run_scoped" and call.args[0] is not None and all(
                not (isinstance(a, ast.Name) and a.id == name) for a in call.args[1:]):
            # run at once, with its scratch, by every warpgroup that runs the run_scoped call
            runners = _runners(project, body, model, call, axis, threads, depth=1)
            if runners is None:
                return None
            arriving &= runners
        elif _api(project, model, inner) not in ("lax.fori_loop", "jax.lax.fori_loop"):
            return None  # a helper that decides when to call it: not provable
    for condition in conditions:
        narrowed = _thread_test(project, model, body, condition, axis, threads)
        if narrowed is None:
            return None
        arriving &= narrowed
    return arriving


_COND = ("lax.cond", "jax.lax.cond")
_SWITCH = ("lax.switch", "jax.lax.switch")


def _branch_runners(project, model, body, call, axis, threads) -> frozenset[int] | None:
    """The warpgroups that run a branch of `lax.cond(p, f, g)` / `lax.switch(i, [f, g])` in a phase it runs:
    every one that runs the call, where `p` / `i` is the same for all warpgroups (`uniform`); None otherwise."""
    if not _uniform(project, model, body, call.args[0]):
        return None
    return _runners(project, body, model, call, axis, threads, depth=1)


def _uniform(project, model, body, node) -> bool:
    """An expression every warpgroup computes alike: constants, and the body's refs read at constant indices,
    combined by operators and comparisons (`x_ref[0] > 0`, `(n_ref[0] % 2).astype(jnp.int32)`)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):  # an input of every launch: no warpgroup writes it
        return node.id in _inputs(project, body)
    if isinstance(node, ast.Subscript):
        return _uniform(project, model, body, node.value) and _uniform(project, model, body, node.slice)
    if isinstance(node, ast.Tuple):
        return all(_uniform(project, model, body, e) for e in node.elts)
    if isinstance(node, ast.Compare):
        return all(_uniform(project, model, body, e) for e in [node.left, *node.comparators])
    if isinstance(node, ast.BinOp):
        return _uniform(project, model, body, node.left) and _uniform(project, model, body, node.right)
    if isinstance(node, ast.UnaryOp):
        return _uniform(project, model, body, node.operand)
    if isinstance(node, ast.BoolOp):
        return all(_uniform(project, model, body, e) for e in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "astype":
        return _uniform(project, model, body, node.func.value) and len(node.args) == 1 and not node.keywords
    return False


def _inputs(project, body) -> set[str]:
    """The body's parameters every launch of it passes an operand (an input, not a scratch ref or an output)."""
    from ..analysis.kernel_args import kernel_parameters
    from .sites import launches

    entries = launches(project, body.model, body.node)
    names = [{p.node.arg for p in kernel_parameters(project, entry) if p.origin.startswith("operand ")}
             for entry in entries]
    return set.intersection(*names) if names else set()


def _thread_test(project, model, body, condition, axis, threads) -> frozenset[int] | None:
    """`axis_index(axis) == k` (or `!=`, either way round, through a name of the body): who passes it."""
    if axis is None or not isinstance(condition, ast.Compare) or len(condition.ops) != 1:
        return None
    left, right = condition.left, condition.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and type(right.value) is int and _is_thread_index(project, model, body, left, axis)):
        return None
    if isinstance(condition.ops[0], ast.Eq):
        return frozenset({right.value}) & frozenset(range(threads))
    if isinstance(condition.ops[0], ast.NotEq):
        return frozenset(range(threads)) - {right.value}
    return None


def _is_thread_index(project, model, body, node, axis) -> bool:
    if isinstance(node, ast.Name):
        assigned = [s.value for s in ast.walk(body.node) if isinstance(s, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == node.id for t in s.targets)]
        return len(assigned) == 1 and _is_thread_index(project, model, body, assigned[0], axis)
    return (isinstance(node, ast.Call) and (_api(project, model, node.func) or "").endswith("axis_index")
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == axis)


def _api(project, model, func) -> str | None:
    from ..analysis.values import Api

    value = project.evaluator.value(model, func)
    return value.name if isinstance(value, Api) else None
