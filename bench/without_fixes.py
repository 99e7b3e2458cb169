"""Run `pallas-lsp` (serve or check) with quick fixes left uncomputed: a measurement aid, not a product mode.

Every finding's quick fixes (LibCST rewrites of the statements they touch) are built while the file
is analysed, before diagnostics are published. This shows what the analysis alone costs, which is
what a server that builds fixes only when the editor asks for code actions would publish in.

    .venvs/dev/bin/python bench/without_fixes.py serve|check ...
"""

import sys

import pallas_lsp.rules.pal001_get_global_not_semaphore as pal001
import pallas_lsp.rules.pal002_get_global_interpret as pal002


def _no_fixes(*args, **kwargs):
    return ()


for rule in (pal001, pal002):
    if not hasattr(rule, "get_global_fixes"):  # the rules changed how they build fixes: measure nothing wrong
        raise SystemExit(f"bench/without_fixes.py: {rule.__name__} no longer calls get_global_fixes; update this aid")
    rule.get_global_fixes = _no_fixes

if __name__ == "__main__":
    from pallas_lsp.cli import main

    sys.exit(main(sys.argv[1:]))
