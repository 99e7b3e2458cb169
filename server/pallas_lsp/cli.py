"""`pallas-lsp check` for CI (exit 1 on errors, 0 clean, 2 on usage or internal errors)."""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import textwrap
import traceback

from . import __version__
from .quoting import quoted_name, visible
from .lsp.serve_options import add_serve_arguments

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse already exits 2; keep its usage line, say it plainly
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"pallas-lsp: error: {visible(message)}\n")


def _say(kind: str, message: str) -> None:
    """`pallas-lsp: warning: ...` on one line: a control character that a name brought into the
    message (an exception's text, a setting's path) is escaped, never sent to the terminal raw."""
    print(f"pallas-lsp: {kind}{': ' if kind else ''}{visible(message)}", file=sys.stderr)


def _warn(message: str) -> None:
    _say("warning", message)


def _error(message) -> None:
    _say("error", str(message))


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of processes, 1 or more: {text!r}")
    return value


CHECK_EPILOG = """\
exit status:
  0  no error-severity finding (warnings may be printed)
  1  an error-severity finding, or a fix that could not be written
  2  usage error (unknown option, missing path, unusable --python, invalid settings) or internal error

settings: [tool.pallas-lsp] in the nearest pyproject.toml above the first PATH (select, ignore,
per-file-ignores, python, platform, exclude, extend-exclude); flags win over it. -v says which file
was read. Suppress one finding with `# noqa: PAL001` on its line, a whole file with
`# pallas-lsp: noqa` (or `# pallas-lsp: noqa: PAL001`) on a line of its own.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pallas-lsp", description="Catch broken JAX Pallas GPU kernels.")
    parser.add_argument("--version", action="version", version=f"pallas-lsp {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check = commands.add_parser("check", help="check files and folders (recursively, *.py and *.ipynb)",
                                description=textwrap.fill("Check Python files and notebooks for broken Pallas "
                                                          "kernels, as ruff checks them: one line per finding, then "
                                                          "a summary.", 79),
                                epilog=CHECK_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="files and folders to check; folders recursively (*.py, *.ipynb), leaving out what "
                            ".gitignore, exclude settings and virtual environments leave out; default: the current "
                            "folder")
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                       help="text: `path:line:col: CODE message` lines and a summary (default); json: one array, an "
                            "object per finding; sarif: SARIF 2.1.0 for code scanning")
    check.add_argument("--python", metavar="PATH",
                       help="interpreter or virtual environment of the analysed project "
                            "(default: [tool.pallas-lsp] python, else $VIRTUAL_ENV, else this interpreter)")
    check.add_argument("--select", metavar="CODES", help="comma-separated rule codes or prefixes to enable")
    check.add_argument("--ignore", metavar="CODES", help="comma-separated rule codes or prefixes to disable")
    check.add_argument("--no-jedi", action="store_true",
                       help="resolve names from the file's own imports only (no environment inference)")
    check.add_argument("-j", "--jobs", type=_jobs, default=0, metavar="N",
                       help="worker processes over files (default: one per CPU; 1: everything in this process)")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="say which interpreter and jax version the files are analysed against, where the "
                            "settings come from and how many files are checked; then log details to stderr")
    check.add_argument("--fix", action="store_true", help="apply the safe fixes, then report what remains")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix or --diff, apply unsafe fixes too (alone it does nothing, and says so)")
    check.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff instead of writing them (exit 1 if there are any); "
                            "as in ruff it writes nothing, also with --fix (which it then says it ignores)")
    _add_entry_arguments(check)
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    add_serve_arguments(serve)
    _add_trace_parser(commands)
    rule = commands.add_parser("rule", help="print a rule's page (pallas-lsp rule PAL001), or list the rules (--all)",
                               description="Print a rule's documentation page, as `ruff rule` does.")
    rule.add_argument("code", nargs="?", metavar="CODE", help="a rule code (PAL001) or name (get-global-not-semaphore)")
    rule.add_argument("--all", action="store_true", help="list every rule: code, name, what it reports")
    _add_types_parser(commands)
    return parser


def _add_entry_arguments(parser) -> None:
    """`--trace` and its limits, for `check` and `types` (docs/jax-in-the-loop.md)."""
    parser.add_argument("--trace", action="store_true",
                        help="also run the project's entry points under PATH (tests, __main__ blocks, annotated "
                             "functions) with every Pallas launch they reach lowered by JAX instead of run: "
                             "EXECUTES YOUR CODE (docs/jax-in-the-loop.md)")
    parser.add_argument("--entry-timeout", type=_positive_seconds, default=60.0, metavar="SECONDS",
                        help="with --trace: time limit of each entry point (default 60)")
    parser.add_argument("--memory-limit", type=_non_negative_int, default=None, metavar="MB",
                        help="with --trace: address space each entry point may add beyond jax's own "
                             "(default 8192, or $PALLAS_LSP_TRACE_MEMORY_MB; 0: no limit)")


def _add_types_parser(commands) -> None:
    types = commands.add_parser("types", help="print the type of every kernel body parameter (inferred, or traced)")
    types.add_argument("paths", nargs="+", metavar="PATH")
    types.add_argument("--format", choices=("text", "json"), default="text")
    types.add_argument("--python", metavar="PATH",
                       help="interpreter or virtual environment of the analysed project "
                            "(default: [tool.pallas-lsp] python, else $VIRTUAL_ENV, else this interpreter)")
    types.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    _add_entry_arguments(types)


def _number(convert, accept, kind: str, requirement: str):
    """An argparse type: `convert`ed text that `accept` allows, else a usage error saying why."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"must be {requirement}, not {text!r}")
        return value
    return parse


# `nan`, `inf`, `0`, `-1` seconds are usage errors, not a trace that never ends or never starts.
_positive_seconds = _number(float, lambda v: math.isfinite(v) and v > 0, "a number of seconds",
                            "a finite number of seconds above 0")
_non_negative_int = _number(int, lambda v: v >= 0, "a whole number", "0 or more")


def _add_trace_parser(commands) -> None:
    """`pallas-lsp trace`: run a kernel through JAX's own estimator and lowering."""
    trace = commands.add_parser("trace", help="trace a kernel through JAX's real lowering (runs your code)",
                                description="Import the module in a separate process under the project's interpreter "
                                            "(it must have jax), call the launch with abstract arguments, and report "
                                            "what JAX's tracing, resource estimator and lowering say, on your lines.",
                                epilog="exit status: 0 JAX lowered (and compiled) it; 1 JAX rejected it, or the traced "
                                       "code crashed, hung or exited; 2 it never ran (a name or line the file does not "
                                       "have, bad --args, no jax in the interpreter)")
    trace.add_argument("target", metavar="PATH::FUNCTION | PATH:LINE",
                       help="a launch (kernel, or function launching one) by name or by a line inside it; a kernel "
                            "body, or a line in one, traces the launch that runs it")
    trace.add_argument("--args", metavar="SPECS",
                       help='abstract arguments, e.g. "f32[128,128], i32[8]" (default: from a '
                            "'# pallas-lsp: trace(...)' comment, jaxtyping annotations or a call in the file)")
    trace.add_argument("--platform", choices=("cuda", "tpu", "host"), default=None,
                       help="cuda: GPU lowering, Mosaic GPU or Triton (cross-lowered without a GPU); tpu: TPU lowering "
                            "(cross-lowered without a TPU); host: CPU/interpret lowering (default: as the kernel runs: "
                            "host in interpret mode, tpu for a TPU kernel, else cuda)")
    trace.add_argument("--format", choices=("text", "json"), default="text",
                       help="text: a report to read (default); json: one object with every field of the result")
    trace.add_argument("--python", metavar="PATH",
                       help="interpreter or virtual environment of the analysed project, with jax "
                            "(default: [tool.pallas-lsp] python, else $VIRTUAL_ENV, else this interpreter)")
    trace.add_argument("--no-compile", action="store_true", help="stop after lowering even with a local GPU")
    trace.add_argument("--timeout", type=_positive_seconds, default=120.0, metavar="SECONDS",
                       help="stop the trace (its worker is killed) after this many seconds (default 120)")
    trace.add_argument("--memory-limit", type=_non_negative_int, default=None, metavar="MB",
                       help="address space the traced code may add beyond jax's own (default 8192, or $PALLAS_LSP_TRACE_MEMORY_MB; 0: no limit)")


def _warn_refused_python(settings, args) -> None:
    """The repository's own `python` choice was not trusted; say so unless --python decides anyway."""
    message = settings.refusal_message()
    if message and not args.python:
        _warn(message)


def _warn_environment() -> None:
    """A bad `PALLAS_LSP_*` value is replaced (clamped, or the default): say so before anything uses it."""
    from .checked_values import environment_problems

    for message in environment_problems():
        _warn(message)


def _warn_skipped(path: str, reason: str) -> None:
    from .output import shown_path

    _warn(f"{shown_path(path)}: skipped: {reason}")


def _collect(paths: list[str], loaded_settings: dict) -> list[str]:
    from .analysis.exclusions import Exclusions
    from .analysis.project import iter_python_files

    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            files.extend(iter_python_files(path, Exclusions.for_folder(path, loaded_settings), on_skip=_warn_skipped,
                                           notebooks=True))
        elif os.path.isfile(path):
            files.append(path)
        elif os.path.exists(path):
            raise FileNotFoundError(f"not a regular file or folder: {quoted_name(path)}")
        else:
            raise FileNotFoundError(f"no such file or folder: {quoted_name(path)}")
    seen: set[str] = set()
    unique = []
    for file in files:
        key = os.path.abspath(file)
        if key not in seen:
            seen.add(key)
            unique.append(file)
    return unique


def _warn_fix_flags(args) -> None:
    """Flags that do less than they seem to: said, then run as ruff runs them (--diff writes nothing)."""
    if args.fix and args.diff:
        _warn("--diff prints the fixes without writing them: --fix is ignored")
        args.fix = False
    if args.unsafe_fixes and not (args.fix or args.diff):
        _warn("--unsafe-fixes does nothing without --fix or --diff: no fix is applied")
    if args.trace and args.diff:
        _warn("--diff prints the fixes and reports no finding: --trace runs nothing")
        args.trace = False


def run_check(args) -> int:
    _warn_fix_flags(args)
    from .analysis import Project
    from .analysis.environment import EnvironmentError_
    from .analysis import reads
    from .analysis.exclusions import Exclusions
    from .check_jobs import analyze_files, default_jobs
    from .config import ConfigError, split_codes
    from .engine import load_settings, selected_codes, unknown_codes, unknown_codes_message
    from .output import format_json, format_sarif, format_text

    loaded_settings: dict = {}  # each pyproject.toml read once in this run
    args.paths = args.paths or ["."]  # as ruff: no PATH checks the current folder
    try:
        files = _collect(args.paths, loaded_settings)
        settings = load_settings(args.paths[0], loaded_settings)
    except (FileNotFoundError, ConfigError) as exc:
        _error(exc)
        return EXIT_ERROR
    _warn_refused_python(settings, args)
    select = split_codes(args.select) if args.select is not None else settings.select
    ignore = split_codes(args.ignore) if args.ignore is not None else settings.ignore
    for flag, given in (("--select", args.select), ("--ignore", args.ignore)):
        unknown = unknown_codes(split_codes(given))
        if unknown:
            _error(f"{flag}: {unknown_codes_message(unknown)}")
            return EXIT_ERROR
    codes = selected_codes(select, ignore)
    if not codes:  # allowed (ruff allows it too), but never passed off as a clean check
        _warn("no rules are enabled (select/ignore leave none): nothing is checked")
    root = settings.root or os.path.commonpath([os.path.abspath(p) if os.path.isdir(p) else
                                                os.path.dirname(os.path.abspath(p)) for p in args.paths])
    project = Project(root=root, python=args.python or settings.python, use_jedi=not args.no_jedi,
                      platform=settings.platform, exclusions=Exclusions.for_folder(root, loaded_settings))
    if project.use_jedi:
        try:
            project.environment  # noqa: B018 - fail early, with the reason, on a broken interpreter
        except EnvironmentError_ as exc:
            _error(exc)
            return EXIT_ERROR
    if args.verbose:
        _say_what_is_checked(args, settings, project, files, codes)
    fixing = args.fix or args.diff
    not_applied = False
    if fixing:
        from .fixes.fix_all import fix_files, unified_diff

        chosen: list = []
        judge = None
        if args.trace and args.fix:  # a fix on a kernel an entry point reaches is applied only if JAX accepts it
            judge = _JaxJudge(args, project, settings, root, files)
            if judge.run is None:
                return EXIT_ERROR
        try:
            changed, _ = fix_files(project, files, codes, unsafe=args.unsafe_fixes, chosen=chosen,
                                   accept=judge.accepts if judge is not None else None)
        finally:
            if judge is not None:
                judge.pool.shutdown()
        if args.diff:
            sys.stdout.flush()
            sys.stdout.buffer.write(unified_diff(changed))  # bytes: each file's own encoding
            sys.stdout.buffer.flush()
        else:
            not_applied = _write_fixes(project, changed, chosen)
    project.index.trust_events = True  # files do not change during a check (fixes written above are forgotten)
    project.defer_cache_writes = True  # written once, after every file's findings
    findings = []
    skipped = 0
    # After --fix/--diff the remaining findings' fixes are looked at in this process: no workers.
    available = default_jobs()
    jobs = 1 if fixing else args.jobs or available
    if jobs > available:
        # As ruff (rayon: one thread per available CPU): each worker also starts its own interpreter
        # for jedi, and 100,000 asked started ~1,250 of them.
        _warn(f"--jobs {jobs} is more than the {available} CPUs available: at most {available} processes")
        jobs = available
    with reads.not_tracking():  # nor do the texts: what each answer read need not be recorded
        results = analyze_files(project, files if codes else [], codes, jobs)
    for file, (found, skip) in zip(files, results):
        findings.extend(found)
        if skip is not None:  # unreadable, too large, gone: said plainly, the other files still checked
            _warn_skipped(file, skip)
            skipped += 1
    project.save_caches(now=True)
    if args.trace:
        traced = _run_entries(args, project, settings, root, files)
        if traced is None:
            return EXIT_ERROR
        from .trace.jax_findings import merge

        findings, notes = merge(findings, traced, None if "PAL100" in codes else [])
        for note in notes:
            logging.getLogger(__name__).info("%s", note)
    if fixing:
        _print_unfixable(project, findings, args.unsafe_fixes)
        if args.diff:
            return EXIT_FINDINGS if changed else EXIT_CLEAN
    notebooks = _notebooks(project, findings)
    if args.format == "json":
        sys.stdout.write(format_json(findings, notebooks))
    elif args.format == "sarif":
        sys.stdout.write(format_sarif(findings, notebooks))
    elif not codes:
        sys.stdout.write(f"No rules enabled: nothing checked ({len(files)} file{'s' if len(files) != 1 else ''}).\n")
    else:
        sys.stdout.write(format_text(findings, len(files) - skipped, skipped, notebooks))
    if not_applied:  # a fix left out is a finding left in, whatever its severity
        return EXIT_FINDINGS
    return EXIT_FINDINGS if any(f.severity == "error" for f in findings) else EXIT_CLEAN


def _info(message: str) -> None:
    _say("info", message)


def _say_what_is_checked(args, settings, project, files: list[str], codes: set[str]) -> None:
    """`check -v`: the interpreter and jax analysed against, where the settings came from, the files
    and rules: what to look at first when a finding is missing or unexpected."""
    from .analysis.environment import EnvironmentError_
    from .analysis.jax_version import jax_version
    from .analysis.notebooks import is_notebook
    from .rules import RULES_BY_CODE

    if settings.source is None:
        folder = os.path.abspath(args.paths[0] if os.path.isdir(args.paths[0]) else os.path.dirname(args.paths[0]) or ".")
        _info(f"settings: no pyproject.toml in {quoted_name(folder)} or a folder above it: the defaults")
    else:
        table = "[tool.pallas-lsp]" if settings.has_table else "no [tool.pallas-lsp] table: the defaults"
        _info(f"settings: {quoted_name(settings.source)} ({table}); flags on the command line win over it")
    source = ("--python" if args.python else "[tool.pallas-lsp] python" if settings.python else
              "$VIRTUAL_ENV" if os.environ.get("VIRTUAL_ENV") else "the interpreter running pallas-lsp")
    try:
        environment = project.environment
        python = f"{quoted_name(environment.executable)} (Python {environment.version}, from {source})"
    except EnvironmentError_:
        python = f"{quoted_name(project.python)} (from {source})"
    version = jax_version(project)
    if version is None:
        _info(f"interpreter: {python} has no jax: names are resolved from the files' own import statements, "
              "and rules assume the newest jax they know. Pass your project's interpreter with --python")
    else:
        _info(f"interpreter: {python}, jax {'.'.join(map(str, version))}"
              + ("" if project.use_jedi else "; --no-jedi: names are resolved from import statements only"))
    notebooks = sum(1 for file in files if is_notebook(file))
    kinds = f" ({len(files) - notebooks} Python, {notebooks} notebook{'s' if notebooks != 1 else ''})" if notebooks else ""
    enabled = ("all" if len(codes) == len(RULES_BY_CODE) else ", ".join(sorted(codes)) or "none")
    _info(f"{len(files)} file{'s' if len(files) != 1 else ''} to check{kinds}; rules: {enabled}")


def run_types(args) -> int:
    """`pallas-lsp types`: each kernel body parameter's type; traced by JAX with --trace."""
    import json

    from .analysis import Project
    from .analysis.environment import EnvironmentError_
    from .analysis.exclusions import Exclusions
    from .config import ConfigError
    from .engine import load_settings
    from .output import display_path, shown_path
    from .trace.parameter_types import format_text, parameter_types

    loaded_settings: dict = {}
    try:
        files = [f for f in _collect(args.paths, loaded_settings) if f.endswith(".py")]
        settings = load_settings(args.paths[0], loaded_settings)
    except (FileNotFoundError, ConfigError) as exc:
        _error(exc)
        return EXIT_ERROR
    _warn_refused_python(settings, args)
    root = settings.root or os.path.commonpath([os.path.abspath(p) if os.path.isdir(p) else
                                                os.path.dirname(os.path.abspath(p)) for p in args.paths])
    project = Project(root=root, python=args.python or settings.python, platform=settings.platform,
                      exclusions=Exclusions.for_folder(root, loaded_settings))
    try:
        project.environment  # noqa: B018 - fail early, with the reason, on a broken interpreter
    except EnvironmentError_ as exc:
        _error(exc)
        return EXIT_ERROR
    run = None
    if args.trace:
        run = _run_entries(args, project, settings, root, files)
        if run is None:
            return EXIT_ERROR
    rows = parameter_types(project, files, run)
    if args.format == "json":
        sys.stdout.write(json.dumps([dict(r, path=display_path(r["path"])) for r in rows], indent=2) + "\n")
    else:
        sys.stdout.write(format_text(rows, shown_path))
    return EXIT_CLEAN


class _JaxJudge:
    """`check --trace --fix`: the entry points run before the fixes; a fix of a kernel one of them
    reached is applied only if JAX lowers that entry's launches in the fixed code (trace/fix_verdicts.py)."""

    def __init__(self, args, project, settings, root: str, files: list[str]) -> None:
        from .trace.worker import WorkerPool

        self.args, self.project, self.settings = args, project, settings
        self.pool = WorkerPool(memory_limit_mb=args.memory_limit)
        self.run = _run_entries(args, project, settings, root, files, self.pool)
        if self.run is None:
            self.pool.shutdown()

    def accepts(self, finding, fix, texts: dict[str, str]) -> bool:
        from .output import shown_path
        from .trace.fix_verdicts import judge_fix
        from .trace.worker import choose_interpreter, interpreter_executable

        others = {p: t for p, t in self.project.overlay.items() if p.endswith(".py")}
        verdict = judge_fix(self.pool, interpreter_executable(choose_interpreter(self.args.python or self.settings.python)),
                            self.run, finding, fix, fixed=texts, others=others, entry_timeout=self.args.entry_timeout,
                            bare_platform="tpu" if self.settings.platform == "tpu" else "cuda")
        where = f"{shown_path(finding.path)}:{finding.span.line + 1}"
        if verdict is not None and verdict.verdict == "rejected":
            _warn(f"--trace: {where}: {fix.title!r} not applied: JAX rejects the fixed code: {verdict.reason}")
            return False
        if verdict is not None:
            logging.getLogger(__name__).info("%s: %r %s", where, fix.title, "verified by JAX" if verdict.verdict ==
                                             "accepted" else f"not verified by JAX ({verdict.reason})")
        return True


def _run_entries(args, project, settings, root: str, files: list[str], pool=None):
    """`--trace`: the entry points under the checked paths run with JAX in the loop (the flag is the
    user's consent to run their code); None (and said why) when they cannot run at all. `pool`: the
    caller's, left running."""
    from .trace.entry_points import fatal, run_entry_points
    from .trace.worker import TraceError, WorkerPool, choose_interpreter, interpreter_executable

    try:
        python = interpreter_executable(choose_interpreter(args.python or settings.python))
    except TraceError as exc:
        _error(exc)
        return None
    own = pool is None
    pool = pool or WorkerPool(memory_limit_mb=args.memory_limit)
    try:
        run = run_entry_points(pool, python, root, [f for f in files if f.endswith(".py")],
                               entry_timeout=args.entry_timeout,
                               bare_platform="tpu" if settings.platform == "tpu" else "cuda",
                               relevant=lambda path, text: project.can_matter(path, text))
    finally:
        if own:
            pool.shutdown()
    if any(fatal(problem) for problem in run.problems):  # asked for, and nothing could run: no silent pass
        _error(f"--trace: {next(problem for problem in run.problems if fatal(problem))}")
        return None
    for problem in run.problems:
        _warn(f"--trace: {problem}")
    _say("", f"--trace: {run.summary()}")
    return run


def _write_fixes(project, changed: dict, chosen: list) -> bool:
    """Write the fixes, each whole or not at all (fixes/write_groups.py), say which were not applied
    and why; True if any was not. The project then reads every changed file from disk again."""
    from .fixes.write_groups import fix_groups, fix_name, write_fix_groups
    from .output import shown_path, text_location

    groups = fix_groups(changed, chosen)
    failed = write_fix_groups(groups)
    for path in changed:
        project.set_notebook(path, None)  # what remains is reported for the file as it is on disk
        project.set_text(path, None)
        project.file_changed(path)
    for group, skipped in failed:
        others = [shown_path(path) for path in group.changes if path != skipped.path]
        either = f"; {', '.join(others)} {'is' if len(others) == 1 else 'are'} not rewritten either (a fix is written whole or not at all)"
        _warn(f"{shown_path(skipped.path)} not rewritten: {skipped.reason}{either if others else ''}")
        notebooks = _notebooks(project, [finding for finding, _ in group.fixes])
        for finding, fix in group.fixes:
            _warn(f"fix not applied: {text_location(finding.path, finding.span, notebooks)}: {fix_name(finding, fix)}")
    total, left = len(chosen), sum(len(group.fixes) for group, _ in failed)
    written = sum(len(group.changes) for group in groups) - sum(len(group.changes) for group, _ in failed)
    in_files = f"in {written} file{'s' if written != 1 else ''}"
    if not failed:
        _say("", f"applied {total} fix{'es' if total != 1 else ''} {in_files}")
    else:
        _say("", f"applied {total - left} of {total} fix{'es' if total != 1 else ''} {in_files}; {left} not applied, "
                 "their files unchanged (see above)")
    return bool(failed)


def _notebooks(project, findings) -> dict:
    """The notebooks findings point into (by path), to show their positions in cells; one that is no
    notebook has its finding at a position of its JSON text and is left out."""
    from .analysis.notebooks import is_notebook

    paths = {f.path for f in findings} | {r.path for f in findings for r in f.related}
    notebooks = {}
    for path in filter(is_notebook, paths):
        try:
            notebooks[os.path.abspath(path)] = project.notebook(path)
        except OSError:
            pass
    return notebooks


def _print_unfixable(project, findings, unsafe: bool) -> None:
    """What --fix/--diff could not do, as ruff says it: findings left without an automatic fix."""
    from dataclasses import replace

    from .fixes.fix_all import without_fix
    from .trace.jax_findings import CONFIRMED

    # A finding JAX confirmed is the rule's own: its fixes are looked up by the rule's message.
    findings = [replace(f, message=f.message.removesuffix(CONFIRMED)) if f.confirmed else f for f in findings]
    none, unsafe_only = without_fix(project, findings, unsafe)
    if none:
        _say("", f"{none} finding{'s have' if none != 1 else ' has'} no automatic fix")
    if unsafe_only:
        _say("", f"{unsafe_only} finding{'s have' if unsafe_only != 1 else ' has'} only unsafe fixes "
                 "(apply them with --unsafe-fixes)")


def run_rule(args) -> int:
    """`pallas-lsp rule PAL001`: the rule's page (the one its diagnostics link to), as `ruff rule`
    prints one; `--all`: one line per rule."""
    from .rules import RULES, find_rule, rule_page

    if args.all == bool(args.code):
        _error("give a rule code (pallas-lsp rule PAL001) or --all, not both" if args.all else
               "which rule? pallas-lsp rule PAL001, or pallas-lsp rule --all for the list")
        return EXIT_ERROR
    if args.all:
        width = max(len(rule.NAME) for rule in RULES)
        sys.stdout.write("".join(f"{rule.CODE}  {rule.NAME:<{width}}  {rule.SUMMARY}\n" for rule in RULES))
        return EXIT_CLEAN
    rule = find_rule(args.code)
    if rule is None:
        _error(f"no rule {quoted_name(args.code)} (rules: {RULES[0].CODE} to {RULES[-1].CODE}; "
               "pallas-lsp rule --all lists them)")
        return EXIT_ERROR
    try:
        sys.stdout.write(rule_page(rule))
    except OSError as exc:
        _error(f"the page of {rule.CODE} cannot be read: {exc}")
        return EXIT_ERROR
    return EXIT_CLEAN


def run_trace(args) -> int:
    """Exit 0 when JAX lowered (and compiled) the kernel, 1 when it failed, 2 when it never ran."""
    import json

    from .config import ConfigError
    from .engine import load_settings
    from .trace import trace_target
    from .trace.report import format_text, one_based_columns
    from .source_text import read_source
    from .trace.targets import ArgSpecError, example_args, split_target, unknown_name
    from .trace.worker import TraceError, WorkerPool, choose_interpreter, interpreter_executable

    try:
        path, where = split_target(args.target)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such file: {quoted_name(path)}")
        settings = load_settings(path)
        _warn_refused_python(settings, args)
        python = interpreter_executable(choose_interpreter(args.python or settings.python))
        notebook = _trace_notebook(path, where)
        source = notebook.module if notebook is not None else read_source(path)
    except (ArgSpecError, FileNotFoundError, ConfigError, TraceError, OSError, UnicodeDecodeError) as exc:
        _error(exc)
        return EXIT_ERROR
    typo = unknown_name(source, where) if isinstance(where, str) else None
    if typo:  # a usage error (exit 2), said before anything is imported: CI tells it from a kernel JAX rejects
        _error(f"{quoted_name(path)}: {typo}")
        return EXIT_ERROR
    root = settings.root or os.path.dirname(os.path.abspath(path))
    plan = _trace_plan(root, python, settings, path, source, where, args.platform)
    if plan.function is None:
        why = _unplanned(plan, path, where)
        _error(notebook.cell_lines_in(why) if notebook is not None else why)
        return EXIT_ERROR
    pool = WorkerPool(memory_limit_mb=args.memory_limit)
    options = dict(args=args.args, platform=plan.platform.name, compile=False if args.no_compile else None,
                   timeout=args.timeout, infer_args=plan.infer_args)
    try:
        if notebook is None:
            result = trace_target(pool, python, root, path, plan.function, source=source, **options)
        else:  # the code cells through the kernel's, written to a module (trace/notebooks.py)
            from functools import partial

            from .trace.notebooks import trace_notebook_target

            result = trace_notebook_target(partial(trace_target, pool, python, root), path, notebook,
                                           plan.function, plan.target.line, **options)
            if result is None:
                _error(f"no cell of {quoted_name(path)} defines {plan.function}")
                return EXIT_ERROR
    finally:
        pool.shutdown()
    plan.annotate(result)
    if notebook is not None:
        from .trace.notebooks import annotate_in_cells

        annotate_in_cells(result, notebook)
    error = result.get("error") or {}
    if error.get("type") == "ArgsNotFound":
        example = result.get("suggested_args") or example_args(source, plan.function)
        error["message"] += f". Give them with --args \"{example}\" or a '# pallas-lsp: trace({example})' comment above it."
    if error.get("type") == "TraceError" and "No module named 'jax'" in error.get("message", ""):
        error["message"] += (". Pass your project's interpreter, the one with jax: --python PATH (or set "
                             "[tool.pallas-lsp] python in pyproject.toml).")
    if args.format == "json":
        sys.stdout.write(json.dumps(one_based_columns(result, notebook), indent=2) + "\n")
    else:
        sys.stdout.write(format_text(result))
    if result.get("ok"):
        return EXIT_CLEAN
    never_ran = ("UsageError", "ArgsNotFound", "TargetNotFound", "TraceError")
    return EXIT_ERROR if (result.get("error") or {}).get("type") in never_ran else EXIT_FINDINGS


def _trace_notebook(path: str, where):
    """The notebook at `path` (None for a module); its kernels are named (`nb.ipynb::kernel`)."""
    from .analysis.notebooks import is_notebook, read_notebook_file
    from .trace.targets import ArgSpecError

    if not is_notebook(path):
        return None
    if not isinstance(where, str):
        raise ArgSpecError(f"a notebook's kernel is traced by name ({quoted_name(path)}::NAME), not by a line of its JSON")
    return read_notebook_file(path)  # InvalidNotebook (an OSError) says why it is none


def _trace_plan(root: str, python: str, settings, path: str, source: str, where, platform: str | None):
    """What to trace, read through the kernel model (a body's launch; the platform a kernel runs on)."""
    from .analysis import Project
    from .trace.intent import plan_trace, unanalysed_plan

    try:
        project = Project(root=root, python=python, platform=settings.platform)
        return plan_trace(project, path, source, where, platform)
    except Exception:  # the analysis must not keep a name from being traced as it is
        logging.getLogger(__name__).warning("the kernel model of %s could not be built", quoted_name(path), exc_info=True)
        return unanalysed_plan(path, where, platform, "the kernel model could not be built")


def _unplanned(plan, path: str, where) -> str:
    """Why nothing was traced: the problem, or the launches to choose from (by name)."""
    if plan.intent.problem:
        return plan.intent.problem
    return (f"{plan.choice_message()}. Trace one of them by name: "
            + ", ".join(f"{quoted_name(path)}::{t.name}" for t in plan.choices))


class _LowerCaseLevel(logging.Formatter):
    """`pallas-lsp: warning: ...`, as the CLI's own warnings (and ruff's) print, not `WARNING:`."""

    def format(self, record: logging.LogRecord) -> str:
        record = logging.makeLogRecord(record.__dict__)
        record.levelname = record.levelname.lower()
        # A file name logged with `-v` (`%s` of a path) is one line, its control characters escaped.
        record.msg, record.args = visible(record.getMessage()), None
        return visible(super().format(record), keep="\n\t")


def main(argv: list[str] | None = None) -> int:
    from .source_text import quiet_compile_warnings

    quiet_compile_warnings()  # a user's "\d" in a non-raw string is not ours to print (ruff prints nothing)
    args = build_parser().parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_LowerCaseLevel("pallas-lsp: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
                        handlers=[handler])
    _warn_environment()
    try:
        if args.command == "check":
            if argv is not None:  # called in-process (tests, tools): the interpreter is theirs
                return run_check(args)
            from .check_jobs import collect_less_often, end_process_now

            collect_less_often()
            end_process_now(run_check(args))
        if args.command == "serve":
            from .lsp.memory import give_big_blocks_back_when_freed
            from .lsp.server import server
            from .lsp.tcp import serve_command

            give_big_blocks_back_when_freed()
            return serve_command(server, args=args)
        if args.command == "trace":
            return run_trace(args)
        if args.command == "rule":
            return run_rule(args)
        if args.command == "types":
            return run_types(args)
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception:  # an internal error must not look like "no findings"
        print("pallas-lsp: internal error:\n" + visible(traceback.format_exc(), keep="\n\t"), file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR
