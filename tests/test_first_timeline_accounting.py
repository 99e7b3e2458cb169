"""bench/lsp_first_timeline.py's accounting of a first publish's wall time, from the steps a server logs:
each thread's CPU over the span (an environment thread that ended inside it counted to its end), the
analysis thread's run-queue wait and blocked time, the imports that asked jedi, the collector's CPU."""

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

import lsp_first_timeline  # noqa: E402

LOG = """\
1.000 1.000 MainThread didOpen
1.000 1.000 MainThread threads-opened {"MainThread":[1.0,0.1],"pallas-environment":[0.02,0.0]}
1.001 1.001 pallas-analysis_0 analysis-start
1.300 1.250 pallas-environment jedi-environment-loaded
1.300 1.250 pallas-environment environment-threads {"MainThread":[1.001,0.1],"pallas-environment":[0.09,0.01],"pallas-analysis_0":[0.2,0.05]}
2.000 1.800 pallas-analysis_0 analysis-end 0.700
2.000 1.800 pallas-analysis_0 jedi-asked 1 0.300 0.050
2.000 1.800 pallas-analysis_0 collected 3 0.020
2.000 1.800 pallas-analysis_0 analysis-complete
2.010 1.805 MainThread threads-published {"MainThread":[1.003,0.1],"pallas-analysis_0":[0.72,0.2]}
2.010 1.805 MainThread published
"""


def test_the_first_publish_is_accounted_thread_by_thread(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(LOG)
    found = lsp_first_timeline.timeline(str(log))
    assert round(found["wall_s"], 3) == 1.01 and round(found["server_cpu_s"], 3) == 0.805
    assert found["thread_cpu_s"] == {"MainThread": 0.003, "pallas-environment": 0.07, "pallas-analysis_0": 0.72}
    assert found["analysis_run_queue_s"] == 0.2
    assert found["analysis_blocked_s"] == 0.09  # 1.01 s of wall, 0.72 s on a CPU, 0.2 s waiting for one
    assert (found["jedi_asked"], found["jedi_wall_s"], found["jedi_analysis_cpu_s"]) == (1, 0.3, 0.05)
    assert (found["collections"], found["collections_cpu_s"]) == (3, 0.02)


def test_a_log_without_the_thread_steps_gives_the_timeline_alone(tmp_path):
    log = tmp_path / "server.log"  # a server run from an older checkout's bench (`--source` keeps this one)
    log.write_text("\n".join(line for line in LOG.splitlines() if "threads" not in line) + "\n")
    found = lsp_first_timeline.timeline(str(log))
    assert "thread_cpu_s" not in found and round(found["wall_s"], 3) == 1.01
