"""The benchmark scripts keep working: each runs in a tiny mode and reports well-formed numbers.

No timing is asserted here (performance targets live in bench/ and docs/benchmarks.md); what is
asserted is what the scripts measure through the real server and CLI: the diagnostics they saw.
"""

import ast
import json
import math
import subprocess
import sys

import pytest

from conftest import REPO, jax_python

pytestmark = [pytest.mark.slow, pytest.mark.jax]

BENCH = REPO / "bench"
EXAMPLE_BAD = REPO / "examples" / "kernels" / "pal001_global_buffer.py"
EXAMPLE_FILES = sorted((REPO / "examples" / "kernels").glob("*.py"))
EXAMPLE_FINDINGS = {f"PAL{path.name[3:6]}": 1 for path in EXAMPLE_FILES if path.name.startswith("pal")}  # one a rule


def run_bench(script: str, *args: str, timeout: float = 600) -> dict:
    run = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True,
                         timeout=timeout, env={**__import__("os").environ, "PALLAS_LSP_JAX_PYTHON": jax_python()})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def assert_stats(stats: dict, n: int) -> None:
    assert stats["n"] == n
    for key in ("median", "p95", "min", "max", "q1", "q3"):
        assert math.isfinite(stats[key]) and stats[key] > 0, (key, stats)
    assert stats["min"] <= stats["q1"] <= stats["median"] <= stats["q3"] <= stats["max"]


@pytest.fixture(scope="module")
def small_generated(tmp_path_factory):
    """A 1,200-line generated module (three planted bugs) and its planted findings."""
    out = tmp_path_factory.mktemp("bench") / "kernels.py"
    run = subprocess.run([sys.executable, str(BENCH / "make_big_file.py"), "--lines", "1200", "--out", str(out)],
                         capture_output=True, text=True, check=True)
    planted = json.loads(run.stdout.splitlines()[-1])
    return out, planted


def test_generator_is_deterministic_valid_python_with_planted_bugs(small_generated, tmp_path):
    out, planted = small_generated
    again = tmp_path / "again.py"
    subprocess.run([sys.executable, str(BENCH / "make_big_file.py"), "--lines", "1200", "--out", str(again)], check=True,
                   capture_output=True)
    assert again.read_text() == out.read_text()
    ast.parse(out.read_text())
    assert planted["lines"] >= 1200 and planted["planted"] == {"PAL001": 2, "PAL002": 1}


def test_lsp_latency_reports_edit_latencies_and_the_planted_diagnostics(small_generated, tmp_path):
    out, planted = small_generated
    result = run_bench("lsp_latency.py", "--edits", "3", "--warmup", "0", "--file", str(out), "--json",
                       str(tmp_path / "latency.json"))
    (measured,) = result["files"]
    assert_stats(measured["edit_ms"], 3)
    assert measured["first_analysis_ms"] > 0
    assert measured["diagnostics"] == [sum(planted["planted"].values())]
    assert json.loads((tmp_path / "latency.json").read_text()) == result
    sys.path.insert(0, str(BENCH))
    from run_all import summarize

    (row,) = [line for line in summarize(tmp_path).splitlines() if line.startswith("| latency")]
    assert f"edit→publish (ms, n=3) | {measured['edit_ms']['median']:.0f} |" in row


def test_notebook_latency_rechecks_every_cell_of_the_50_cell_notebook():
    result = run_bench("notebook_latency.py", "--edits", "3", "--warmup", "0")
    assert (result["cells"], result["code_cells"]) == (50, 33)
    # Each edit: kernel 3's SMEM tile (PAL001 on its get_global, PAL005 on its signal and its wait: JAX
    # checks those while tracing) among the 33 code cells published, and in the file.
    assert result["findings_cells_published_file_findings"] == [[3, 33, 3]]
    assert_stats(result["edit_ms"], 3)
    assert_stats(result["same_module_as_file_ms"], 3)


def test_edit_latency_big_file_times_each_edit_kind_against_ast_parse(small_generated, tmp_path):
    out, planted = small_generated
    result = run_bench("edit_latency_big_file.py", "--file", str(out), "--rounds", "2", "--broken", "1")
    found = sum(planted["planted"].values())
    assert result["diagnostics_at_open"] == found
    assert result["diagnostics_by_kind"] == {"type": [found], "new_line": [found], "delete_line": [found],
                                             "helper_bad": [found + 3], "helper_good": [found]}
    assert_stats(result["edit_ms"], 10)
    assert result["ast_parse_ms"]["n"] == 3 and result["ast_parse_ms"]["median"] > 0
    kinds = ["break", "repair", "bracket_open", "bracket_close", "bracket_gone", "quote_open", "quote_close", "quote_gone"]
    assert [kind for kind, _ in result["syntax_error_ms"]] == kinds
    assert result["pal000_by_kind"] == {kind: [1 if kind in ("break", "bracket_open", "quote_open") else 0]
                                        for kind in kinds}


def test_cold_start_reports_process_start_to_first_diagnostics():
    result = run_bench("cold_start.py", "--runs", "2", "--file", str(EXAMPLE_BAD), "--root", str(EXAMPLE_BAD.parent))
    (measured,) = result["files"]
    assert_stats(measured["cold_start_ms"], 2)
    assert_stats(measured["initialize_answered_ms"], 2)
    assert_stats(measured["first_start_ms"], 2)  # with an empty cache folder
    assert_stats(result["python_startup_ms"], 2)
    assert_stats(result["import_server_ms"], 2)
    assert measured["initialize_answered_ms"]["min"] < measured["cold_start_ms"]["max"]
    assert measured["diagnostics"] == [1]
    assert measured["ratio_to_python_startup"] > 1


def test_server_memory_reads_the_servers_peak_after_opening_files():
    result = run_bench("server_memory.py", "--runs", "1", "--limit", "3", "--no-big")
    (run,) = result["runs"]
    assert run["files"] == 3 and run["diagnostics"] == 0  # jax's own Pallas files are clean
    assert 0 < run["server_vmrss_mib"] <= run["server_vmhwm_mib"] == result["server_vmhwm_mib"]["median"]


def test_corpus_check_times_check_against_ast_parse_and_jax_finding_one_error():
    result = run_bench("corpus_check.py", "--runs", "1", "--no-big", "--paths", str(EXAMPLE_BAD.parent))
    assert result["findings"] == EXAMPLE_FINDINGS
    assert result["jax_error"].startswith("NotImplementedError: get_global only supports semaphores")
    for key in ("check_s", "ast_parse_process_s", "jax_discover_one_error_process_s"):
        assert_stats(result[key], 1)
    assert result["ratio_check_to_ast_parse"] > 0 and result["ratio_check_to_jax_one_error"] > 0


def test_kernel_types_counts_the_corpus_and_times_inlay_hints():
    corpus = REPO / "tests" / "fixtures" / "kernel_types"
    files = [str(corpus / "two_call_sites.py"), str(corpus / "whole_array_smem.py")]
    result = run_bench("kernel_types.py", *files)
    assert {k: result[k] for k in ("files", "parameters", "exact", "wrong")} == {
        "files": 2, "parameters": 8, "exact": 8, "wrong": 0}
    timed = run_bench("kernel_types.py", "--latency", "1", *files)
    assert_stats(timed["inlay_hints_ms"], 2)


def test_profiler_prints_the_hot_functions():
    run = subprocess.run([sys.executable, str(BENCH / "profile_analysis.py"), str(EXAMPLE_BAD), "--edits", "2", "--top", "5", "--sort", "cumulative",
                          "--python", jax_python()], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "re-analysis (profiled) ms" in run.stdout and "analyze" in run.stdout


def test_fix_cost_times_check_of_the_fix_heavy_files_and_one_fix_request(tmp_path):
    result = run_bench("fix_cost.py", "--runs", "1", "--kernels", "8", "--lines", "600", "--only", "many_kernels",
                       "--in-process", "--requests", "1", "--out", str(tmp_path))
    many = result["files"]["many_kernels"]
    assert many["findings"] == [2]  # one kernel in four has a bug
    assert_stats(many["check_ms"], 1)
    assert_stats(many["parse_ms"], 1)
    assert (many["in_process"]["findings"], many["in_process"]["with_a_fix"]) == (2, 1)
    assert_stats(many["in_process"]["fixes_per_request_ms"], 1)


def test_fix_memory_long_line_reads_the_peak_of_check_and_of_check_diff(tmp_path):
    result = run_bench("fix_memory_long_line.py", "--runs", "1", "--size", "60000", "--line", "20000",
                       "--source", str(REPO), "--out", str(tmp_path))
    assert 59_000 < result["size_bytes"] <= 60_100
    for name in ("check", "check_diff", "source_check_diff"):
        assert result[name]["ended"] == ["exit 1"]
        assert_stats(result[name]["peak_mib"], 1)
        assert_stats(result[name]["s"], 1)
    assert result["check_diff"]["fixed"] and result["source_check_diff"]["fixed"] and not result["check"]["fixed"]


def test_big_workspace_compares_the_kernel_file_in_the_tree_and_alone(tmp_path):
    result = run_bench("big_workspace.py", "--runs", "1", "--files", "40", "--out", str(tmp_path / "tree"))
    assert result["workspace_py_files"] == 41 and result["diagnostics"] == 1
    for name in ("server_big_cold", "server_alone_warm", "check_big_warm", "check_alone_cold"):
        assert_stats(result[name], 1)
    assert math.isfinite(result["ratio_server_warm"]) and math.isfinite(result["ratio_check_cold"])


def test_check_scale_reports_one_process_every_core_and_ast_parse(tmp_path):
    examples = str(REPO / "examples" / "kernels")
    result = run_bench("check_scale.py", "--runs", "1", "--mixed", examples, "--pallas", examples)
    for corpus in result["corpora"].values():
        assert corpus["files"] == len(EXAMPLE_FILES) and corpus["findings"] == EXAMPLE_FINDINGS
        for key in ("check_jobs1_cpu", "check_wall", "ast_parse_cpu"):
            assert_stats(corpus[key], 1)
        assert math.isfinite(corpus["ratio_cpu_check_to_ast_parse"])


def test_check_scale_first_runs_against_another_checkout(tmp_path):
    examples = str(REPO / "examples" / "kernels")
    result = run_bench("check_scale.py", "--runs", "1", "--corpus", "mixed", "--mixed", examples,
                       "--empty-cache", "--source", str(REPO))
    corpus = result["corpora"]["mixed"]
    assert result["empty_cache"] and "check_jobs1_first_run" not in corpus  # every run is a first run
    assert corpus["findings"] == EXAMPLE_FINDINGS and corpus["same_findings_as_before"]
    for key in ("check_jobs1_cpu", "before_check_jobs1_cpu", "before_check_cpu", "ast_parse_cpu"):
        assert_stats(corpus[key], 1)
    assert math.isfinite(corpus["before_ratio_cpu_check_to_ast_parse"])


def test_big_document_memory_reads_the_servers_memory_around_a_documents_edits():
    result = run_bench("big_document_memory.py", "pallas", "--size", "300000", "--edits", "2")
    assert (result["kind"], result["edits"], result["diagnostics"]) == ("pallas", 2, 0)
    assert 290_000 < result["size_bytes"] <= 300_000 and result["lines"] > 1500  # analysed incrementally
    assert 0 < result["baseline_rss_mib"] and result["after_edits_rss_mib"] <= result["hwm_mib"]
    assert math.isfinite(result["growth_over_size"]) and result["total_s"] >= result["open_s"] > 0


def test_glob_match_walks_the_tree_and_times_the_hostile_pattern_in_both_checkouts():
    result = run_bench("glob_match.py", "--files", "120", "--runs", "1", "--lengths", "8", "12", "--source", str(REPO))
    assert result["now_walked"] == result["before_walked"] == 120  # Python.gitignore leaves none of them out
    for name in ("now", "before"):
        assert result[f"{name}_walk_s"] > 0 and set(result[f"{name}_hostile_s"]) == {"8", "12"}
        assert all(seconds > 0 for seconds in result[f"{name}_hostile_s"].values())


def test_vendored_core_compares_core_py_with_the_same_file_named_kern_py():
    result = run_bench("vendored_core.py", "--runs", "1")
    for kind in ("first run", "later runs"):
        assert_stats(result[kind]["core.py"], 1)
        assert_stats(result[kind]["kern.py"], 1)
        assert result[kind]["ratio core/kern (medians)"] > 0
    lines = result["importer_search (--verbose, first run)"]
    assert lines["core.py"].startswith("pallas-lsp: debug: importers of core: 0 of the ")
    assert int(lines["core.py"].split(" of the ")[1].split()[0]) > 100  # jax's own files naming a `core`
    assert lines["kern.py"].startswith("pallas-lsp: debug: importers of kern: 0 of the 0 files")


def test_jax_in_the_loop_reports_check_and_run_entry_points_times():
    result = run_bench("jax_in_the_loop.py", "--runs", "1")
    assert result["launches"] == 4
    for stats in [*result["check_seconds"].values(), *result["run_entry_points_seconds"].values()]:
        assert stats["median"] > 0 and stats["n"] >= 1


def test_jax_in_the_loop_times_the_editors_save_to_jax_results_and_keystrokes_during_a_run():
    result = run_bench("jax_in_the_loop.py", "--only", "lsp", "--rounds", "1", "--keystrokes", "2")
    server = result["server"]
    assert_stats(server["save_to_jax_results_seconds"], 1)  # the diagnostics held JAX's PAL100
    assert_stats(server["keystroke_ms"]["keystroke_idle"], 2)


def test_check_trace_realistic_scores_verdicts_false_alarms_and_lines():
    result = run_bench("check_trace_realistic.py", "--only", "good_regular", "bad_from_import", "config_dataclass_ok",
                       "config_dataclass_bad_shape")
    assert (result["files"], result["verdict_obtained"], result["false_alarms"]) == (4, 4, 0), result["misses"]
    assert (result["rejected_with_a_line"], result["right_line"]) == (2, 2), result["misses"]
