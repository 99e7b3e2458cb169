"""Fix (PAL001): a `get_global` of a buffer outside any kernel, in the function that launches one.

    def run(x):                                   def run(x):
        tmp = pl.get_global(plgpu.GMEM(...))   ->     tmp = jnp.zeros((128,), jnp.float32)
        return kernel(x, tmp)                         return kernel(x, tmp)

A buffer exists only inside a kernel; outside one, a global array the code hands to a launch is an
operand of that launch, and a global buffer starts as zeros (what `pass_as_input` gives a body too), so
the launch gets `jnp.zeros(shape, dtype)` in its place. Unsafe: an array, not one buffer shared by every
call, so what one launch writes the next one does not read. Only where the name is bound once and
only passed, as an argument, to kernel launches. A `get_global` whose result nothing reads is removed
(unsafe: code you wrote goes; it allocated nothing anyone reads, and JAX rejects it before running).
"""

from __future__ import annotations

import ast

from ..analysis.kernel_model import kernel_launches, models_reaching
from .kernel_edits import FixBuilder, remove_statement, replace_expression
from .pass_as_input import movable_array, zeros_code


def fix(project, model, call, value, code: str):
    if code != "PAL001":
        return None
    host = model.enclosing_function(call)
    statement = model.parents.get(call)
    if not (isinstance(host, ast.FunctionDef) and isinstance(statement, ast.Assign) and statement.value is call
            and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and statement in host.body):
        return None
    if any(site.call is call for _, site in models_reaching(project, model)):
        return None  # a kernel runs it: the fixes that move the buffer into the kernel apply
    name = statement.targets[0].id
    named = [n for n in ast.walk(host) if isinstance(n, ast.Name) and n.id == name]
    loads = [n for n in named if isinstance(n.ctx, ast.Load)]
    if len(named) - len(loads) != 1 or any(isinstance(a, ast.arg) and a.arg == name for a in ast.walk(host)):
        return None  # bound more than once
    builder = FixBuilder(project)
    if not loads:
        remove_statement(builder, model, statement)
        return builder.fix(f"pallas-lsp ({code}): Remove {name} = get_global(...), which nothing reads "
                           "(unsafe: it removes code)", "unsafe")
    array = movable_array(value)
    if array is None:
        return None
    launched = {id(launch.call) for launch in kernel_launches(project, model)}
    for load in loads:
        parent = model.parents.get(load)
        if not (isinstance(parent, ast.Call) and id(parent) in launched and load in parent.args):
            return None  # used otherwise outside the kernel: which kernel code it was meant for is not known
    shape, dtype, _ = array
    _, imports = builder.file(model)
    replace_expression(builder, model, call, zeros_code(imports, shape, dtype))
    return builder.fix(f"pallas-lsp ({code}): Pass {name} as an array of zeros, jnp.zeros, to the launch "
                       "(unsafe: a new array each call, not one buffer every call shares)", "unsafe")
