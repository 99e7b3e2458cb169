"""Where a kernel builder's scratch list is filled: the call site that fills it, not the builder.

    class KernelBuilder:                              kernel = (KernelBuilder(body)
        def with_scratch(self, *types):                         .with_scratch(plgpu.SMEM(...), plgpu.Barrier(...))
            self._scratch.extend(types)                         .build())
        def build(self):
            return plgpu.kernel(..., scratch_types=self._scratch)

A new scratch entry of one kernel belongs in that kernel's `.with_scratch(...)` call: added to `build()`, every
kernel the builder makes would get it, and each of their bodies one more parameter. Only where the list is
set empty in `__init__`, filled by methods that `extend` it with their `*types` alone, and read at the launch;
with one such call in the module. Several calls (kernels) are refused: which one the get_global's kernel is
is not known here.
"""

from __future__ import annotations

import ast
import builtins

from .cst_locate import CannotFix


def _self_attribute(node: ast.AST, self_name: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == self_name


def _first_param(method: ast.FunctionDef) -> str | None:
    params = [*method.args.posonlyargs, *method.args.args]
    return params[0].arg if params else None


def _collectors(cls: ast.ClassDef, attr: str, read: ast.Attribute) -> list[str] | None:
    """The methods of `cls` that only `self.attr.extend(types)` their `*types`; None where `self.attr` is used
    otherwise than that, set empty in `__init__`, and read at `read`."""
    collectors = []
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        self_name = _first_param(method)
        uses = [n for n in ast.walk(method) if self_name and _self_attribute(n, self_name, attr)]
        for use in uses:
            if use is read:
                continue
            parent = _parents(method).get(use)
            vararg = method.args.vararg.arg if method.args.vararg else None
            if isinstance(parent, ast.Attribute) and parent.attr == "extend" and vararg is not None:
                call = _parents(method).get(parent)
                if isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1 and not call.keywords \
                        and isinstance(call.args[0], ast.Name) and call.args[0].id == vararg:
                    collectors.append(method.name)
                    continue
            targets = parent.targets if isinstance(parent, ast.Assign) else [getattr(parent, "target", None)]
            if method.name == "__init__" and isinstance(parent, (ast.Assign, ast.AnnAssign)) and targets == [use] \
                    and isinstance(parent.value, (ast.List, ast.Tuple)) and not parent.value.elts:
                continue  # `self._scratch: list = []`
            return None
    return list(dict.fromkeys(collectors))


def _parents(function: ast.AST) -> dict:
    return {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}


def collecting_call(model, node: ast.AST, element: str) -> ast.Call | None:
    """The one `builder.with_scratch(...)` call of `model` that fills the builder's list `node` reads
    (`self._scratch` at the launch in `build()`), where `element` may be written there; None where the list is
    not such a builder's; CannotFix where it is, but the call to edit is not one."""
    method = model.enclosing_function(node)
    cls = model.parents.get(method) if method is not None else None
    if not (isinstance(node, ast.Attribute) and isinstance(cls, ast.ClassDef) and isinstance(method, ast.FunctionDef)
            and _self_attribute(node, _first_param(method) or "", node.attr)):
        return None
    collectors = _collectors(cls, node.attr, node)
    if not collectors:
        return None
    if any(isinstance(other, ast.ClassDef) and other is not cls and any(
            isinstance(m, ast.FunctionDef) and m.name in collectors for m in other.body) for other in ast.walk(model.tree)):
        return None  # another class's method of the same name: the calls are not known to be this builder's
    calls = [call for call in ast.walk(model.tree) if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
             and call.func.attr in collectors and model.enclosing_function(call) is not None
             and model.parents.get(model.enclosing_function(call)) is not cls]
    shown = f"{cls.name}.{collectors[0]}"
    if len(calls) > 1:
        raise CannotFix(f"the scratch list is filled by {shown}, called {len(calls)} times (for several kernels): "
                        f"which call is this kernel's is not known, and adding it in {cls.name} would give it to all")
    if not calls:
        return None
    call = calls[0]
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        raise CannotFix(f"the call of {shown} passes more than its types")
    function = model.enclosing_function(call)
    top = model.scopes[model.tree].bindings
    local = model.scopes[function].bindings
    for name in {n.id for n in ast.walk(ast.parse(element, mode="eval")) if isinstance(n, ast.Name)}:
        if name in local or (name not in top and not hasattr(builtins, name)):
            raise CannotFix(f"the scratch type names {name}, which is not the module's where {shown} is called")
    return call
