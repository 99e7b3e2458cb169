"""What a server's first diagnostics no longer wait for: jedi's environment loading beside the first
analysis (it shared the interpreter lock with it), and the garbage collection that restoring Python's
thresholds started before the diagnostics went out (`lsp/memory.py`)."""

import gc
import queue
import threading
import time

from conftest import jax_python
from pallas_lsp.analysis import environment, project as project_module
from pallas_lsp.analysis.project import Project
from pallas_lsp.lsp import memory


class _ParkedEvent(threading.Event):
    """`environment_wanted`, saying when a thread starts waiting for it."""

    def __init__(self) -> None:
        super().__init__()
        self.parked = threading.Event()

    def wait(self, timeout=None):
        self.parked.set()
        return super().wait(timeout)


def test_jedis_environment_waits_until_wanted_and_the_path_is_probed_at_once(tmp_path, interpreter_runs, monkeypatch):
    """With jax and jaxlib installed (the tables of their modules answer their imports)."""
    loads = []
    real = project_module.load_environment
    monkeypatch.setattr(project_module, "load_environment", lambda path: loads.append(path) or real(path))
    project = Project(root=str(tmp_path), python=jax_python())
    project.environment_wanted = wanted = _ParkedEvent()
    done: queue.Queue = queue.Queue()
    project.load_environment_soon(lambda env, error: done.put((env, error)))
    started = time.monotonic()
    while not (wanted.parked.is_set() or loads):  # parked, or (a server that does not wait) loading
        assert time.monotonic() - started < 300, "the environment thread neither waited nor loaded"
        time.sleep(0.01)
    assert loads == [] and done.empty() and project._environment is None
    assert environment._probed.get(jax_python())  # the search path, which every analysis needs, is known
    assert len(interpreter_runs) == 1
    wanted.set()  # the server: a document's first diagnostics are out
    env, error = done.get(timeout=300)
    assert error is None and env is project._environment and loads == [jax_python()]


def test_without_jax_installed_jedis_environment_loads_at_once(tmp_path):
    """Imports of jax are jedi's to answer there (no installed module's table answers them): its process
    starts beside the first analysis."""
    import sys

    project = Project(root=str(tmp_path), python=sys.executable)  # the tests' interpreter: no jax
    assert not project_module._installed(environment.interpreter_sys_path(sys.executable), "jax")
    project.environment_wanted = wanted = _ParkedEvent()
    done: queue.Queue = queue.Queue()
    project.load_environment_soon(lambda env, error: done.put((env, error)))
    env, error = done.get(timeout=300)  # nobody set `environment_wanted`
    assert error is None and env is project._environment and not wanted.parked.is_set()


def test_an_analysis_asking_for_the_environment_lets_the_thread_load_it(tmp_path):
    project = Project(root=str(tmp_path), python=jax_python())
    assert not project.environment_wanted.is_set()
    assert project.environment.executable
    assert project.environment_wanted.is_set()


def test_a_first_analysis_leaves_pythons_thresholds_until_the_heap_is_settled():
    before = gc.get_threshold()
    try:
        with memory.collecting_less_often(until_settled=True):
            assert gc.get_threshold() == memory.FIRST_ANALYSIS_GC_THRESHOLD
        assert gc.get_threshold() == memory.FIRST_ANALYSIS_GC_THRESHOLD  # the diagnostics are not out yet
        with memory.collecting_less_often(until_settled=True):  # another document's first analysis meanwhile
            pass
        memory.settle_heap()
        assert gc.get_threshold() == before
        memory.restore_collections()  # nothing left to restore
        assert gc.get_threshold() == before
        with memory.collecting_less_often():  # the in-process benches: restored at the end
            assert gc.get_threshold() == memory.FIRST_ANALYSIS_GC_THRESHOLD
        assert gc.get_threshold() == before
    finally:
        memory.restore_collections()
        gc.set_threshold(*before)
        gc.unfreeze()
