"""A seeded grammar of Pallas GPU kernels around `pl.get_global`, for differential testing against JAX.

A kernel is a `Spec`: one choice per axis of issue 25 (entry point, axes, interpret switch, wrapper,
alias of `get_global`, kernel outputs) and a list of `Item`s, each one `get_global` call with its own
choices (what it is given, how that arrives, where the call sits, how the result is used). `render`
turns a spec into a complete module (and a helper module for the constructs that need another one)
that follows the agreement-fixture convention (`def target(): return fn, args, mode`, see
tests/jax_truth.py). Rendering is a pure function of the spec: the shrinker edits specs, not text.

Every axis lists its simplest choice first: the shrinker moves choices towards it.
"""

from __future__ import annotations

import dataclasses
import random

# What get_global is given: name -> (expression, kind). Kinds: "sem" (a semaphore type, with its
# shape), "array" (a (128,) float32 ref: can be read), "other" (anything else).
WHATS = {
    "regular": ("plgpu.SemaphoreType.REGULAR", "sem", ()),
    "regular_4": ("plgpu.SemaphoreType.REGULAR((4,))", "sem", (4,)),
    "regular_2x3": ("plgpu.SemaphoreType.REGULAR((2, 3))", "sem", (2, 3)),
    "barrier_sem": ("plgpu.SemaphoreType.BARRIER", "sem", ()),
    "gmem": ("plgpu.GMEM((128,), jnp.float32)", "array", (128,)),
    "smem": ("plgpu.SMEM((128,), jnp.float32)", "array", (128,)),
    "any": ("pl.ANY((128,), jnp.float32)", "array", (128,)),
    "tmem": ("plgpu.TMEM((128, 128), jnp.float32)", "other", (128, 128)),
    "barrier": ("plgpu.Barrier(num_arrivals=1)", "other", ()),
    "tpu_regular": ("pltpu.SemaphoreType.REGULAR", "sem", ()),
    "tpu_dma": ("pltpu.SemaphoreType.DMA", "sem", ()),
    "tpu_vmem": ("pltpu.VMEM((128,), jnp.float32)", "array", (128,)),
    "shape_dtype_struct": ("jax.ShapeDtypeStruct((128,), jnp.float32)", "other", (128,)),
}

ENTRIES = ["kernel_call", "kernel_decorator", "kernel_partial_decorator", "partial_body", "factory",
           "method", "pl_kernel_mesh", "pallas_call"]
AXES = ["none", "grid", "cluster", "threads", "grid_threads", "grid_cluster"]
AXES_HOLDERS = ["inline", "constant", "attribute"]
ARRIVALS = ["literal", "variable", "constant", "dict", "attribute", "default_param", "helper_return",
            "other_module", "star_import"]
SITES = ["body", "helper", "helper_returns", "nested", "when", "cond_true", "cond_false", "fori",
         "python_loop", "run_scoped", "other_module_helper", "outside", "switch_first", "switch_second", "lambda",
         "comprehension"]
USES = ["unused", "signal_wait", "signal", "read", "barrier_wait", "ref_read"]
INTERPRETS = ["none", "false", "true", "gpu_params", "constant", "force_context", "set_mode", "factory_default",
              "environ"]
WRAPPERS = ["none", "jit", "named_call", "checkpoint", "step", "vmap"]
ALIASES = ["pl", "assign", "import_as", "partial"]
RUN_SCOPED_ALIASES = ["pl", "assign", "import_as"]
# A run_scoped semaphore beside the get_globals, collective over: nothing, or one kind of axis (PAL007).
SCOPED_SEMS = ["none", "no_axes", "thread", "grid", "cluster"]
OUTS = ["array", "semaphore"]

# The semaphore family (no get_global): a kernel that makes a semaphore some other way and uses it, on a
# TPU or a GPU (issue 25's DMA, non-decrementing wait, barrier-id and shape errors, and the TPU patterns
# JAX itself lowers, such as the split async copy that returns DMA semaphores through out_shape).
# "none" is the get_global family above.
SEM_LAUNCHES = ["none", "tpu", "tpu_interpret", "tpu_interpret_true", "tpu_core_map", "sparsecore", "gpu",
                "gpu_mesh", "gpu_core_map"]
# How the kernel gets it: scratch, run_scoped, a plgpu.alloc_semaphore operand (made here or in another
# module), a DMA semaphore returned through out_shape by one pallas_call and passed to the next (with
# out_specs memory_space=pltpu.SEMAPHORE, or without it), the barrier semaphore of a collective_id.
SEM_SOURCES = ["scratch", "run_scoped", "alloc", "alloc_other_module", "out_shape", "out_shape_no_spec",
               "barrier"]
SEM_KINDS = ["regular", "dma"]
SEM_SHAPES = ["scalar", "vec"]
# How the op is given it: the ref, a `.at[]` view with one or two indices, or a value loaded out of it.
SEM_REFS = ["whole", "at1", "at2", "load"]
SEM_OPS = ["signal_wait", "wait_nodec", "copy", "remote_send", "remote_recv"]
SEM_SITES = ["body", "helper", "other_module_helper"]
SEM_ARRIVALS = ["literal", "constant", "other_module"]
COLLECTIVE_IDS = ["0", "2000", "2001", "7"]

# Profiles: "full" writes every choice as drawn; "meaningful" draws the same choices and then writes three
# constructs that no person writes, and that no rewrite can give a meaning, the way a person does
# (`meaningful`). Only "full" is what the agreement tests and their expected outcomes are of.
PROFILES = ("full", "meaningful")

# A second global semaphore is mostly the plain one: the count matters (PAL004), not its form.
PLAIN_WHAT_WEIGHT = 0.5
# How many kernels are of the semaphore family.
SEM_FAMILY_SHARE = 0.3


@dataclasses.dataclass(frozen=True)
class Item:
    what: str = "regular"
    arrival: str = "literal"
    site: str = "body"
    use: str = "unused"
    index: int = 0  # how many `.at[]` indices signal/wait get


@dataclasses.dataclass(frozen=True)
class Spec:
    items: tuple[Item, ...] = ()
    entry: str = "kernel_call"
    axes: str = "none"
    axes_holder: str = "inline"
    interpret: str = "none"
    wrapper: str = "none"
    alias: str = "pl"
    out: str = "array"
    run_scoped_alias: str = "pl"
    scoped_sem: str = "none"
    sem_launch: str = "none"  # the semaphore family's fields: see SEM_LAUNCHES
    sem_source: str = "scratch"
    sem_kind: str = "regular"
    sem_shape: str = "scalar"
    sem_ref: str = "whole"
    sem_op: str = "signal_wait"
    sem_site: str = "body"
    sem_arrival: str = "literal"
    collective_id: str = "0"


def uses_for(what: str) -> list[str]:
    kind = WHATS[what][1]
    if kind == "sem":
        return ["unused", "signal_wait", "signal", "read", "barrier_wait"]
    if kind == "array":
        return ["unused", "ref_read"]
    return ["unused"]


SEM_FIELDS = ("sem_source", "sem_kind", "sem_shape", "sem_ref", "sem_op", "sem_site", "sem_arrival", "collective_id")


def normalize(spec: Spec) -> Spec:
    """The same spec with every choice that cannot go together replaced by one that can."""
    if spec.sem_launch != "none":
        return _normalize_sem(spec)
    spec = dataclasses.replace(spec, **{f: Spec.__dataclass_fields__[f].default for f in SEM_FIELDS})
    axes = spec.axes
    if spec.entry == "pallas_call" and axes not in ("none", "grid"):
        axes = "grid"  # a pallas_call has a grid and nothing else
    if interpreted(spec) and "threads" in axes:
        # JAX's GPU interpreter cannot run warpgroups ("run_scoped interpret rule does not support
        # collective axes", whatever the kernel does): a limit of JAX, not a verdict on get_global.
        axes = axes.replace("threads", "").strip("_") or "none"
    interpret = spec.interpret
    if interpret == "factory_default" and spec.entry != "factory":
        interpret = "constant"  # only a factory has a parameter to default
    scoped_sem = spec.scoped_sem
    if spec.entry == "pallas_call" or (scoped_sem != "none" and scoped_sem != "no_axes"
                                       and {"thread": "threads", "grid": "grid", "cluster": "cluster"}[scoped_sem] not in axes):
        scoped_sem = "none"  # collective over an axis the kernel does not have: not what is tested here
    items = []
    for item in spec.items:
        drawn = "barrier_wait" if item.use == "arrive_wait" else item.use
        use = item.use if drawn in uses_for(item.what) else "unused"
        index = item.index if use in ("signal_wait", "signal", "read") else 0
        if use == "barrier_wait":
            index = 0
        if use == "arrive_wait":
            index = item.index
        arrival = item.arrival
        if item.site == "other_module_helper" and arrival in ("other_module", "star_import"):
            arrival = "constant"  # the helper module already is the other module
        items.append(dataclasses.replace(item, use=use, index=index, arrival=arrival))
    wrapper = spec.wrapper
    if interpreted(spec):
        # Limits of JAX's interpreters, whatever get_global does: a run_scoped semaphore ("nan + semaphore",
        # "run_scoped interpret rule does not support collective axes", "Collective axis `x` not found")
        # and vmap ("Found an unbound axis name") fail there.
        scoped_sem = "none"
        wrapper = "jit" if wrapper == "vmap" else wrapper
    return dataclasses.replace(spec, axes=axes, items=tuple(items), interpret=interpret, scoped_sem=scoped_sem,
                               wrapper=wrapper)


def _normalize_sem(spec: Spec) -> Spec:
    launch, source, kind, op, ref = spec.sem_launch, spec.sem_source, spec.sem_kind, spec.sem_op, spec.sem_ref
    tpu = launch.startswith("tpu") or launch == "sparsecore"
    if source in ("alloc", "alloc_other_module") and tpu:
        source = "scratch"  # plgpu.alloc_semaphore makes GPU (GMEM) semaphores only
    if source in ("out_shape", "out_shape_no_spec", "barrier") and launch not in ("tpu", "tpu_interpret"):
        source = "scratch"  # patterns of TPU pallas_calls
    if source in ("out_shape", "out_shape_no_spec") and launch != "tpu":
        source = "scratch"  # the TPU interpreter cannot pass a DMA semaphore between kernels ("nan + dma_sem")
    if source.startswith("alloc") and launch == "gpu_core_map":
        source = "run_scoped"  # a core_map takes no operands: an allocated semaphore would be captured as a value
    if source == "scratch" and launch in ("gpu_core_map", "gpu_mesh"):
        source = "run_scoped"  # "Scratch operands are not supported by the Mosaic GPU mpmd_map lowering"
    if source in ("out_shape", "out_shape_no_spec"):
        kind, op = "dma", "copy"  # the split async copy: one kernel starts the copy, the next waits on it
    if source == "barrier":
        op, kind, ref = "signal_wait", "regular", "whole"
    if not tpu:
        kind = "regular"
        if op != "wait_nodec":
            op = "signal_wait"  # DMAs with semaphores are TPU ones
    if launch != "tpu" and op.startswith("remote"):
        op = "copy"  # a remote copy's device_id needs a mesh axis, or the interpreter's devices
    # A loaded value given to signal/wait (`ref == "load"`, not of an alloc_semaphore operand, which is loaded at
    # the launch): JAX's "Cannot signal on a non-semaphore Ref: semaphore[]", PAL014.
    if launch == "sparsecore" and op == "wait_nodec":
        op = "signal_wait"
    if op in ("copy", "remote_send", "remote_recv"):
        kind = "dma"
    if spec.sem_shape == "scalar" and ref == "at2":
        ref = "at1"
    shape = spec.sem_shape
    if launch == "tpu_interpret_true" and op == "wait_nodec" and shape == "vec" and ref != "whole":
        # interpret=True discharges a non-decrementing wait on a view as a slice of the wrong rank
        # ("Length of slice indices must match number of operand dimensions"): a limit of JAX's HLO interpreter.
        shape = "scalar"
    wrapper = "jit" if spec.wrapper in ("vmap", "step") else spec.wrapper
    site = spec.sem_site if source not in ("out_shape", "out_shape_no_spec", "barrier") else "body"
    return Spec(entry="kernel_call", wrapper=wrapper, sem_launch=launch, sem_source=source, sem_kind=kind,
                sem_shape=shape, sem_ref=ref, sem_op=op, sem_site=site, sem_arrival=spec.sem_arrival,
                collective_id=spec.collective_id if source == "barrier" else "0")


def meaningful(spec: Spec) -> Spec:
    """The spec with what has no meaning written as a person writes it: a barrier waited on is first arrived
    on (`barrier_arrive`: the "arrive_wait" use), a semaphore array is given as many `.at[]` indices as it has
    dimensions (signalled, waited on, read, or one barrier of it arrived on and waited for) (the grammar's literals 1 and 2 are in range of its (4,) and (2, 3) shapes), and a `get_global`
    made in the function that launches the kernel and used there is passed into that one launch
    ("into_launch") and used in the kernel instead; a `pl.pallas_call`'s operands are arrays (given a semaphore,
    jax 0.12 fails with "AbstractRef.update() got an unexpected keyword argument 'shape'", compiled or
    interpreted), so there the get_global is made in the body where it is used. In the semaphore family, the
    semaphore handed to an op whole or through `.at[]` gets one index per dimension likewise (a scalar one
    whole, a `(2,)` array `.at[0]`); a value loaded out of it (PAL014) is kept."""
    if spec.sem_launch != "none":
        return _meaningful_sem(spec)
    items = []
    for item in spec.items:
        use, site, index = item.use, item.site, item.index
        if use == "barrier_wait":
            use = "arrive_wait"
        if use in ("signal_wait", "signal", "read", "arrive_wait"):
            index = len(WHATS[item.what][2])
        if site == "outside" and use != "unused":  # an unused one is dropped by JAX: it has a meaning
            site = "body" if spec.entry == "pallas_call" else "into_launch"
        items.append(dataclasses.replace(item, use=use, site=site, index=index))
    return dataclasses.replace(spec, items=tuple(items))


def _meaningful_sem(spec: Spec) -> Spec:
    ref = spec.sem_ref if spec.sem_ref == "load" else "at1" if spec.sem_shape == "vec" else "whole"
    spec = normalize(dataclasses.replace(spec, sem_ref=ref))
    if spec.sem_shape == "scalar" and spec.sem_ref == "at1":
        # normalize made the array scalar (a limit of the HLO interpreter on views): used whole then
        spec = dataclasses.replace(spec, sem_ref="whole")
    return spec


def random_spec(rng: random.Random, sem_rng: random.Random | None = None, profile: str = "full") -> Spec:
    """A random spec: of the semaphore family with `sem_rng` (its own stream, drawn from first, so that the
    get_global family's kernels are the same sequence with or without it), else of the get_global family.
    The "meaningful" profile draws exactly what "full" draws, then rewrites it with `meaningful`."""
    spec = _random_spec(rng, sem_rng)
    if profile == "meaningful":
        return normalize(meaningful(spec))
    if profile != "full":
        raise ValueError(profile)
    return spec


def _random_spec(rng: random.Random, sem_rng: random.Random | None) -> Spec:
    if sem_rng is not None and sem_rng.random() < SEM_FAMILY_SHARE:
        rng = sem_rng
        return normalize(Spec(
            wrapper=rng.choices(WRAPPERS, weights=[3, 1, 1, 1, 0, 0])[0],
            sem_launch=rng.choice(SEM_LAUNCHES[1:]), sem_source=rng.choices(SEM_SOURCES, weights=[4, 2, 2, 1, 3, 1, 2])[0],
            sem_kind=rng.choice(SEM_KINDS), sem_shape=rng.choice(SEM_SHAPES),
            sem_ref=rng.choices(SEM_REFS, weights=[3, 3, 1, 2])[0],
            sem_op=rng.choices(SEM_OPS, weights=[3, 2, 3, 1, 1])[0], sem_site=rng.choice(SEM_SITES),
            sem_arrival=rng.choice(SEM_ARRIVALS), collective_id=rng.choice(COLLECTIVE_IDS)))
    count = rng.choices([0, 1, 2], weights=[1, 7, 3])[0]
    items = []
    for n in range(count):
        if n > 0 and rng.random() < PLAIN_WHAT_WEIGHT:
            what = "regular"
        else:
            what = rng.choices(list(WHATS), weights=[6, 3, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1])[0]
        use = rng.choice(uses_for(what))
        index = rng.choices([0, 1, 2, 3], weights=[6, 2, 1, 1])[0] if use in ("signal_wait", "signal", "read") else 0
        items.append(Item(what=what, arrival=rng.choice(ARRIVALS), site=rng.choice(SITES), use=use, index=index))
    spec = Spec(
        items=tuple(items),
        entry=rng.choice(ENTRIES),
        axes=rng.choice(AXES),
        axes_holder=rng.choice(AXES_HOLDERS),
        interpret=rng.choices(INTERPRETS, weights=[8, 1, 2, 1, 1, 1, 1, 1, 1])[0],
        wrapper=rng.choice(WRAPPERS),
        alias=rng.choices(ALIASES, weights=[5, 1, 1, 1])[0],
        out=rng.choices(OUTS, weights=[9, 1])[0],
        run_scoped_alias=rng.choices(RUN_SCOPED_ALIASES, weights=[4, 1, 1])[0],
        scoped_sem=rng.choices(SCOPED_SEMS, weights=[8, 1, 1, 1, 1])[0],
    )
    return normalize(spec)


def tags(spec: Spec) -> list[str]:
    """The construct families a spec belongs to (`axis:choice`), what the bench reports agreement by."""
    if spec.sem_launch != "none":
        out = ["family:semaphore", f"wrapper:{spec.wrapper}"] + [
            f"{f}:{getattr(spec, f)}" for f in ("sem_launch",) + SEM_FIELDS if f != "collective_id"]
        if spec.sem_source == "barrier":
            out.append(f"collective_id:{spec.collective_id}")
        return sorted(out)
    out = ["family:get_global", f"entry:{spec.entry}", f"axes:{spec.axes}", f"interpret:{spec.interpret}",
           f"wrapper:{spec.wrapper}", f"items:{len(spec.items)}"]
    if spec.axes != "none":
        out.append(f"axes_holder:{spec.axes_holder}")
    if spec.items:
        out.append(f"alias:{spec.alias}")
    if spec.out != "array":
        out.append(f"out:{spec.out}")
    if spec.scoped_sem != "none":
        out.append(f"scoped_sem:{spec.scoped_sem}")
    if spec.run_scoped_alias != "pl" and (spec.scoped_sem != "none" or any(i.site == "run_scoped" for i in spec.items)):
        out.append(f"run_scoped_alias:{spec.run_scoped_alias}")
    for item in spec.items:
        out += [f"what:{item.what}", f"arrival:{item.arrival}", f"site:{item.site}", f"use:{item.use}"]
        if item.use in ("signal_wait", "signal", "read", "arrive_wait"):
            out.append(f"index:{item.index}")
    return sorted(set(out))


def interpreted(spec: Spec) -> bool:
    if spec.sem_launch != "none":
        return spec.sem_launch in ("tpu_interpret", "tpu_interpret_true")
    if spec.entry in ("pallas_call", "pl_kernel_mesh") and spec.interpret == "force_context":
        # jax 0.12: a pallas_call or pl.kernel built before `with plgpu.force_gpu_interpret_mode():` and called
        # in it is not interpreted (pl.kernel reads the setting when built, pallas/core.py:1541; on the CPU:
        # "Only interpret mode is supported on CPU backend."). A plgpu.kernel is; set_gpu_interpret_mode() works
        # for all three.
        return False
    return spec.interpret not in ("none", "false")


def mode(spec: Spec) -> str:
    if interpreted(spec):
        return "interpret"
    if spec.sem_launch != "none":
        return {"tpu": "tpu", "tpu_core_map": "tpu", "sparsecore": "sparsecore"}.get(spec.sem_launch, "cuda")
    return "triton" if spec.entry == "pallas_call" else "cuda"


def shrink_candidates(spec: Spec):
    """Simpler specs, one change each: an item dropped, or one choice moved to its axis's simplest."""
    for n in range(len(spec.items)):
        yield dataclasses.replace(spec, items=spec.items[:n] + spec.items[n + 1:])
    for field, choices in (("entry", ENTRIES), ("axes", AXES), ("axes_holder", AXES_HOLDERS),
                           ("interpret", INTERPRETS), ("wrapper", WRAPPERS), ("alias", ALIASES), ("out", OUTS),
                           ("run_scoped_alias", RUN_SCOPED_ALIASES), ("scoped_sem", SCOPED_SEMS),
                           ("sem_source", SEM_SOURCES), ("sem_kind", SEM_KINDS), ("sem_shape", SEM_SHAPES),
                           ("sem_ref", SEM_REFS), ("sem_op", SEM_OPS), ("sem_site", SEM_SITES),
                           ("sem_arrival", SEM_ARRIVALS), ("collective_id", COLLECTIVE_IDS)):
        if getattr(spec, field) != choices[0]:
            yield dataclasses.replace(spec, **{field: choices[0]})
    for n, item in enumerate(spec.items):
        for field, simplest in (("arrival", "literal"), ("site", "body"), ("use", "unused"), ("index", 0),
                                ("what", "regular")):
            if getattr(item, field) != simplest:
                simpler = dataclasses.replace(item, **{field: simplest})
                yield dataclasses.replace(spec, items=spec.items[:n] + (simpler,) + spec.items[n + 1:])


# ---- rendering ------------------------------------------------------------------------------------

HEADER = """import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
"""

AXIS_KWARGS = {
    "none": {},
    "grid": {"grid": "(2,)", "grid_names": '("x",)'},
    "cluster": {"cluster": "(2,)", "cluster_names": '("c",)'},
    "threads": {"num_threads": "2", "thread_name": '"wg"'},
    "grid_threads": {"grid": "(2,)", "grid_names": '("x",)', "num_threads": "2", "thread_name": '"wg"'},
    "grid_cluster": {"grid": "(2,)", "grid_names": '("x",)', "cluster": "(2,)", "cluster_names": '("c",)'},
}

INTERPRET_KWARG = {"false": "False", "true": "True", "gpu_params": "plgpu.InterpretGPUParams()",
                   "constant": "INTERPRET", "factory_default": "interpret",
                   "environ": 'os.environ.get("GENERATED_KERNEL_INTERPRET", "1") == "1"'}


def indent(lines: list[str], by: int = 1) -> list[str]:
    return ["  " * by + line if line else line for line in lines]


class _Module:
    def __init__(self):
        self.defs: list[list[str]] = []
        self.imports: list[str] = []
        self.names: set[str] = set()

    def define(self, name: str, lines: list[str]):
        if name not in self.names:
            self.names.add(name)
            self.defs.append(lines)


def render(spec: Spec, name: str) -> dict[str, str]:
    """{file name: source} for a kernel module `name`.py and, where needed, its helper `name`_h.py."""
    spec = normalize(spec)
    if spec.sem_launch != "none":
        return _render_sem(spec, name)
    helper_name = f"{name}_h"
    main, helper = _Module(), _Module()
    uses_helper = False

    def gg(module: _Module) -> str:
        if spec.alias == "pl":
            return "pl.get_global"
        if spec.alias == "assign":
            module.define("take_global", ["take_global = pl.get_global"])
        elif spec.alias == "import_as":
            module.define("take_global", ["from jax.experimental.pallas import get_global as take_global"])
        else:
            module.define("take_global", ["take_global = functools.partial(pl.get_global)"])
        return "take_global"

    # With warpgroups, scratch must be shared by them (JAX: "Scoped allocation must have the thread
    # axis in its collective axes").
    scoped_axes = ', collective_axes="wg"' if "threads" in spec.axes else ""
    def rs() -> str:
        if spec.run_scoped_alias == "assign":
            main.define("scoped", ["scoped = pl.run_scoped"])
            return "scoped"
        if spec.run_scoped_alias == "import_as":
            main.define("scoped", ["from jax.experimental.pallas import run_scoped as scoped"])
            return "scoped"
        return "pl.run_scoped"

    body_params: list[str] = []  # default parameters of the kernel body
    body_lines: list[str] = []
    outside_lines: list[str] = []
    passed: list[str] = []  # get_globals made where the kernel is launched and passed into the launch

    for k, item in enumerate(spec.items):
        expr = WHATS[item.what][0]
        home = helper if item.site == "other_module_helper" else main
        params: list[str] = []  # default parameters of the function the call sits in
        prefix: list[str] = []
        if item.arrival == "literal":
            what = expr
        elif item.arrival == "variable":
            prefix.append(f"what{k} = {expr}")
            what = f"what{k}"
        elif item.arrival == "constant":
            home.define(f"SEM_TYPE_{k}", [f"SEM_TYPE_{k} = {expr}"])
            what = f"SEM_TYPE_{k}"
        elif item.arrival == "dict":
            home.define(f"TYPES_{k}", [f'TYPES_{k} = {{"sem": {expr}}}'])
            what = f'TYPES_{k}["sem"]'
        elif item.arrival == "attribute":
            home.define(f"Types{k}", [f"class Types{k}:", f"  what = {expr}"])
            what = f"Types{k}.what"
        elif item.arrival == "default_param":
            params.append(f"what{k}={expr}")
            what = f"what{k}"
        elif item.arrival == "helper_return":
            home.define(f"sem_type_{k}", [f"def sem_type_{k}():", f"  return {expr}"])
            what = f"sem_type_{k}()"
        else:  # other_module, star_import
            uses_helper = True
            helper.define(f"SEM_TYPE_{k}", [f"SEM_TYPE_{k} = {expr}"])
            if item.arrival == "other_module":
                main.imports.append(f"from {helper_name} import SEM_TYPE_{k}")
            else:
                main.imports.append(f"from {helper_name} import *")
            what = f"SEM_TYPE_{k}"
        var = f"sem{k}"
        call = f"{gg(home)}({what})"
        use = _use_lines(var, item)
        sig = ", ".join(params)

        if item.site == "body":
            body_params += params
            body_lines += prefix + [f"{var} = {call}"] + use
        elif item.site == "python_loop":
            body_params += params
            body_lines += ["for _ in range(2):"] + indent(prefix + [f"{var} = {call}"] + use)
        elif item.site == "outside":
            outside_lines += prefix + [f"{var} = {call}"] + use
            if params:
                outside_lines[:0] = [f"what{k} = {expr}"]
        elif item.site == "into_launch":
            outside_lines += ([f"what{k} = {expr}"] if params else []) + prefix + [f"{var} = {call}"]
            passed.append(var)
            body_lines += use
        elif item.site in ("helper", "other_module_helper"):
            fn = f"use_sem_{k}"
            home.define(fn, [f"def {fn}({sig}):"] + indent(prefix + [f"{var} = {call}"] + use))
            if home is helper:
                uses_helper = True
                main.imports.append(f"from {helper_name} import {fn}")
            body_lines.append(f"{fn}()")
        elif item.site == "helper_returns":
            fn = f"get_sem_{k}"
            main.define(fn, [f"def {fn}({sig}):"] + indent(prefix + [f"return {call}"]))
            body_lines += [f"{var} = {fn}()"] + use
        elif item.site == "nested":
            body_lines += [f"def inner_{k}({sig}):"] + indent(prefix + [f"{var} = {call}"] + use) + [f"inner_{k}()"]
        elif item.site == "when":
            body_lines += ["@pl.when(x_ref[0] > 0)", f"def _when_{k}({sig}):"] + indent(
                prefix + [f"{var} = {call}"] + use)
        elif item.site in ("cond_true", "cond_false", "switch_first", "switch_second"):
            branch = [f"def branch_{k}({sig}):"] + indent(prefix + [f"{var} = {call}"] + use)
            other = [f"def other_{k}():", "  pass"]
            order = f"branch_{k}, other_{k}" if item.site in ("cond_true", "switch_first") else f"other_{k}, branch_{k}"
            branches = f"lax.cond(x_ref[0] > 0, {order})" if item.site.startswith("cond") else (
                f"lax.switch((x_ref[0] > 0).astype(jnp.int32), [{order}])")
            body_lines += branch + other + [branches]
        elif item.site == "fori":
            extra = f", {sig}" if sig else ""
            body_lines += [f"def loop_{k}(i, carry{extra}):"] + indent(prefix + [f"{var} = {call}"] + use) + [
                "  return carry", f"lax.fori_loop(0, 2, loop_{k}, 0)"]
        elif item.site == "run_scoped":
            extra = f", {sig}" if sig else ""
            body_lines += [f"def scoped_{k}(tmp_ref{extra}):"] + indent(prefix + [f"{var} = {call}"] + use) + [
                f"{rs()}(scoped_{k}, plgpu.SMEM((8,), jnp.float32){scoped_axes})"]
        elif item.site == "lambda":
            body_lines += prefix + [f"get_{k} = lambda {sig}: {call}".replace("lambda :", "lambda:"),
                                    f"{var} = get_{k}()"] + use
        elif item.site == "comprehension":
            body_params += params
            body_lines += prefix + [f"sems_{k} = [{call} for _ in range(1)]", f"{var} = sems_{k}[0]"] + use
        else:
            raise ValueError(item.site)

    if spec.scoped_sem != "none":
        axis = {"no_axes": "", "thread": ', collective_axes="wg"', "grid": ', collective_axes="x"',
                "cluster": ', collective_axes="c"'}[spec.scoped_sem]
        body_lines += ["def exchange(sem):", "  pl.semaphore_signal(sem)", "  pl.semaphore_wait(sem)",
                       f"{rs()}(exchange, plgpu.SemaphoreType.REGULAR{axis})"]

    # The launch.
    kw = _axis_kwargs(spec, main)
    if spec.interpret in INTERPRET_KWARG:
        kw["interpret"] = INTERPRET_KWARG[spec.interpret]
        if spec.interpret == "constant":
            main.define("INTERPRET", ["INTERPRET = True"])
    out_type = "X" if spec.out == "array" else "(X, plgpu.SemaphoreType.REGULAR)"
    ref_params = ["x_ref", *passed, "o_ref"] + (["s_ref"] if spec.out == "semaphore" else [])
    if spec.entry == "method":
        ref_params.insert(0, "self")
    params = ref_params + body_params
    if spec.entry == "partial_body":
        params.append("*, scale")
    compute = "o_ref[...] = x_ref[...] * scale" if spec.entry == "partial_body" else "o_ref[...] = x_ref[...] + 1.0"
    body = indent(body_lines + [compute])
    kwargs = ", ".join(f"{k}={v}" for k, v in kw.items())
    comma_kwargs = f", {kwargs}" if kwargs else ""
    launch: list[str] = []
    if spec.entry == "kernel_call":
        main.defs.append([f"def body({', '.join(params)}):"] + body)
        launch = [f"fn = plgpu.kernel(body, out_type={out_type}{comma_kwargs})"]
    elif spec.entry == "kernel_decorator":
        main.defs.append([f"@plgpu.kernel(out_type={out_type}{comma_kwargs})", f"def body({', '.join(params)}):"] + body)
        launch = ["fn = body"]
    elif spec.entry == "kernel_partial_decorator":
        main.defs.append([f"@functools.partial(plgpu.kernel, out_type={out_type}{comma_kwargs})",
                          f"def body({', '.join(params)}):"] + body)
        launch = ["fn = body"]
    elif spec.entry == "partial_body":
        main.defs.append([f"def body({', '.join(params)}):"] + body)
        launch = [f"fn = plgpu.kernel(functools.partial(body, scale=2.0), out_type={out_type}{comma_kwargs})"]
    elif spec.entry == "factory":
        main.defs.append([f"def body({', '.join(params)}):"] + body)
        factory_params = "interpret=True" if spec.interpret == "factory_default" else ""
        main.defs.append([f"def make_kernel({factory_params}):",
                          f"  return plgpu.kernel(body, out_type={out_type}{comma_kwargs})"])
        launch = ["fn = make_kernel()"]
    elif spec.entry == "method":
        main.defs.append(["class Builder:", "", f"  def body({', '.join(params)}):"] + indent(body) + [
            "", "  def build(self):", f"    return plgpu.kernel(self.body, out_type={out_type}{comma_kwargs})"])
        launch = ["fn = Builder().build()"]
    elif spec.entry == "pl_kernel_mesh":
        main.defs.append([f"def body({', '.join(params)}):"] + body)
        mesh_kw = {k: v for k, v in kw.items() if k != "interpret"}
        mesh = "plgpu.Mesh(" + ", ".join(f"{k}={v}" for k, v in mesh_kw.items()) + ")"
        interp = f", interpret={kw['interpret']}" if "interpret" in kw else ""
        launch = [f"fn = pl.kernel(body, out_type={out_type}, mesh={mesh}{interp})"]
    elif spec.entry == "pallas_call":
        main.defs.append([f"def body({', '.join(params)}):"] + body)
        launch = [f"fn = pl.pallas_call(body, out_shape={out_type}{comma_kwargs})"]
    else:
        raise ValueError(spec.entry)

    runner = "fn"
    if outside_lines or spec.interpret == "force_context" or spec.wrapper == "step":
        run = ["def run(x):"]
        run += indent(outside_lines)
        operands = ", ".join(["x", *passed])
        if spec.interpret == "force_context":
            run += ["  with plgpu.force_gpu_interpret_mode():", f"    return fn({operands})"]
        else:
            run += [f"  return fn({operands})"]
        launch += run
        runner = "run"
    wrapped = _wrapped(runner, spec.wrapper)
    shape = "(2, 128)" if spec.wrapper == "vmap" else "(128,)"
    if interpreted(spec):
        args = f"(jnp.ones({shape}, jnp.float32),)"
    else:
        args = "(jax.ShapeDtypeStruct((2, 128), jnp.float32),)" if spec.wrapper == "vmap" else "(X,)"
    target = ["def target():"]
    if spec.interpret == "set_mode":
        target.append("  plgpu.set_gpu_interpret_mode()")
    target += indent(launch) + [f"  return {wrapped}, {args}, \"{mode(spec)}\""]

    cleanup = ["", "", "def cleanup():", "  plgpu.set_gpu_interpret_mode(None)"] if spec.interpret == "set_mode" else []
    return _files(spec, name, HEADER, main, helper if uses_helper else None, ["X = jax.ShapeDtypeStruct((128,), jnp.float32)"],
                  target + cleanup, first=["import os"] if spec.interpret == "environ" else [])


def _wrapped(runner: str, wrapper: str) -> str:
    """The kernel's runner as `target()` returns it, under the spec's wrapper."""
    return {"none": runner, "step": runner, "jit": f"jax.jit({runner})",
            "named_call": f'jax.named_call({runner}, name="kernel")', "checkpoint": f"jax.checkpoint({runner})",
            "vmap": f"jax.vmap({runner})"}[wrapper]


def _files(spec: Spec, name: str, header: str, main: _Module, helper: _Module | None, prelude: list[str],
           target: list[str], first: list[str] = ()) -> dict[str, str]:
    """The kernel's module (docstring, `first` lines, header, its imports, `prelude`, its definitions, `target`)
    and, when it has one, its helper module, `{name}_h.py`, under the same header."""
    text = [f'"""Generated kernel {name}: {" ".join(tags(spec))}."""', *first, header.rstrip("\n")]
    text += sorted(set(main.imports))
    text += ["", *prelude]
    for block in main.defs:
        text += ["", ""] + block
    text += ["", ""] + target
    files = {f"{name}.py": "\n".join(text) + "\n"}
    if helper is not None:
        htext = [f'"""Helper module of generated kernel {name}."""', header.rstrip("\n")]
        for block in helper.defs:
            htext += ["", ""] + block
        files[f"{name}_h.py"] = "\n".join(htext) + "\n"
    return files


def _axis_kwargs(spec: Spec, main: _Module) -> dict[str, str]:
    kw = dict(AXIS_KWARGS[spec.axes])
    if spec.entry == "pallas_call":
        kw = {"grid": kw["grid"]} if "grid" in kw else {}
    if spec.axes_holder == "constant":
        for key, value in kw.items():
            main.define(key.upper(), [f"{key.upper()} = {value}"])
        kw = {key: key.upper() for key in kw}
    elif spec.axes_holder == "attribute" and kw:
        main.define("Config", ["class Config:"] + [f"  {key} = {value}" for key, value in kw.items()])
        kw = {key: f"Config.{key}" for key in kw}
    return kw


def _use_lines(var: str, item: Item) -> list[str]:
    ref = var + {0: "", 1: ".at[1]", 2: ".at[1, 2]", 3: ".at[1, 2, 0]"}[item.index]
    if item.use == "unused":
        return []
    if item.use == "signal_wait":
        return [f"pl.semaphore_signal({ref})", f"pl.semaphore_wait({ref})"]
    if item.use == "signal":
        return [f"pl.semaphore_signal({ref})"]
    if item.use == "read":
        return [f"_ = pl.semaphore_read({ref})"]
    if item.use == "barrier_wait":
        return [f"plgpu.barrier_wait({var})"]
    if item.use == "arrive_wait":
        return [f"plgpu.barrier_arrive({ref})", f"plgpu.barrier_wait({ref})"]
    if item.use == "ref_read":
        return [f"_ = {var}[...]"]
    raise ValueError(item.use)


# ---- the semaphore family -------------------------------------------------------------------------

SEM_HEADER = HEADER + "from jax.experimental.pallas import tpu_sc as plsc\n"


def _sem_type(spec: Spec, tpu: bool) -> str:
    module = "pltpu" if tpu else "plgpu"
    base = f"{module}.SemaphoreType.{spec.sem_kind.upper()}"
    return base + ("((2,))" if spec.sem_shape == "vec" else "")


def _sem_ref(spec: Spec, var: str, at_call: bool = False) -> str:
    """The semaphore as the op (or, for an operand, the call) is given it."""
    if spec.sem_ref == "load":
        if spec.sem_source.startswith("alloc") != at_call:
            return var
        return f"{var}[0]" if spec.sem_shape == "vec" else f"{var}[...]"
    if at_call:
        return var
    return var + {"whole": "", "at1": ".at[0]", "at2": ".at[0, 1]"}[spec.sem_ref]


def _sem_ops(spec: Spec, s: str, other: str = "other") -> list[str]:
    if spec.sem_op == "signal_wait":
        return [f"pl.semaphore_signal({s})", f"pl.semaphore_wait({s})"]
    if spec.sem_op == "wait_nodec":
        return [f"pl.semaphore_signal({s})", f"pl.semaphore_wait({s}, 1, decrement=False)", f"pl.semaphore_wait({s}, 1)"]
    if spec.sem_op == "copy":
        copy = f"pltpu.make_async_copy(x_ref, o_ref, {s})"
    else:
        send, recv = (s, other) if spec.sem_op == "remote_send" else (other, s)
        copy = (f"pltpu.make_async_remote_copy(x_ref, o_ref, {send}, {recv}, device_id=0, "
                "device_id_type=pl.DeviceIdType.LOGICAL)")
    return [f"copy = {copy}", "copy.start()", "copy.wait()"]


def _render_sem(spec: Spec, name: str) -> dict[str, str]:
    helper_name = f"{name}_h"
    main, helper = _Module(), _Module()
    uses_helper = False
    launch, source = spec.sem_launch, spec.sem_source
    tpu = launch.startswith("tpu") or launch == "sparsecore"
    dma_op = spec.sem_op in ("copy", "remote_send", "remote_recv")
    remote = spec.sem_op.startswith("remote")
    x = "(16,)" if launch == "sparsecore" else "(8, 128)" if tpu else "(128,)"

    type_expr = _sem_type(spec, tpu)
    if spec.sem_arrival == "constant":
        main.define("SEM_TYPE", [f"SEM_TYPE = {type_expr}"])
        type_expr = "SEM_TYPE"
    elif spec.sem_arrival == "other_module":
        uses_helper = True
        helper.define("SEM_TYPE", [f"SEM_TYPE = {type_expr}"])
        main.imports.append(f"from {helper_name} import SEM_TYPE")
        type_expr = "SEM_TYPE"
    scratch = [type_expr] + (["pltpu.SemaphoreType.DMA"] if remote else [])
    # Host-side lines of the launch: where a kernel's operands are made.
    lines: list[str] = []
    interp = {"tpu_interpret": ", interpret=pltpu.InterpretParams()", "tpu_interpret_true": ", interpret=True"}.get(launch, "")
    any_spec = "pl.BlockSpec(memory_space=pl.ANY)"

    if source in ("out_shape", "out_shape_no_spec"):
        sem_spec = "pl.BlockSpec(memory_space=pltpu.SEMAPHORE)" if source == "out_shape" else any_spec
        s = _sem_ref(spec, "sem")
        main.defs.append(["def start_body(x_ref, o_ref, sem):", f"  pltpu.make_async_copy(x_ref, o_ref, {s}).start()"])
        main.defs.append(["def wait_body(x_ref, sem, o_ref):", f"  pltpu.make_async_copy(x_ref, o_ref, {s}).wait()"])
        launch_lines = [
            f"start = pl.pallas_call(start_body, out_shape=(X, {type_expr}), in_specs=[{any_spec}],",
            f"                       out_specs=({any_spec}, {sem_spec}){interp})",
            f"fn = pl.pallas_call(wait_body, out_shape=X, in_specs=[{any_spec}, {sem_spec}], out_specs={any_spec},",
            f"                    input_output_aliases={{0: 0}}{interp})",
            "def run(x):", "  y, sem = start(x)", "  return fn(y, sem)"]
        return _finish_sem(spec, name, main, helper, uses_helper, x, launch_lines, "run")

    if source == "barrier":
        extra = ["pltpu.SemaphoreType.DMA((2,))"] if spec.sem_shape == "vec" else []
        main.defs.append(["def body(x_ref, o_ref, sem" + (", dma" if extra else "") + "):",
                          "  barrier = pltpu.get_barrier_semaphore()", "  pl.semaphore_signal(barrier)",
                          "  pl.semaphore_wait(barrier)", "  pl.semaphore_signal(sem)", "  pl.semaphore_wait(sem)",
                          "  o_ref[...] = x_ref[...]"])
        launch_lines = [f"fn = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR{''.join(', ' + e for e in extra)}],",
                        f"                    compiler_params=pltpu.CompilerParams(collective_id={spec.collective_id}){interp})",
                        "def run(x):", "  return fn(x)"]
        return _finish_sem(spec, name, main, helper, uses_helper, x, launch_lines, "run")

    # The ops, where they sit.
    alloc = source.startswith("alloc")
    s = _sem_ref(spec, "sem")
    ops = _sem_ops(spec, s)
    op_params = "sem, x_ref, o_ref" + (", other" if remote else "")
    if spec.sem_site == "body":
        op_lines = ops
    else:
        home = helper if spec.sem_site == "other_module_helper" else main
        home.define("use_sem", [f"def use_sem({op_params}):"] + indent(ops))
        if home is helper:
            uses_helper = True
            main.imports.append(f"from {helper_name} import use_sem")
        op_lines = [f"use_sem({op_params})"]
    compute = [] if dma_op or launch in ("tpu_core_map", "sparsecore") else (
        ["o_ref[...] = x_ref[...]"] if tpu else ["o_ref[...] = x_ref[...] + 1.0"])
    if source == "run_scoped":
        params = "x_ref, o_ref"
        body = [f"def scoped(sem{', other' if remote else ''}):"] + indent(op_lines) + [
            f"pl.run_scoped(scoped, {', '.join(scratch)})"] + compute
        scratch_kw = ""
    elif alloc:
        params = "sem, x_ref, o_ref"
        body = op_lines + compute
        scratch_kw = ""
    else:
        params = "x_ref, o_ref, sem" + (", other" if remote else "")
        body = op_lines + compute
        scratch_kw = "scratch_shapes" if launch in ("tpu", "tpu_interpret", "tpu_interpret_true") else "scratch_types"
        scratch_kw = f", {scratch_kw}=[{', '.join(scratch)}]"
    main.defs.append([f"def body({params}):"] + indent(body))

    specs = f", in_specs=[{any_spec}], out_specs={any_spec}" if dma_op else ""
    if launch in ("tpu", "tpu_interpret", "tpu_interpret_true"):
        launch_lines = [f"fn = pl.pallas_call(body, out_shape=X{specs}{scratch_kw}{interp})"]
    elif launch == "tpu_core_map":
        launch_lines = [f'fn = pl.kernel(body, out_type=X, mesh=pltpu.create_tensorcore_mesh("core"){scratch_kw})']
    elif launch == "sparsecore":
        launch_lines = ['fn = pl.kernel(body, out_type=X, mesh=plsc.VectorSubcoreMesh(core_axis_name="core", '
                        f'subcore_axis_name="subcore"){scratch_kw})']
    elif launch == "gpu":
        launch_lines = [f"fn = plgpu.kernel(body, out_type=X{scratch_kw})"]
    elif launch == "gpu_mesh":
        launch_lines = [f"fn = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(){scratch_kw})"]
    elif launch == "gpu_core_map":
        core_kw = scratch_kw.replace("scratch_types", "scratch_shapes")
        main.define("MESH", ["MESH = plgpu.Mesh()"])
        inner = "sem" if not alloc and source != "run_scoped" else ""
        launch_lines = ["def fn(" + ("sem, " if alloc else "") + "x):", "  def stateful(refs):",
                        "    x_ref, o_ref = refs", f"    @pl.core_map(MESH{core_kw})",
                        f"    def _({inner}):", f"      body({params})",
                        "  _, out = pl.run_state(stateful)((x, jnp.zeros_like(x)))", "  return out"]
    else:
        raise ValueError(launch)
    if alloc:
        shape = "((2,))" if spec.sem_shape == "vec" else "(())"
        make = f"plgpu.alloc_semaphore{shape}"
        if source == "alloc_other_module":
            uses_helper = True
            helper.define("make_sems", ["def make_sems():", f"  return {make}"])
            main.imports.append(f"from {helper_name} import make_sems")
            make = "make_sems()"
        launch_lines += ["def run(x):", f"  sems = {make}", f"  return fn({_sem_ref(spec, 'sems', at_call=True)}, x)"]
    else:
        launch_lines += ["def run(x):", "  return fn(x)"]
    return _finish_sem(spec, name, main, helper, uses_helper, x, launch_lines, "run")


def _finish_sem(spec, name, main, helper, uses_helper, x, launch_lines, runner) -> dict[str, str]:
    args = f"(jnp.ones({x}, jnp.float32),)" if interpreted(spec) else "(X,)"
    target = ["def target():"] + indent(launch_lines) + [f'  return {_wrapped(runner, spec.wrapper)}, {args}, "{mode(spec)}"']
    prelude = [f'MODE = "{mode(spec)}"'] if mode(spec) in ("tpu", "sparsecore") else []  # meshes of a TPU are built under its abstract mesh
    return _files(spec, name, SEM_HEADER, main, helper if uses_helper else None,
                  prelude + [f"X = jax.ShapeDtypeStruct({x}, jnp.float32)"], target)
