"""Takeout's ``safeHtmlItem`` answers (sanitised HTML) → plain text for the index.

Block elements start a new line, list items a ``- ``, ``<pre>`` keeps its spacing, every
other tag is dropped and entities are decoded (the standard library's HTML parser).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCKS = frozenset({"p", "div", "br", "li", "ul", "ol", "pre", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                     "blockquote", "hr", "section"})  # fmt: skip
_SPACES = re.compile(r"[ \t\r\f\v]+")
_LINES = re.compile(r"\n{3,}")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.out.append("\n")
        if tag == "li":
            self.out.append("- ")
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag == "pre":
            self.pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in _BLOCKS and tag != "li":
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        self.out.append(data if self.pre else _SPACES.sub(" ", data))


def html_to_text(html: str) -> str:
    parser = _Text()
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):  # the parser gives up on some broken markup
        return html
    text = "".join(parser.out)
    lines = [line.rstrip() for line in text.split("\n")]
    return _LINES.sub("\n\n", "\n".join(lines)).strip()
