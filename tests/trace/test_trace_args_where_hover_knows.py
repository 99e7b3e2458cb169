"""`trace FILE::launcher` with no `--args` finds the arguments wherever hovers know the types: over every
launcher in examples/ and tests/fixtures/kernel_types/ whose kernels' parameters all have a full type in
hovers (analysis/kernel_args.py, read from the launcher's call sites), tracing it without arguments
reaches JAX (real JAX 0.12, cross-lowered on the CPU): the call sites hovers read (another module's, a
`jax.eval_shape(f, ...)`, a `jax.jit(f).trace(...)`, Python values and keywords) give the arguments."""

import ast
import os
import subprocess
import sys

import pytest

from conftest import REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.analysis.kernel_args import kernel_parameters
from pallas_lsp.trace import trace_target
from pallas_lsp.trace.intent import launch_targets, plan_trace
from pallas_lsp.trace.worker import WorkerPool

pytestmark = pytest.mark.jax

FILES = sorted([*REPO.glob("examples/**/*.py"), *(REPO / "tests" / "fixtures" / "kernel_types").glob("*.py")])
NOT_RUN = ("args", "import", "resolve")  # stages before the launcher is called with its arguments


def fully_typed_launchers() -> list[tuple[str, str]]:
    """(file, launcher) for each launcher whose kernels' every parameter has a type with no `?`."""
    found = []
    for path in FILES:
        project = Project(root=str(path.parent), python=jax_python())
        for target in launch_targets(project, str(path), path.read_text()):
            params = [p for entry in target.kernels for p in kernel_parameters(project, entry)]
            if params and all("?" not in p.picture for p in params) and _called_or_annotated(project, path, target):
                found.append((str(path.relative_to(REPO)), target.name))
    return found


def _called_or_annotated(project, path, target) -> bool:
    """Whether anything gives this launcher its own arguments: a call site (hovers read), or annotations. A
    launcher nothing calls (`def launch_elsewhere(x): return launch(x)`) shows its kernel's types only because
    another launcher's call site gives them: there are no arguments of its own to find."""
    node = target.statement
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    if not params or any(a.annotation is not None for a in params):  # a test function takes none
        return True
    model = project.model(str(path))
    return next(iter(project.evaluator.call_sites_with_nodes(model, node)), None) is not None


LAUNCHERS = fully_typed_launchers()


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool()
    yield pool
    pool.shutdown()


def test_the_corpus_has_launchers_from_every_kind_of_call_site():
    names = {f"{os.path.basename(path)}::{name}" for path, name in LAUNCHERS}
    assert len(LAUNCHERS) >= 30
    assert {"kernels.py::scaled_rows", "kt_lib_kernels.py::relu", "eval_shape_launch.py::residual",
            "gpu_kernel_traced.py::copy", "dtype_argument.py::cast", "helper_chain.py::_launch",
            "flash_like.py::attention"} <= names


@pytest.mark.parametrize("path, launcher", LAUNCHERS, ids=[f"{p}::{n}" for p, n in LAUNCHERS])
def test_tracing_a_launcher_hovers_type_needs_no_args(pool, path, launcher):
    full = str(REPO / path)
    text = (REPO / path).read_text()
    project = Project(root=os.path.dirname(full), python=jax_python())
    plan = plan_trace(project, full, text, launcher)
    assert plan.function == launcher, plan.intent.problem
    result = trace_target(pool, jax_python(), os.path.dirname(full), full, launcher, platform=plan.platform.name,
                          compile=False, source=text, infer_args=plan.infer_args)
    error = result.get("error") or {}
    assert error.get("stage") not in NOT_RUN, error  # JAX traced the launcher with the arguments found
    assert result.get("ok") or error.get("stage") in ("trace", "lower"), error
    assert result["args_source"], result


def test_the_cli_traces_a_launcher_called_from_a_test_module_without_args():
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", "examples/in_the_loop/kernels.py::scaled_rows",
                          "--python", jax_python()], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "call on line 22 of test_kernels.py" in run.stdout
    assert "scaled_rows(f32[8,128], 2.0)" in run.stdout  # the float the call passes, bound as it is
