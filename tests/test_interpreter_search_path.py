"""The interpreter's search path, learnt from one run of it (`environment.interpreter_sys_path`),
is the one jedi's process reports: the workspace import index searches where jedi would, without
waiting for jedi's process to start."""

import sys

import pytest

from conftest import jax_python
from pallas_lsp.analysis import environment


@pytest.mark.parametrize("which", ["jax", "this"])
@pytest.mark.parametrize("safe_path", [False, True])
def test_the_probed_path_is_jedis(which, safe_path, monkeypatch, interpreter_runs):
    python = jax_python() if which == "jax" else sys.executable
    if safe_path:  # no script folder first, in either process
        monkeypatch.setenv("PYTHONSAFEPATH", "1")
    else:
        monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    probed = environment.interpreter_sys_path(python)
    assert len(interpreter_runs) == 1
    import jedi

    jedis = [str(p) for p in jedi.create_environment(python, safe=False).get_sys_path()]
    assert probed == jedis
    assert environment.interpreter_sys_path(python) == probed and len(interpreter_runs) == 1  # kept


def test_an_interpreter_that_cannot_run_is_refused_each_time(tmp_path, interpreter_runs):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    for _ in range(2):  # not kept: the user may fix it
        with pytest.raises(environment.EnvironmentError_, match="not a working Python interpreter"):
            environment.interpreter_sys_path(str(broken))
    assert len(interpreter_runs) == 2
