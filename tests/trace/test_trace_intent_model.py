"""What a trace request means, read from the kernel model (intent.py), for the forms the CLI and
LSP tests do not cover: a body launched from another module, a decorated body, a factory, interpret
mode switched on by a context or a module-level switch. Real jedi against the jax environment;
nothing is executed (the traces of these forms run in test_trace_intent.py)."""

import textwrap

from pallas_lsp.analysis import Project
from pallas_lsp.trace.intent import plan_trace

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""


def plan(ws, source, where, name="kernel.py", **others):
    for other, text in others.items():
        ws.write(f"{other}.py", text)
    path = ws.write(name, HEADER + textwrap.dedent(source))
    project = Project(root=str(ws.root), python=ws.python)
    text = path.read_text()
    if isinstance(where, str) and where.startswith("line of "):
        where = next(i for i, line in enumerate(text.splitlines()) if where[len("line of "):] in line)
    return plan_trace(project, str(path), text, where)


def test_a_body_launched_in_another_module_is_traced_there(ws):
    found = plan(ws, """
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0
        """, "line of o_ref[...]", name="bodies.py",
        launch=HEADER + "from bodies import body\n\n\ndef run(x):\n    return plgpu.kernel(body, out_type=X)(x)\n")
    assert (found.function, found.target.path) == ("run", str(ws.root / "launch.py"))
    assert found.annotate({})["traced_because"] == (
        "body (line 8) is a kernel body: traced through run in launch.py (line 10), which launches the kernel that runs it")


def test_a_decorated_body_is_its_own_launch(ws):
    found = plan(ws, """
        @plgpu.kernel(out_type=X)
        def doubled(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0
        """, "line of o_ref[...]")
    assert (found.function, found.choices) == ("doubled", [])
    assert "traced_because" not in found.annotate({})  # it is traced as itself


def test_a_helper_of_a_body_is_traced_as_itself_by_name_and_through_the_kernel_from_a_line_in_it(ws):
    source = """
        def body(x_ref, o_ref):
            o_ref[...] = scale(x_ref[...])


        def scale(value):
            return value * 2.0


        # pallas-lsp: trace(f32[128])
        doubled = plgpu.kernel(body, out_type=X)
        """
    named = plan(ws, source, "scale")  # it takes arrays: `jnp` code the host may run too
    assert (named.function, named.annotate({}).get("traced_because")) == ("scale", None)
    inside = plan(ws, source, "line of return value * 2.0")
    assert inside.function == "doubled"
    assert inside.annotate({})["traced_because"] == (
        "scale (line 12) is kernel code (reached from the body body): traced through doubled (line 17), which is "
        "the kernel that runs it")


def test_a_lambda_body_is_traced_through_its_kernel(ws):
    found = plan(ws, """
        # pallas-lsp: trace(f32[128])
        doubled = plgpu.kernel(lambda x_ref, o_ref: o_ref.__setitem__(..., x_ref[...] * 2.0), out_type=X)
        """, "line of lambda")
    assert found.function == "doubled"
    assert found.annotate({})["traced_because"] == (
        "<lambda> (line 9) is a kernel body: traced through doubled (line 9), which is the kernel that runs it")


FACTORY = """
def body(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def make():
    return plgpu.kernel(body, out_type=X)
"""


def test_a_factory_is_not_a_launch_the_function_calling_it_is(ws):
    assert plan(ws, FACTORY + "\n\ndef run(x):\n    return make()(x)\n", "body").function == "run"


def test_a_body_no_launch_runs_is_not_traced_as_a_function(ws):
    found = plan(ws, FACTORY, "body")
    assert found.function is None
    assert found.intent.problem == (
        "body (line 8) is a kernel body, which JAX calls with refs, not arrays, and no module-level function or "
        "name that launches its kernel was found: trace the function that launches it, by name")


def test_interpret_mode_from_a_context_counts_where_the_trace_runs_it(ws):
    source = """
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0


        kernel = plgpu.kernel(body, out_type=X)


        def interpreted(x):
            with plgpu.force_gpu_interpret_mode():
                return kernel(x)


        def compiled(x):
            return kernel(x)
        """
    assert plan(ws, source, "interpreted").platform.reason == (
        "host: the kernel runs in interpret mode, with plgpu.force_gpu_interpret_mode() (line 16), so it is traced "
        "as it runs, on the CPU (platform cuda lowers it for a GPU instead)")
    assert plan(ws, source, "compiled").platform.name == "cuda"  # the context is in another function


def test_a_module_level_switch_counts_unless_only_main_runs_it(ws):
    kernel = textwrap.dedent("""
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0


        kernel = plgpu.kernel(body, out_type=X)
        """)
    assert plan(ws, "plgpu.set_gpu_interpret_mode(True)\n" + kernel, "kernel").platform.name == "host"
    guarded = kernel + '\n\nif __name__ == "__main__":\n    plgpu.set_gpu_interpret_mode(True)\n'
    assert plan(ws, guarded, "kernel").platform.name == "cuda"
