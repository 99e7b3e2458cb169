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

# A second global semaphore is mostly the plain one: the count matters (PAL004), not its form.
PLAIN_WHAT_WEIGHT = 0.5


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


def uses_for(what: str) -> list[str]:
    kind = WHATS[what][1]
    if kind == "sem":
        return ["unused", "signal_wait", "signal", "read", "barrier_wait"]
    if kind == "array":
        return ["unused", "ref_read"]
    return ["unused"]


def normalize(spec: Spec) -> Spec:
    """The same spec with every choice that cannot go together replaced by one that can."""
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
        use = item.use if item.use in uses_for(item.what) else "unused"
        index = item.index if use in ("signal_wait", "signal", "read") else 0
        if use == "barrier_wait":
            index = 0
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


def random_spec(rng: random.Random) -> Spec:
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
    out = [f"entry:{spec.entry}", f"axes:{spec.axes}", f"interpret:{spec.interpret}",
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
        if item.use in ("signal_wait", "signal", "read"):
            out.append(f"index:{item.index}")
    return sorted(set(out))


def interpreted(spec: Spec) -> bool:
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
    return "triton" if spec.entry == "pallas_call" else "cuda"


def shrink_candidates(spec: Spec):
    """Simpler specs, one change each: an item dropped, or one choice moved to its axis's simplest."""
    for n in range(len(spec.items)):
        yield dataclasses.replace(spec, items=spec.items[:n] + spec.items[n + 1:])
    for field, choices in (("entry", ENTRIES), ("axes", AXES), ("axes_holder", AXES_HOLDERS),
                           ("interpret", INTERPRETS), ("wrapper", WRAPPERS), ("alias", ALIASES), ("out", OUTS),
                           ("run_scoped_alias", RUN_SCOPED_ALIASES), ("scoped_sem", SCOPED_SEMS)):
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
    ref_params = ["x_ref", "o_ref"] + (["s_ref"] if spec.out == "semaphore" else [])
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
        if spec.interpret == "force_context":
            run += ["  with plgpu.force_gpu_interpret_mode():", "    return fn(x)"]
        else:
            run += ["  return fn(x)"]
        launch += run
        runner = "run"
    wrapped = {"none": runner, "step": runner, "jit": f"jax.jit({runner})",
               "named_call": f'jax.named_call({runner}, name="kernel")', "checkpoint": f"jax.checkpoint({runner})",
               "vmap": f"jax.vmap({runner})"}[spec.wrapper]
    shape = "(2, 128)" if spec.wrapper == "vmap" else "(128,)"
    if interpreted(spec):
        args = f"(jnp.ones({shape}, jnp.float32),)"
    else:
        args = "(jax.ShapeDtypeStruct((2, 128), jnp.float32),)" if spec.wrapper == "vmap" else "(X,)"
    target = ["def target():"]
    if spec.interpret == "set_mode":
        target.append("  plgpu.set_gpu_interpret_mode()")
    target += indent(launch) + [f"  return {wrapped}, {args}, \"{mode(spec)}\""]

    text = [f'"""Generated kernel {name}: {" ".join(tags(spec))}."""', HEADER.rstrip("\n")]
    if spec.interpret == "environ":
        text.insert(1, "import os")
    text += sorted(set(main.imports))
    text += ["", "X = jax.ShapeDtypeStruct((128,), jnp.float32)"]
    for block in main.defs:
        text += ["", ""] + block
    text += ["", ""] + target
    if spec.interpret == "set_mode":
        text += ["", "", "def cleanup():", "  plgpu.set_gpu_interpret_mode(None)"]
    files = {f"{name}.py": "\n".join(text) + "\n"}
    if uses_helper:
        htext = [f'"""Helper module of generated kernel {name}."""', HEADER.rstrip("\n")]
        for block in helper.defs:
            htext += ["", ""] + block
        files[f"{helper_name}.py"] = "\n".join(htext) + "\n"
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
    if item.use == "ref_read":
        return [f"_ = {var}[...]"]
    raise ValueError(item.use)
