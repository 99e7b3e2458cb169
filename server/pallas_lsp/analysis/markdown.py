"""Quoting text that came from the user's repository (source segments, file names, values a traced
program returned) for hovers, which clients render as Markdown: in a code span nothing is a link,
an image, markup or HTML, whatever the text holds."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """Line breaks and other control characters as spaces: a code span or a fenced line stays one."""
    return _CONTROL.sub(" ", str(text))


def code_span(text: str) -> str:
    """`text` as a Markdown code span, fenced by more backticks than any run of them it holds."""
    text = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") or not text.strip() else text
    return f"{fence}{padded}{fence}"


def code_block(text: str, language: str = "python") -> str:
    """`text` (one line) as a fenced code block no line of it can close."""
    text = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&:])")


def markdown_text(text: str) -> str:
    """`text` shown as itself in Markdown: every punctuation character that could start markup,
    a link or HTML backslash-escaped (CommonMark), on one line."""
    return _PUNCTUATION.sub(r"\\\1", one_line(text))
