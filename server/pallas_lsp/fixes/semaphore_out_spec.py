"""Fix (PAL008): a TPU semaphore a `pallas_call` returns for the next one (the split async copy) gets
`memory_space=pltpu.SEMAPHORE`, in the producer's `out_specs` and in the consumer's `in_specs`.

    start = pl.pallas_call(start_body, out_shape=(X, pltpu.SemaphoreType.DMA),
        out_specs=(pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)))     # -> pltpu.SEMAPHORE
    wait = pl.pallas_call(wait_body, out_shape=X,
        in_specs=[pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)])      # -> pltpu.SEMAPHORE
    y, sem = start(x)
    return wait(y, sem)

Returned in any other memory space, a semaphore is taken for an array block (jax 0.12: "blocks of rank
>= 1" for a bare type, "unexpected input: dtype=dma_sem" for a shaped one), and taken in one by the next
kernel too: both specs change, the kernels' bodies do not (they already start and wait on it). Only
where the producer is launched once, its result unpacked into names and the semaphore's name passed
positionally to one launch of one `pallas_call` (and used nowhere else), both spec lists are literal,
with the semaphore's entries plain `pl.BlockSpec(memory_space=...)` calls, and the consumer's operand
is not aliased to an output.
"""

from __future__ import annotations

import ast

from ..analysis.kernel_model import kernel_launches, loads_bound_by
from ..analysis.values import Api
from .kernel_edits import CannotFix, FixBuilder, replace_expression


def fix(project, model, finding):
    entry, out_type, kernel = (finding.facts.get(key) for key in ("entry", "out_type", "kernel"))
    if entry is None or entry.api != "pl.pallas_call" or entry.model is not model or kernel is None:
        return None
    if not isinstance(out_type, (ast.Tuple, ast.List)):
        return None
    position = next((i for i, e in enumerate(out_type.elts) if model.source.span(e) == finding.span), None)
    if position is None:
        return None
    producer_spec = _spec_entry(project, entry, "out_specs", position, len(out_type.elts))
    every_launch = kernel_launches(project, model)
    launches = [launch for launch in every_launch if launch.kernel.node is entry.kernel.node]
    if len(launches) != 1:
        raise CannotFix("the kernel is not launched exactly once here, so where its semaphore goes is not known")
    call = launches[0].call
    assign = model.parents.get(call)
    if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], (ast.Tuple, ast.List))
            and len(assign.targets[0].elts) == len(out_type.elts)
            and all(isinstance(t, ast.Name) for t in assign.targets[0].elts)):
        raise CannotFix("the kernel's results are not unpacked into names")
    name = assign.targets[0].elts[position].id
    loads = loads_bound_by(model, assign, name)
    consumers = [launch for launch in every_launch if any(load in launch.call.args for load in loads)]
    if len(loads) != 1 or len(consumers) != 1 or consumers[0].api != "pl.pallas_call":
        raise CannotFix(f"{name} is not passed to one pallas_call launch and used nowhere else")
    consumer = consumers[0]
    if any(isinstance(a, ast.Starred) for a in consumer.call.args) or consumer.call.keywords:
        raise CannotFix("the consumer's operands are not plain positional arguments")
    operand = consumer.call.args.index(loads[0])
    consumer_entry = next((e for e in _entries(project, model) if e.kernel.node is consumer.kernel.node), None)
    if consumer_entry is None or [l.call for l in every_launch if l.kernel.node is consumer.kernel.node] != [consumer.call]:
        raise CannotFix("the consuming kernel is not launched only here")
    consumer_spec = _spec_entry(project, consumer_entry, "in_specs", operand, len(consumer.call.args))
    aliases = consumer_entry.kernel.kwarg("input_output_aliases")
    if aliases is not None and not (isinstance(aliases[1], ast.Dict) and all(
            isinstance(k, ast.Constant) and k.value != operand for k in aliases[1].keys)):
        raise CannotFix("the consumer's semaphore operand may be aliased to an output")
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    pallas, tpu = imports.name("jax.experimental.pallas"), imports.name("jax.experimental.pallas.tpu")
    spec = f"{pallas}.BlockSpec(memory_space={tpu}.SEMAPHORE)"
    replace_expression(builder, model, producer_spec, spec)
    replace_expression(builder, consumer_entry.model, consumer_spec, spec)
    return builder.fix(f"pallas-lsp ({finding.code}): Return {name} in memory_space=pltpu.SEMAPHORE "
                       "(out_specs, and in_specs of the kernel it is passed to)", "safe")


def _entries(project, model):
    from ..analysis.kernels import KernelIndex

    return KernelIndex.of(project, model).entries


def _spec_entry(project, entry, keyword: str, position: int, count: int) -> ast.Call:
    """The `pl.BlockSpec(memory_space=...)` at `position` of a literal `keyword` list or tuple of `count` specs."""
    found = entry.kernel.kwarg(keyword)
    node = found[1] if found is not None else None
    if not isinstance(node, (ast.Tuple, ast.List)) or len(node.elts) != count or any(
            isinstance(e, ast.Starred) for e in node.elts):
        raise CannotFix(f"{keyword} is not a literal list or tuple of one spec per operand")
    spec = node.elts[position]
    callee = project.evaluator.value(entry.model, spec.func) if isinstance(spec, ast.Call) else None
    if not (isinstance(callee, Api) and callee.name == "pl.BlockSpec" and not spec.args
            and [k.arg for k in spec.keywords] == ["memory_space"]):
        raise CannotFix(f"the semaphore's entry of {keyword} is not a plain pl.BlockSpec(memory_space=...)")
    return spec
