"""What `pallas-lsp trace` says to a newcomer: a name the file does not have is a usage error
(exit 2, said before anything is imported), unlike a kernel JAX rejects (exit 1); the header reads
`f(f32[8])`, `main()` or `f (arguments not found)`; advice about missing arguments uses the
file's own shapes, one per parameter; and a kernel body is named by the same line throughout."""

import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, jax_python

pytestmark = pytest.mark.jax


def trace(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", *args, "--python", jax_python()],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


MODULE = textwrap.dedent("""\
    import pathlib

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    pathlib.Path("imported").write_text("the module ran")
    ROWS = jax.ShapeDtypeStruct((8, 64), jnp.float32)


    def add_one_kernel(x_ref, o_ref):
      o_ref[...] = x_ref[...] + 1.0


    def add_one(x):
      return pl.pallas_call(add_one_kernel, out_shape=ROWS, interpret=True)(x)


    def main():
      launch = add_one  # called under another name: no call of add_one(...) gives its arguments
      return launch(jnp.ones((8, 64), jnp.float32))
""")


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "k.py").write_text(MODULE)
    return tmp_path


def test_a_name_the_file_does_not_have_is_a_usage_error_before_anything_runs(folder):
    run = trace("k.py::add_on", cwd=folder)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == ("pallas-lsp: error: k.py: no module-level function or assignment named 'add_on' "
                          "(did you mean add_one?); its functions: add_one_kernel, add_one, main\n")
    assert not (folder / "imported").exists()  # the module was never imported


def test_a_kernel_jax_rejects_exits_1_not_2():
    run = trace("examples/kernels/pal001_global_buffer.py::scale", cwd=REPO)
    assert run.returncode == 1 and "FAILED (lower): NotImplementedError" in run.stdout


def test_the_header_of_a_function_without_parameters(folder):
    run = trace("k.py::main", cwd=folder)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "trace k.py::main()"


def test_missing_arguments_are_suggested_from_the_files_shapes(folder):
    run = trace("k.py::add_one", cwd=folder)
    assert run.returncode == 2
    lines = run.stdout.splitlines()
    assert lines[0] == "trace k.py::add_one (arguments not found)"
    assert lines[-1] == (
        "FAILED (args): ArgsNotFound: no arguments to trace add_one with: no '# pallas-lsp: trace(f32[8,64])' "
        "comment directly above line 15; parameter 'x' has no annotation; no call of add_one(...) in this file. "
        "Give them with --args \"f32[8,64]\" or a '# pallas-lsp: trace(f32[8,64])' comment above it.")


def test_a_kernel_body_is_named_by_one_line(folder):
    run = trace("k.py::add_one_kernel", "--args", "f32[8,64]", cwd=folder)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[1].startswith("add_one_kernel (line 11) is a kernel body: traced through add_one "
                                                 "(line 15)")
    run = trace("examples/kernels/good_semaphore_ordering.py::ordered_halves", cwd=REPO)  # Mosaic GPU: JAX's estimate
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].startswith("ordered_halves (line 23) is a kernel body")
    assert lines[-2].startswith("kernel ordered_halves (examples/kernels/good_semaphore_ordering.py:23): ")


def test_a_decorated_kernel_is_named_by_its_first_decorator_line():
    run = trace("tests/fixtures/trace/kernels.py::add_one", cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert "kernel add_one (tests/fixtures/trace/kernels.py:19): " in run.stdout  # @functools.partial(...), line 19
