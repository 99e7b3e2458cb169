"""`pl.get_global` handed to a higher-order call: `jax.tree.map(pl.get_global, buffers.types())`.

JAX calls get_global once per leaf of the tree, in `jax.tree` flatten order (a dict's keys sorted), so
the first leaf it rejects is the one its error names (jax 0.12, Mosaic GPU: "get_global only supports
semaphores, got Ref<smem>{float32[64,128]}"). Only the kernels whose body holds the call lexically are
said to reach it: the leaf types and the backend must both be known for a finding.
"""

from __future__ import annotations

import ast

from .values import Api, Mapping, Seq, Value

_TREE_MAPS = ("jax.tree.map", "jax.tree_util.tree_map")


def mapped_get_globals(project, model) -> list[tuple[ast.Call, list[Value]]]:
    """(call, leaves in the order JAX calls get_global on them) for each `jax.tree.map(pl.get_global, tree)`
    of `model` whose tree is known; leaves of a tree not known statically make no entry."""
    if not model.mentions("get_global") or not model.mentions("map"):
        return []
    found = []
    for node in ast.walk(model.tree):
        if not (isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords):
            continue
        callee = project.evaluator.value(model, node.func)
        if not (isinstance(callee, Api) and callee.name in _TREE_MAPS):
            continue
        mapped = project.evaluator.value(model, node.args[0])
        if not (isinstance(mapped, Api) and mapped.name == "pl.get_global"):
            continue
        leaves = _leaves(project.evaluator.value(model, node.args[1]))
        if leaves:
            found.append((node, leaves))
    return found


def _leaves(tree: Value) -> list[Value] | None:
    if isinstance(tree, Mapping):
        keys = [key for key, _ in tree.items]
        if not all(isinstance(key, str) for key in keys):
            return None
        items = [value for _, value in sorted(tree.items, key=lambda item: item[0])]
    elif isinstance(tree, Seq):
        items = list(tree.items)
    else:
        return [tree]  # a single type is its own leaf
    leaves = []
    for item in items:
        inner = _leaves(item)
        if inner is None:
            return None
        leaves.extend(inner)
    return leaves


def kernels_holding(project, model, call: ast.AST, kernels) -> list:
    """The kernel models (of `kernels`) whose body function holds `call`."""
    bodies = {}
    for kernel in kernels:
        body = kernel.entry.body
        if body is not None and body.model is model:
            bodies.setdefault(id(body.node), []).append(kernel)
    node, holding = call, []
    while node is not None:
        holding.extend(bodies.get(id(node), []))
        node = model.parents.get(node)
    return holding
