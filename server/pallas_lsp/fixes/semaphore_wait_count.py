"""Fix (PAL006): a global counter other blocks signal, waited on with `plgpu.barrier_wait`, is waited with a count.

    @pl.when(split != 0)                          @pl.when(split != 0)
    def _report(): pl.semaphore_signal(done)      def _report(): pl.semaphore_signal(done)
    @pl.when(split == 0)                     ->   @pl.when(split == 0)
    def _collect(): plgpu.barrier_wait(done)      def _collect(): pl.semaphore_wait(done, jax.lax.axis_size("splits") - 1)

A `pl.get_global` semaphore signalled with `pl.semaphore_signal` counts signals across the grid (split-K
completion); a barrier orders arrivals within one block and cannot see them, and JAX refuses the semaphore there
("barrier must be a SMEM reference"). `pl.semaphore_wait(sem, n)` waits for n signals: n is counted from where the
signals are, each run by the blocks its `pl.when(axis_index(axis) == k)` (one block of the axis) or `!= k` (all
but one) lets through, `jax.lax.axis_size(axis)` blocks along an axis it does not test (checked with jax 0.12:
`semaphore_wait` takes `axis_size(...) - 1`). So the count means the same for every grid size. No fix where a
signal is in a loop, a helper or another condition, signals more than once, where the wait is not in one block
(`pl.when(axis_index(axis) == k)` for every grid axis: two waiters would each take every signal), where the
kernel has warpgroups or a cluster, or where the semaphore is used as a barrier in other ways (arrivals, copies).
"""

from __future__ import annotations

import ast

from ..analysis.kernel_model import thread_count
from ..analysis.values import Api, Const
from .kernel_edits import CannotFix, FixBuilder, replace_expression

_WHEN = "pl.when"


def fix(project, model, finding):
    facts = finding.facts
    kernel, call, use = facts.get("kernel"), facts.get("get_global"), facts.get("use")
    if kernel is None or call is None or use is None or facts.get("model") is not model:
        return None
    site = next((s for s in kernel.get_globals if s.call is call), None)
    uses = [u for u in site.uses if u.kind != "called"] if site is not None else []
    signals = [u for u in uses if u.kind == "signal"]
    if not signals or use.model is not model or _api(project, model, use.node.func) != "plgpu.barrier_wait":
        return None
    if site.memtype is None or site.memtype.shape != () or site.memtype.dtype != "semaphore":
        raise CannotFix("the semaphore is not one REGULAR semaphore")
    waits = [u for u in uses if u.kind == "barrier"]
    if any(u.kind not in ("signal", "barrier") for u in uses) or any(
            _api(project, u.model, u.node.func) != "plgpu.barrier_wait" for u in waits):
        raise CannotFix("the semaphore is used in other ways than signalled and waited on")
    if thread_count(project, kernel.entry) != 1 or kernel.cluster_axes != () or not kernel.grid_axes \
            or not all(kernel.grid_axes):
        raise CannotFix("only for a kernel with a named grid, no cluster and no warpgroups")
    body = kernel.entry.body
    counts = []
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    lax = imports.name("jax.lax")
    for signal in signals:
        blocks = _blocks(project, body, signal)
        if blocks is None or signal.indices != 0 or not _signals_once(project, signal.model, signal.node):
            raise CannotFix("how many signals the semaphore gets is not provable")
        counts.append(_count(blocks, kernel.grid_axes, lax))
    if any(_blocks(project, body, wait) != {axis: "one" for axis in kernel.grid_axes} for wait in waits):
        # Each wait takes its count: two blocks waiting for all the signals would wait for twice as many.
        raise CannotFix("the wait is not in one block (pl.when(axis_index(axis) == k) for every grid axis)")
    pallas = imports.name("jax.experimental.pallas")
    for wait in waits:
        if wait.model is not model or len(wait.node.args) != 1 or wait.node.keywords:
            raise CannotFix("the wait is written in another module, or with other arguments")
        ref = ast.get_source_segment(model.text, wait.node.args[0])
        replace_expression(builder, model, wait.node, f"{pallas}.semaphore_wait({ref}, {' + '.join(counts)})")
    return builder.fix(f"pallas-lsp ({finding.code}): Wait for the blocks' signals: "
                       f"pl.semaphore_wait({ast.get_source_segment(model.text, use.node.args[0])}, "
                       f"{' + '.join(counts)})", "safe", preferred=True)


def _count(blocks: dict[str, str], axes: tuple[str, ...], lax: str) -> str:
    """The number of blocks that run a signal, as code: a product over the grid axes."""
    factors = []
    for axis in axes:
        test = blocks.get(axis, "all")
        if test == "all":
            factors.append(f'{lax}.axis_size("{axis}")')
        elif test == "others":
            factors.append(f'({lax}.axis_size("{axis}") - 1)' if len(axes) > 1 else f'{lax}.axis_size("{axis}") - 1')
    return " * ".join(factors) or "1"


def _signals_once(project, model, node: ast.Call) -> bool:
    """`pl.semaphore_signal(sem)` (or `inc=1`): one signal, to this device."""
    if len(node.args) > 2 or any(k.arg != "inc" for k in node.keywords):
        return False
    inc = node.args[1] if len(node.args) == 2 else next((k.value for k in node.keywords), None)
    return inc is None or project.evaluator.value(model, inc) == Const(1)


def _blocks(project, body, use) -> dict[str, str] | None:
    """{grid axis: "one" or "others"} of the `pl.when` tests the use runs under, in nested functions of the
    body, straight-line there; None where another construct decides whether it runs, or how often."""
    model, node = use.model, use.node
    if model is not body.model:
        return None
    tests: dict[str, str] = {}
    while node is not body.node:
        parent = model.parents.get(node)
        if parent is None or isinstance(parent, (ast.If, ast.IfExp, ast.For, ast.While, ast.Try, ast.Match,
                                                 ast.With, ast.Lambda, ast.comprehension)):
            return None
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent is not body.node:
            test = _when_test(project, model, body, parent)
            if test is None or test[0] in tests:
                return None
            tests[test[0]] = test[1]
        node = parent
    return tests


def _when_test(project, model, body, function) -> tuple[str, str] | None:
    """(axis, "one" / "others") of the one `@pl.when(axis_index(axis) == k)` (or `!=`) decorating `function`, a
    function the body calls nowhere else."""
    if len(function.decorator_list) != 1 or any(isinstance(n, ast.Name) and n.id == function.name
                                                for n in ast.walk(body.node) if isinstance(n, ast.Name)
                                                and isinstance(n.ctx, ast.Load)):
        return None
    decorator = function.decorator_list[0]
    if not (isinstance(decorator, ast.Call) and _api(project, model, decorator.func) == _WHEN
            and len(decorator.args) == 1):
        return None
    condition = decorator.args[0]
    if not isinstance(condition, ast.Compare) or len(condition.ops) != 1:
        return None
    left, right = condition.left, condition.comparators[0]
    if isinstance(left, ast.Constant) or _axis_of(project, model, body, left) is None:
        left, right = right, left
    index = project.evaluator.value(model, right)  # `me == COLLECTOR`: a constant's value
    if not (isinstance(index, Const) and type(index.value) is int):
        return None
    axis = _axis_of(project, model, body, left)
    if axis is None or not isinstance(condition.ops[0], (ast.Eq, ast.NotEq)):
        return None
    return axis, "one" if isinstance(condition.ops[0], ast.Eq) else "others"


def _axis_of(project, model, body, node, depth: int = 0) -> str | None:
    """The axis of `lax.axis_index(axis)`, written there or assigned once in the body to the name `node` is."""
    if isinstance(node, ast.Name) and depth < 2:
        assigned = [value for s in ast.walk(body.node) if isinstance(s, ast.Assign) and len(s.targets) == 1
                    for target, value in _pairs(s.targets[0], s.value) if target.id == node.id]
        return _axis_of(project, model, body, assigned[0], depth + 1) if len(assigned) == 1 else None
    if not (isinstance(node, ast.Call) and (_api(project, model, node.func) or "").endswith("axis_index")
            and len(node.args) == 1 and not node.keywords):
        return None
    axis = project.evaluator.value(model, node.args[0])
    return axis.value if isinstance(axis, Const) and isinstance(axis.value, str) else None


def _pairs(target, value) -> list[tuple[ast.Name, ast.expr]]:
    """(name, value) of `a = v` and of `a, b = v, w`."""
    if isinstance(target, ast.Name):
        return [(target, value)]
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [(t, v) for t, v in zip(target.elts, value.elts) if isinstance(t, ast.Name)]
    return []


def _api(project, model, func) -> str | None:
    value = project.evaluator.value(model, func)
    return value.name if isinstance(value, Api) else None
