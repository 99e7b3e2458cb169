"""LSP 3.17 notebook documents to the analysis core and back (issue 23).

An editor sends a notebook as cells, each a text document of its own (`vscode-notebook-cell:...`);
the core analyses the notebook's code cells as one module (`analysis.notebooks`). Here: the
cells of an open notebook as a `Notebook`, module findings and edits as findings and edits in cell
documents (named by the cell's URI where a path would be), and a cell position as a module position.
"""

from __future__ import annotations

from dataclasses import replace

from lsprotocol import types

from ..analysis.findings import Finding, Related, Span, TextEdit
from ..analysis.notebooks import Cell, Notebook
from .convert import uri_to_path

# What the server syncs: Jupyter notebooks, their Python cells and their Markdown ones. The Markdown
# cells are never analysed; they are synced so that the server numbers cells as the notebook shows
# them ("cell 5" in a hover or a trace note): a client sends only the cells the selector names.
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python"),
                                            types.NotebookCellLanguage(language="markdown")])],
    save=True)


class OpenNotebook:
    """An open notebook as the editor has it now: its cells' URIs, in order, and the `Notebook` they make."""

    def __init__(self, document: types.NotebookDocument, open_document):
        self.uri, self.version = document.uri, document.version
        self.path = uri_to_path(document.uri)
        self.cell_uris: list[str] = []
        cells = []
        for cell in document.cells:
            text = open_document(cell.document)
            self.cell_uris.append(text.uri if text is not None else cell.document)
            kind = "code" if cell.kind == types.NotebookCellKind.Code else "markdown"
            language = (getattr(text, "language_id", None) or "python") if kind == "code" else "markdown"
            cells.append(Cell(kind, text.source if text is not None else "", language))
        self.notebook = Notebook.from_cells(cells)

    def cell_index(self, cell_uri: str) -> int | None:
        try:
            return self.cell_uris.index(cell_uri)
        except ValueError:
            return None

    def code_cell_uris(self) -> list[str]:
        return [uri for uri, cell in zip(self.cell_uris, self.notebook.cells) if cell.kind == "code"]

    def in_cell(self, finding: Finding) -> Finding | None:
        """A module finding as a finding of its cell document (path: the cell's URI)."""
        where = self._cell_span(finding.span)
        if where is None:
            return None
        related = tuple(self._related_in_cell(r) for r in finding.related)
        return replace(finding, path=self.cell_uris[where[0]], span=where[1], related=related)

    def _related_in_cell(self, related: Related) -> Related:
        if related.path != self.path:
            return related
        where = self._cell_span(related.span)
        return related if where is None else Related(self.cell_uris[where[0]], where[1], related.message)

    def _cell_span(self, span: Span) -> tuple[int, Span] | None:
        return self.notebook.cell_span(span, clip=True)

    def in_module(self, cell_uri: str, line: int, column: int) -> tuple[int, int] | None:
        index = self.cell_index(cell_uri)
        return None if index is None else self.notebook.to_module(index, line, column)

    def module_line(self, cell_uri: str | None, where: str | int) -> str | int | None:
        """A function name as it is; a line of the cell `cell_uri` as a line of the module (None: no
        code cell holds it, or no cell was named)."""
        if isinstance(where, str):
            return where
        found = self.in_module(cell_uri, where, 0) if cell_uri is not None else None
        return None if found is None else found[0]

    def with_cell_uris(self, result: dict) -> dict:
        """A trace result whose notebook locations (`cell`: the cell's number) also name their cell
        document (`cell_uri`): a client that syncs only some cells (VS Code: the Python ones) numbers
        the notebook's cells differently, and opens a location by its cell's URI."""
        def named(location):
            if not isinstance(location, dict) or not isinstance(location.get("cell"), int):
                return location
            index = location["cell"] - 1
            return {**location, "cell_uri": self.cell_uris[index]} if 0 <= index < len(self.cell_uris) else location

        result = dict(result)
        if isinstance(result.get("error"), dict):
            result["error"] = {**result["error"], "locations": [named(loc) for loc in result["error"].get("locations") or []]}
        result["kernels"] = [{**kernel, "location": named(kernel.get("location"))} if isinstance(kernel, dict) else kernel
                             for kernel in result.get("kernels") or []]
        return result

    def module_finding(self, finding: Finding) -> Finding | None:
        """A cell document's finding (as `in_cell` made it) as the module's finding."""
        start = self.in_module(finding.path, finding.span.line, finding.span.column)
        end = self.in_module(finding.path, finding.span.end_line, finding.span.end_column)
        if start is None or end is None:
            return None
        return replace(finding, path=self.path, span=Span(*start, *end))

    def cell_edits(self, edits) -> list[TextEdit] | None:
        """The module's edits as edits of cell documents; None when one spans cells."""
        out = []
        for edit in edits:
            if edit.path != self.path:
                out.append(edit)
                continue
            where = self.notebook.cell_span(edit.span)
            if where is None:
                return None
            out.append(TextEdit(self.cell_uris[where[0]], where[1], edit.new_text))
        return out

    def module_range(self, cell_uri: str) -> tuple[int, int] | None:
        """(first module line, line count) of a cell."""
        index = self.cell_index(cell_uri)
        return None if index is None else self.notebook.cell_line_range(index)
