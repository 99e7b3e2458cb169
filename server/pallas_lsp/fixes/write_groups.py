"""`check --fix` applies each fix whole or not at all.

A fix can edit two files (a kernel body in one module, its launch in another); written one file at
a time, a read-only launch module left the body rewritten and the kernel broken, and the next check
passed. The files of one applied fix belong together, and two fixes that edit a shared file join
their groups; each group is written by `write_back.write_group`, all of it or nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..analysis.findings import Finding, Fix
from .write_back import Skipped, write_group


@dataclass
class FixGroup:
    """Files that are written together, and the fixes whose edits they hold."""

    changes: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (old text, new text)
    fixes: list[tuple[Finding, Fix]] = field(default_factory=list)


def fix_groups(changed: dict[str, tuple[str, str]], chosen: list[tuple[Finding, Fix]]) -> list[FixGroup]:
    """`changed` (fix_files' result) split into groups by the files the `chosen` fixes edit, in the
    order the files come in `changed`; a changed file no fix names is a group of its own."""
    key = {os.path.abspath(path): path for path in changed}
    order = {path: number for number, path in enumerate(changed)}
    parent = {path: path for path in changed}

    def root(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    owners = []
    for finding, fix in chosen:
        paths = sorted({key[p] for p in (os.path.abspath(e.path) for e in fix.edits) if p in key}, key=order.get)
        for other in paths[1:]:
            parent[root(other)] = root(paths[0])
        owners.append(paths[0] if paths else None)
    groups: dict[str, FixGroup] = {}
    for path, change in changed.items():
        groups.setdefault(root(path), FixGroup()).changes[path] = change
    for (finding, fix), owner in zip(chosen, owners):
        if owner is not None:
            groups[root(owner)].fixes.append((finding, fix))
    return list(groups.values())


def write_fix_groups(groups: list[FixGroup]) -> list[tuple[FixGroup, Skipped]]:
    """Write every group that can be written whole; the others, each with why it was not."""
    return [(group, skipped) for group in groups if (skipped := write_group(group.changes)) is not None]


def fix_name(finding: Finding, fix: Fix) -> str:
    """`PAL001 Pass scale as a kernel operand` of the title `pallas-lsp (PAL001): Pass scale as ...`."""
    return f"{finding.code} {fix.title.split('): ', 1)[-1]}"
