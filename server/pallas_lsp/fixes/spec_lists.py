"""The BlockSpecs a launch's `in_specs=` / `out_specs=` hold, where real code names the list.

Kernels with many operands build the list first (`in_specs = [qo_spec, kv_spec, kv_spec, ...]`, then
`pltpu.PrefetchScalarGridSpec(..., in_specs=in_specs)`, as jax's TPU flash attention does): a ref's block shape is
then the element of that list, when the list is what the name holds at the launch.
"""

from __future__ import annotations

import ast


def spec_elements(model, holder: ast.Call, written: ast.AST | None) -> list[ast.AST]:
    """The specs `written` (a keyword's value at `holder`, the launch or its grid spec) lists, one per ref: a list or
    tuple literal's elements; a name's, where the name is assigned a list or tuple literal once in the holder's own
    function and the list is not changed in place there (no `.append`, item assignment or `+=`); else `written`
    itself as one spec (a BlockSpec written or named as is)."""
    if isinstance(written, (ast.List, ast.Tuple)):
        return list(written.elts)
    if isinstance(written, ast.Name):
        listed = _named_list(model, written, holder)
        if listed is not None:
            return list(listed.elts)
    return [written] if written is not None else []


def _named_list(model, name: ast.Name, holder: ast.Call) -> ast.List | ast.Tuple | None:
    scope = model.scope_of(holder)
    binding = model.lookup(name.id, scope, holder.lineno)
    if (binding is None or binding.kind != "assign" or not isinstance(binding.value, (ast.List, ast.Tuple))
            or any(isinstance(e, ast.Starred) for e in binding.value.elts)
            or model.scope_of(binding.node) is not scope or len(model.scopes[scope].bindings.get(name.id, [])) != 1):
        return None
    for node in ast.walk(scope):
        if model.scope_of(node) is not scope:
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name.id:
            return None  # `in_specs.append(...)`, `in_specs.insert(0, ...)`
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name) and node.value.id == name.id:
            return None  # `in_specs[2] = ...`
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name.id:
            return None  # `in_specs += [...]`
    for element in binding.value.elts:  # each name in the list means at the launch what it meant there
        for inner in ast.walk(element):
            if isinstance(inner, ast.Name) and model.lookup(inner.id, model.scope_of(inner), inner.lineno) is not \
                    model.lookup(inner.id, scope, holder.lineno):
                return None
    return binding.value
