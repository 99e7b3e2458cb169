"""`pallas-lsp check` for CI (exit 1 on errors, 0 clean, 2 on usage or internal errors)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback

from . import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse already exits 2; keep its usage line, say it plainly
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"pallas-lsp: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pallas-lsp", description="Catch broken JAX Pallas GPU kernels.")
    parser.add_argument("--version", action="version", version=f"pallas-lsp {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check = commands.add_parser("check", help="check files and folders (recursively, *.py)")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    check.add_argument("--python", metavar="PATH",
                       help="interpreter or virtual environment of the analysed project "
                            "(default: [tool.pallas-lsp] python, else $VIRTUAL_ENV, else this interpreter)")
    check.add_argument("--select", metavar="CODES", help="comma-separated rule codes or prefixes to enable")
    check.add_argument("--ignore", metavar="CODES", help="comma-separated rule codes or prefixes to disable")
    check.add_argument("--no-jedi", action="store_true",
                       help="resolve names from the file's own imports only (no environment inference)")
    check.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    return parser


def _collect(paths: list[str]) -> list[str]:
    from .analysis.project import iter_python_files

    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            files.extend(iter_python_files(path))
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    seen: set[str] = set()
    unique = []
    for file in files:
        key = os.path.abspath(file)
        if key not in seen:
            seen.add(key)
            unique.append(file)
    return unique


def run_check(args) -> int:
    from .analysis import Project, analyze, selected_codes
    from .analysis.environment import EnvironmentError_
    from .config import ConfigError, load_settings, split_codes
    from .output import format_json, format_sarif, format_text

    try:
        files = _collect(args.paths)
        settings = load_settings(args.paths[0])
    except (FileNotFoundError, ConfigError) as exc:
        print(f"pallas-lsp: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    select = split_codes(args.select) if args.select is not None else settings.select
    ignore = split_codes(args.ignore) if args.ignore is not None else settings.ignore
    codes = selected_codes(select, ignore)
    root = settings.root or os.path.commonpath([os.path.abspath(p) if os.path.isdir(p) else
                                                os.path.dirname(os.path.abspath(p)) for p in args.paths])
    project = Project(root=root, python=args.python or settings.python, use_jedi=not args.no_jedi)
    if project.use_jedi:
        try:
            project.environment  # noqa: B018 - fail early, with the reason, on a broken interpreter
        except EnvironmentError_ as exc:
            print(f"pallas-lsp: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
    findings = []
    for file in files:
        for finding in analyze(project, file, codes=codes):
            findings.append(finding)
    if args.format == "json":
        sys.stdout.write(format_json(findings))
    elif args.format == "sarif":
        sys.stdout.write(format_sarif(findings))
    else:
        sys.stdout.write(format_text(findings, len(files)))
    return EXIT_FINDINGS if any(f.severity == "error" for f in findings) else EXIT_CLEAN


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
                        stream=sys.stderr, format="pallas-lsp: %(levelname)s: %(message)s")
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "serve":
            from .server import main as serve

            return serve(["--tcp", args.tcp] if args.tcp else [])
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception:  # an internal error must not look like "no findings"
        print("pallas-lsp: internal error:\n" + traceback.format_exc(), file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR
