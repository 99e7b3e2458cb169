"""Parsing that survives half-typed code, and position bookkeeping.

`ast` gives byte columns and gives up at the first syntax error; editors need code-point columns
and findings for the rest of the file, so broken lines are replaced by `pass` until the file
parses (or the tail after a hopeless error is cut), and each syntax error is kept for reporting.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import itertools
import keyword
import re
import sys
import textwrap
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Callable

from . import big_literals
from .findings import Span
from ..source_text import LINE_BREAK, Refusal, cookie_refusal, split_lines, tokens

MAX_RECOVERY_STEPS = 200


@dataclass
class SyntaxProblem:
    line: int  # 0-based
    column: int
    message: str
    # Where it ends, when known exactly (a refused cookie's codec name); else the end of its line.
    end_line: int | None = None
    end_column: int | None = None


@dataclass
class ParsedSource:
    text: str
    tree: ast.Module
    lines: list[str]
    syntax_errors: list[SyntaxProblem] = field(default_factory=list)
    # The lines `tree` was parsed from when they are not `lines` (broken ones replaced by `pass`, or
    # a hopeless tail cut); None when the text parsed as it is.
    recovered: list[str] | None = None
    # What Python says of the file's bytes, when the text was read from them and Python refuses them.
    refusal: Refusal | None = None
    # `tree` is `big_literals.parse(text)`'s, as it is (no recovery, nothing patched in since): another
    # reader of the module's statements may share it (`Project.parsed_tree`).
    whole: bool = False

    def char_column(self, line: int, byte_col: int) -> int:
        """Convert an `ast` byte offset on a 0-based line to a code-point column."""
        if not 0 <= line < len(self.lines):
            return byte_col
        text = self.lines[line]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        line = node.lineno - 1
        end_line = (node.end_lineno or node.lineno) - 1
        end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return Span(line, self.char_column(line, node.col_offset), end_line, self.char_column(end_line, end_col))


NUL_MESSAGE = "source code cannot contain null bytes"


def parse(text: str, refusal: Refusal | None = None, tree: ast.Module | None = None) -> ParsedSource:
    """`text` parsed (recovered). Its syntax error is what makes Python refuse the file before parsing
    it, if anything does (`refusal`, from its bytes; else its coding cookie; a NUL byte), else the
    first one the recovery met. `tree`: `big_literals.parse(text)`'s, when something parsed it already
    (then it is not parsed again)."""
    lines = split_lines(text)
    if tree is not None:
        refused = refusal or refused_cookie(text, lines)
        errors = [] if refused is None else [SyntaxProblem(refused.line, refused.column, refused.message,
                                                           refused.end_line, refused.end_column)]
        return ParsedSource(text, tree, lines, errors, None, refusal, whole=True)
    intern_names_first(text)
    refused = [refusal or refused_cookie(text, lines)]
    parsed = lines
    if "\x00" in text:  # Python stops at the first; the rest is analysed as if it were a space
        line = next(i for i, content in enumerate(lines) if "\x00" in content)
        column = lines[line].index("\x00")
        refused.append(Refusal(line, column, line, column + 1, NUL_MESSAGE))
        parsed = [content.replace("\x00", " ") for content in lines]
    tree, errors, work = recover(parsed)
    # One error, as Python gives: what it checks before parsing comes first (the codec, then NUL bytes).
    first = next((r for r in refused if r), None)
    if first is not None:
        errors = [SyntaxProblem(first.line, first.column, first.message, first.end_line, first.end_column)]
    recovered = work if work is not None or parsed is lines else parsed
    return ParsedSource(text, tree, lines, errors, recovered, refusal, whole=recovered is None)


BIG_TEXT = 1_000_000  # characters: a text whose syntax tree takes hundreds of MiB
_CODE_NAME = re.compile(r"\b[^\W\d]\w*")
_NOT_CODE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\n]*"|\'[^\'\n]*\'|#[^\n]*')


def refused_cookie(text: str, lines: list[str] | None = None) -> Refusal | None:
    """Python's refusal of this text's coding cookie, were it saved as a file (UTF-8, a BOM if it
    starts with one): an unknown codec or one that is not a text encoding."""
    if lines is None:  # only the first two lines are read (asked on every edit of a big document)
        breaks = [m.end() for m in itertools.islice(LINE_BREAK.finditer(text), 2)]
        lines = split_lines(text[:breaks[-1]] if len(breaks) == 2 else text)
    if not text.startswith("\ufeff"):
        return cookie_refusal(lines[:2])
    refusal = cookie_refusal([lines[0][1:], *lines[1:2]], bom=True)
    if refusal is not None and refusal.line == 0:  # columns of the text, which holds the BOM
        refusal = dataclasses.replace(refusal, column=refusal.column + 1, end_column=refusal.end_column + 1)
    return refusal


def intern_names_first(text: str) -> None:
    """Before `ast.parse` of a big text: intern the names in its code, packed together. The parser
    interns every identifier it meets, amid the tree's objects, and Python 3.12 never frees an
    interned string: once the tree is freed, those strings keep its memory from going back (a
    4.99 MB module: +37 MiB for good after its tree of ~790 MiB is freed; +2 MiB interned first).
    Strings and comments are left out (their words would be kept for good too), a piece at a time."""
    if len(text) <= BIG_TEXT:
        return
    start = 0
    while start < len(text):
        end = text.find("\n", start + 65536)
        end = len(text) if end < 0 else end
        for name in set(_CODE_NAME.findall(_NOT_CODE.sub(" ", text[start:end]))):
            sys.intern(name)
        start = end


def recover(lines: list[str], known_to_parse: Callable[[list[str]], bool] | None = None
            ) -> tuple[ast.Module | None, list[SyntaxProblem], list[str] | None]:
    """(tree, syntax errors, the lines the tree was parsed from or None when `lines` parsed as they are).

    `known_to_parse(work)`, asked after each repair, may answer that the repaired lines certainly
    parse: the answer is then the same but the tree is None (the incremental analysis knows when
    only one chunk was broken, and saves parsing the rest of a big module again)."""
    work = list(lines)
    errors: list[SyntaxProblem] = []
    attempts: dict[int, int] = {}
    searches = 0
    for _ in range(MAX_RECOVERY_STEPS):
        if errors and known_to_parse is not None and known_to_parse(work):
            return None, errors, work
        try:
            with warnings.catch_warnings():  # "invalid escape sequence" and friends: not ours to print
                warnings.simplefilter("ignore")
                tree = big_literals.parse("\n".join(work) + "\n")
            return tree, errors, work if errors else None
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            lineno = getattr(exc, "lineno", None)
            if lineno is None and isinstance(exc, (RecursionError, MemoryError)):
                deep = _too_deep_statement(work)
                if deep is not None:  # Python's own parser gives up on it too: skip that statement only
                    first, last = deep
                    if not errors:
                        errors.append(SyntaxProblem(first, 0, "too deeply nested for Python's parser "
                                                              f"({type(exc).__name__}: {exc})"))
                    indent = _indentation(work[first])
                    work[first:last + 1] = [indent + "pass"] + [""] * (last - first)
                    continue
            lineno = lineno or len(work)
            index = max(0, min(lineno, len(work)) - 1)
            deep_block = _too_deep_block(work, index) if getattr(exc, "msg", None) == TOO_DEEP_INDENTATION else None
            if deep_block is not None:  # every line from there on is too deep: skip that block only
                header, last = deep_block
                if not errors:
                    errors.append(SyntaxProblem(index, max(0, (exc.offset or 1) - 1), exc.msg))
                work[header:last + 1] = [_indentation(work[header]) + "pass"] + [""] * (last - header)
                continue
            if not errors:
                col = max(0, (getattr(exc, "offset", None) or 1) - 1)
                errors.append(SyntaxProblem(index, col, getattr(exc, "msg", None) or str(exc)))
            message = getattr(exc, "msg", None) or ""
            if message.startswith("unterminated triple-quoted string literal") and searches < 3:
                # Reported where the last string opens; the one that swallowed code opened earlier
                # (searched a few times only: each reads the text up to the error).
                searches += 1
                index = _swallowing_string_line(work, index)
            tried = attempts.get(index, 0)
            attempts[index] = tried + 1
            if tried >= 2 or not work:
                # Replacing the line did not help (an unclosed bracket, say): drop everything from it on.
                work = work[:index]
                if not work:
                    break
                continue
            line = work[index]
            if tried == 0:  # `pass` at the line's own indentation
                indent = _indentation(line)
            else:  # garbage that looked indented: `pass` at the indentation of the code line above
                above = next((w for w in reversed(work[:index]) if w.strip() and not w.lstrip().startswith("#")), "")
                indent = _indentation(above)
            work[index] = indent + "pass"
    return ast.parse(""), errors or [SyntaxProblem(0, 0, "could not parse")], None


TOO_DEEP_INDENTATION = "too many levels of indentation"  # CPython's tokenizer: 100 levels at most


def _indentation(line: str) -> str:
    return re.match(r"[ \t]*", line).group(0)


def _too_deep_block(work: list[str], index: int) -> tuple[int, int] | None:
    """(header, last) 0-based lines of the compound statement whose body, starting at line `index`,
    is indented past Python's limit: its header line and every line below indented deeper than it.
    Replaced by `pass`, only that statement is lost (repairing the deep line alone leaves the body
    below it too deep, and the recovery then cut the rest of the module: a kernel after 101 nested
    `def`s lost its PAL001)."""
    depth = len(_indentation(work[index]))
    header = next((i for i in range(index - 1, -1, -1) if work[i].strip() and not work[i].lstrip().startswith("#")
                   and len(_indentation(work[i])) < depth), None)
    if header is None:
        return None
    top = len(_indentation(work[header]))
    last = index
    for i in range(index + 1, len(work)):
        if work[i].strip() and not work[i].lstrip().startswith("#"):
            if len(_indentation(work[i])) <= top:
                break
            last = i
    return header, last


def _swallowing_string_line(work: list[str], reported: int) -> int:
    """The line where the triple-quoted string opens that swallowed code, for an "unterminated
    triple-quoted string" reported at line `reported` (0-based): three quotes typed above the other
    strings of a module pairs each later closing quote with the next opening one, and Python
    reports the last, unpaired one (often at the end of the module). The first triple-quoted
    string directly followed by a word (its closing quotes are those that open a docstring
    below: `The docstring` follows them) is the one that swallowed code; none found: `reported` itself."""
    previous = None
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(work) + "\n").readline):
            if token.start[0] - 1 > reported:
                break
            if token.type in (tokenize.NAME, tokenize.NUMBER) and not keyword.iskeyword(token.string) \
                    and previous is not None and previous.type == tokenize.STRING \
                    and previous.end[0] == token.start[0] and _TRIPLE_QUOTED.match(previous.string):
                return previous.start[0] - 1
            if token.type not in (tokenize.NL, tokenize.COMMENT):
                previous = token
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return reported


_TRIPLE_QUOTED = re.compile(r"[A-Za-z]{0,2}(\"\"\"|\'\'\')")


def _too_deep_statement(work: list[str]) -> tuple[int, int] | None:
    """(first, last) 0-based lines of the first statement too deeply nested for `ast.parse` on its own.

    A RecursionError from the parser carries no line. The tokenizer is not recursive, so it splits
    the text into logical lines; only those with many operators or brackets are tried alone.
    """
    found, start, weight = None, None, 0
    try:
        for token in tokens("\n".join(work) + "\n"):  # one at a time: TokenInfos hold a copy of their line each
            if found is not None:
                continue  # the text must still tokenize to the end, or none is reported
            if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT) and start is None:
                continue
            if start is None:
                start, weight = token.start[0] - 1, 0
            if token.type == tokenize.OP or keyword.iskeyword(token.string):  # `not not ... x` nests too
                weight += 1
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                end = token.start[0] - 1
                if weight > 100:
                    statement = textwrap.dedent("\n".join(work[start:end + 1])).rstrip()
                    if statement.endswith(":"):
                        statement += " pass"
                    try:
                        ast.parse(statement)
                    except (RecursionError, MemoryError):
                        found = start, min(end, len(work) - 1)
                    except (SyntaxError, ValueError):
                        pass
                start = None
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return found


_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def noqa_codes(line: str) -> set[str] | None:
    """Codes silenced on a line: None if no noqa comment, an empty set for a bare `# noqa` (all)."""
    if "#" not in line:
        return None
    match = _NOQA.search(line)
    if not match:
        return None
    codes = match.group("codes")
    if not codes:
        return set()
    return {code.upper() for code in re.split(r"[\s,]+", codes) if code}


# `# pallas-lsp: noqa` or `# pallas-lsp: noqa: PAL001, PAL002` on a line of its own: the whole file, as
# `# ruff: noqa` is for ruff. A comment that trails code is a line's own noqa, never the file's.
_FILE_NOQA = re.compile(r"^[ \t]*#[ \t]*pallas-lsp[ \t]*:[ \t]*noqa(?P<rest>[^\r\n]*)$", re.M | re.I)
_FILE_NOQA_CODES = re.compile(r"[ \t]*(?::[ \t]*(?P<codes>[A-Z]+[0-9]*(?:[ \t]*,?[ \t]*[A-Z]+[0-9]*)*)[ \t]*,?)?[ \t]*",
                              re.I)


def file_noqa_codes(text: str) -> set[str] | None:
    """Codes or prefixes a file silences as a whole: None without a file-level noqa comment, an
    empty set for a bare one (every rule). A line inside a string is no comment: checked with the
    tokenizer, only when the text has such a line at all."""
    hits = [match for match in _FILE_NOQA.finditer(text) if _FILE_NOQA_CODES.fullmatch(match["rest"])]
    if not hits:
        return None
    comments = _comment_lines(text)
    codes: set[str] = set()
    found = False
    for match in hits:
        line = len(LINE_BREAK.findall(text, 0, match.start())) + 1
        if comments is not None and line not in comments:
            continue
        listed = _FILE_NOQA_CODES.fullmatch(match["rest"])["codes"]
        if not listed:
            return set()
        found = True
        codes.update(code.upper() for code in re.split(r"[\s,]+", listed) if code)
    return codes if found else None


def _comment_lines(text: str) -> set[int] | None:
    """1-based lines where a comment starts (None when the text does not tokenize: then every
    comment-looking line counts)."""
    try:
        return {token.start[0] for token in tokenize.generate_tokens(io.StringIO(text).readline)
                if token.type == tokenize.COMMENT}
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
