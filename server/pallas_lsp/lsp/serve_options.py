"""`pallas-lsp serve`'s options, apart from the server that reads them (lsp_tcp.py): the CLI builds every
subcommand's parser on each run, and `check` need not import asyncio for it (~0.1 s of its CPU)."""

from __future__ import annotations

import argparse
import textwrap

from .. import DOCS_WEB_URL

TCP_DOCS = f"{DOCS_WEB_URL}/editors.md#over-tcp-pallas-lsp-serve---tcp"  # a wheel has no docs/ folder


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the link unbroken, to copy whole
    parser.description = textwrap.fill(
        "Run the language server. Editors start it themselves and speak LSP over its stdin and stdout (the "
        "default); settings come from the editor (initializationOptions, section `pallas`) and [tool.pallas-lsp] "
        "in pyproject.toml. --tcp serves one client over a socket instead.", 79)
    parser.epilog = f"Editor configurations, TCP and its token: {TCP_DOCS}"
    parser.add_argument("--tcp", metavar="HOST:PORT",
                        help="listen on TCP instead of stdio, for one client (loopback only). The client must send "
                             "initializationOptions.token: the token the server writes to --token-file, else to a "
                             "fresh owner-only file whose path it prints at start")
    parser.add_argument("--token-file", metavar="PATH",
                        help="with --tcp: the token file (created, owner-only, if missing; kept afterwards). "
                             "Default: a fresh token in a per-run file, printed at start")
    parser.add_argument("--allow-remote", action="store_true",
                        help="with --tcp: allow a non-loopback HOST (the token is then the only protection "
                             "and the traffic is not encrypted)")
