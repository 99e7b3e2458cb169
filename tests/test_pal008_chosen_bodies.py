"""A kernel body chosen at run time (`a if flag else b`, `custom or default`, `BODIES[name]`,
`getattr(self, f"_{name}_kernel")`, a partial of a choice, a factory called with a flag, a lambda around a choice):
the analyser either knows every body it may be, or stays silent. Never PAL008 ("runs outside the kernel") on a
function that may be the body: JAX runs it in the kernel (the agreement fixtures `*body_chosen*`, run through JAX).

Each fixture is checked without its `target()`: a call site there (`partial(run, double=True)`) would decide the
flag, and real code launches with flags nobody here gives."""

import ast

import pytest

from conftest import FIXTURES
from pallas_lsp.analysis.kernels import KernelIndex

AGREEMENT = FIXTURES / "agreement"
GOOD = sorted(p.name for p in AGREEMENT.glob("good_body_chosen_*.py"))
# The bodies of the launch where the analyser follows the choice (`BODIES.get(name, copy_body)` it does not: silence).
BOTH = ("copy_body", "double_body")
KNOWN = {
    "good_body_chosen_ifexp.py": BOTH,
    "good_body_chosen_boolor.py": ("copy_body",),  # `body or copy_body`, and nothing passes a body
    "good_body_chosen_dictlookup.py": BOTH,
    "good_body_chosen_listlookup.py": BOTH,
    "good_body_chosen_getattr_method.py": ("_copy_kernel", "_double_kernel"),
    "good_body_chosen_partial_ifexp.py": BOTH,
    "good_body_chosen_factory.py": BOTH,
    "good_body_chosen_lambda_ifexp.py": ("<lambda>",),  # the lambda is the body; it calls either
    "good_body_chosen_decorated_launch.py": ("kernel",),  # the kernel defined in the launcher calls either
}

def without_target(name: str) -> str:
    source = (AGREEMENT / name).read_text()
    return source[:source.index("\n\ndef target")] + "\n"


def at(source: str, text: str) -> str:
    line = next(i for i, row in enumerate(source.splitlines(), 1) if text in row)
    column = source.splitlines()[line - 1].index(text) + 1
    return f"{line}:{column}-{line}:{column + len(text)}"


@pytest.mark.parametrize("name", GOOD)
def test_no_finding_on_a_body_chosen_at_run_time(ws, name):
    assert ws.check("kernels.py", without_target(name)) == []


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_each_body_a_choice_may_give_is_a_kernel(ws, name):
    ws.findings("kernels.py", without_target(name))
    model = ws.project.model(str(ws.root / "kernels.py"))
    bodies = sorted(getattr(entry.body.node, "name", "<lambda>") for entry in KernelIndex.of(ws.project, model).entries
                    if entry.body is not None)
    assert tuple(bodies) == KNOWN[name]


def test_a_conditional_expression_choosing_the_body_reaches_the_helper_inside_the_kernel(ws):
    """JAX's TPU error for the helper's VMEM get_global (PAL001), as for the statement form; not PAL008."""
    source = without_target("bad_body_chosen_ifexp_helper_get_global_vmem.py")
    assert [(code, where) for code, where, _ in ws.check("kernels.py", source)] == [
        ("PAL001", at(source, "pl.get_global(pltpu.VMEM((8, 128), jnp.float32))"))]


def test_an_interpreted_kernel_whose_body_is_looked_up_by_name_is_checked_as_each_body(ws):
    """`pl.pallas_call(BODIES[name], interpret=True)`, `name` unknown: both bodies reach the helper's get_global,
    which the interpreter cannot lower (PAL002), where before the body was unknown and the helper was taken for host
    code (PAL008)."""
    source = without_target("bad_body_chosen_by_name_get_global_interpret.py")
    assert [(code, where) for code, where, _ in ws.check("kernels.py", source)] == [
        ("PAL002", at(source, "pl.get_global(plgpu.SemaphoreType.REGULAR)"))]


CHOICES_NOT_FOLLOWED = {
    "a registry filled by calls": """
        _REGISTRY = {}

        def register(name, body):
          _REGISTRY[name] = body

        register("copy", copy_body)
        register("double", double_body)

        def run(x, name):
          return plgpu.kernel(_REGISTRY[name], out_type=X)(x)
        """,
    "getattr of a module by a name the caller gives, or a default": """
        import sys

        def run(x, name):
          body = getattr(sys.modules[__name__], name, None) or copy_body
          return plgpu.kernel(body, out_type=X)(x)
        """,
    "a dict keyed by a flag": """
        def run(x, double):
          body = {True: double_body, False: copy_body}[double]
          return plgpu.kernel(body, out_type=X)(x)
        """,
    "a lambda calling a body looked up in a dict the launcher builds": """
        def run(x, name):
          bodies = {"copy": copy_body, "double": double_body}
          return plgpu.kernel(lambda x_ref, o_ref: bodies[name](x_ref, o_ref), out_type=X)(x)
        """,
    "a match statement": """
        def run(x, op):
          match op:
            case "double":
              body = double_body
            case _:
              body = copy_body
          return plgpu.kernel(body, out_type=X)(x)
        """,
}


@pytest.mark.parametrize("shape", sorted(CHOICES_NOT_FOLLOWED))
def test_other_choices_of_the_body_give_no_finding(ws, shape):
    """Followed or not, a body chosen these ways is never taken for code outside the kernel."""
    bodies = without_target("good_body_chosen_ifexp.py")
    bodies = bodies[:bodies.index("\n\ndef run")] + "\n"
    source = bodies + "\n" + "\n".join(line[8:] for line in CHOICES_NOT_FOLLOWED[shape].splitlines())
    ast.parse(source)
    assert ws.check("kernels.py", source) == []
