"""What of an event is searchable, and how a person's query becomes a safe FTS5 query.

Two full-text tables share the event id as rowid:

* ``events_fts`` (unicode61, external content = the ``events`` columns): every word of the
  message text, the tool input and the tool result. Cheap to build (measured ~3.5× cheaper
  than trigram over the same text, and most of the text is tool output).
* ``events_cjk`` (trigram): only the whitespace-separated words that contain a non-ASCII
  character, of the message text and the tool input. Scripts written without spaces
  (Chinese, Japanese, Thai, …) form one long "word" that unicode61 could only find whole;
  the trigram table finds any substring of it. Only those words pay the trigram price, and
  tool results are left out of it (they are most of the text; measured, the trigram table
  over them cost about as much as the whole word index): CJK in a tool's output is found by
  whole words (the runs between spaces and punctuation), or by prefix in ``prefix`` mode.

Query modes (user text is never passed to FTS5 as syntax — it is always quoted):

* ``phrase`` (default): runs of ASCII words must appear as a phrase; words with other
  characters must appear as substrings (CJK) in the same event.
* ``prefix``: as phrase, and the last ASCII word may be the start of a word.
* ``words``: every word must appear, in any order.
* ``regex``: an RE2 regular expression (Python's syntax without backreferences and
  lookaround; agtaild/index/regex.py), matched by scanning (slow on big indexes; narrow it
  with filters).

Every query is bounded (agtaild/index/budget.py): at most 1000 characters and 32 terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec

from agtaild.model import Event

MODES = ("phrase", "prefix", "words", "regex")
#: Highlight markers in snippets (rare in code and prose; the CLI turns them into colour).
MARK_START = "«"
MARK_END = "»"
ELLIPSIS = "…"

_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]")
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
_SPACES = re.compile(r"\s+")


def flatten(value: Any) -> str:
    """The searchable text of a JSON value: its string leaves, one per line (keys left out:
    they are the same in every call and would only add noise)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    out: list[str] = []
    _collect(value, out, 0)
    return "\n".join(out)


def _collect(value: Any, out: list[str], depth: int) -> None:
    if depth > 64:
        return
    if isinstance(value, str):
        if value:
            out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, out, depth + 1)


def hook_text(event: Event) -> str:
    hook = event.hook
    if hook is None:
        return ""
    parts = [p for p in (hook.event, hook.tool, hook.command, hook.text) if p]
    return "\n".join(parts)


def event_columns(event: Event) -> tuple[str | None, str | None, str | None, bool]:
    """(text, tool_input, tool_result, result_moved) for the ``events`` row.

    ``text`` is Event.text itself and a string ``result`` is stored as-is, so that the
    largest parts of a transcript are stored once: the event JSON keeps them null and reading
    puts them back (``result_moved`` says a string result was moved out).
    """
    tool_input: str | None = None
    if event.input is not None:
        tool_input = flatten(event.input)
    if event.hook is not None:
        extra = hook_text(event)
        tool_input = f"{tool_input}\n{extra}" if tool_input else extra
    moved = isinstance(event.result, str)
    if moved:
        tool_result: str | None = event.result
    elif event.result is not None:
        tool_result = flatten(event.result)
    else:
        tool_result = None
    return event.text, tool_input or None, tool_result or None, moved


def wide_words(text: str | None) -> str | None:
    """The words of ``text`` that contain a non-ASCII character, for the trigram table."""
    if not text or text.isascii():
        return None
    words = [w for w in text.split() if not w.isascii()]
    return " ".join(words) if words else None


def fts_phrase(words: str) -> str:
    """A literal FTS5 phrase: double quotes doubled, so nothing in it is syntax."""
    return '"' + words.replace('"', '""') + '"'


class Query(msgspec.Struct):
    """A user query compiled for the two tables. ``empty``: nothing searchable in it."""

    mode: str
    words: str | None = None  # FTS5 MATCH expression for events_fts
    wide: list[str] = msgspec.field(default_factory=list)  # substrings for events_cjk
    regex: str | None = None
    #: The ASCII runs quoted in ``words`` (each one a phrase), and whether the last one is a
    #: prefix: what ``highlight_pattern`` marks in a snippet.
    runs: list[str] = msgspec.field(default_factory=list)
    prefix_last: bool = False

    @property
    def empty(self) -> bool:
        return not self.words and not self.wide and self.regex is None

    def needles(self) -> list[str]:
        """What to highlight in a snippet made by Python (CJK hits)."""
        return list(self.wide)


def split_query(q: str, mode: str = "phrase") -> tuple[list[list[str]], list[str]]:
    """A person's query as runs of ASCII words (each a phrase; in ``words`` mode one word a run)
    and the distinct words with other characters (CJK and the like: matched as substrings).
    The local index and the team database (agtaild.pg.search) read queries the same way."""
    runs: list[list[str]] = []
    wide: list[str] = []
    current: list[str] = []
    for word in q.split():
        if word.isascii():
            current.append(word)
            continue
        if current:
            runs.append(current)
            current = []
        if word not in wide:
            wide.append(word)
    if current:
        runs.append(current)
    if mode == "words":
        runs = [[w] for run in runs for w in run]
    return runs, wide


def compile_query(q: str, mode: str = "phrase") -> Query:
    from agtaild.index.budget import check_query_size

    if mode == "regex":
        check_query_size(q, 1)
        return Query(mode=mode, regex=q)
    check_query_size(q, 0)
    # FTS5 reads its query as a C string: a NUL would end it inside the quotes.
    q = q.replace("\x00", " ")
    runs, wide = split_query(q, mode)
    phrases = []
    searchable = [" ".join(run) for run in runs if _ASCII_TOKEN.search(" ".join(run))]
    prefix_last = mode == "prefix" and bool(searchable) and not wide
    for i, run_text in enumerate(searchable):
        phrase = fts_phrase(run_text)
        if prefix_last and i == len(searchable) - 1:
            phrase += " *"
        phrases.append(phrase)
    check_query_size(q, len(phrases) + len(wide))
    return Query(
        mode=mode, words=" AND ".join(phrases) or None, wide=wide, runs=searchable, prefix_last=prefix_last
    )


#: Characters the word tokenizer keeps inside a token (letters, numbers; ASCII has no other).
_TOKEN_CHAR = r"[^\W_]"


def highlight_pattern(query: Query) -> list[re.Pattern[str]] | None:
    """Regular expressions (one per phrase) that find the query's phrases in an event's
    *lower-cased* text, for snippets (see ``find_phrases``).

    A hit's snippet used to come from FTS5's ``snippet()``, which tokenizes the whole column
    again for each hit: on long tool results that was as slow as the search itself. The
    phrases are ASCII runs, so unicode61's view of them is simple: the runs' ``[A-Za-z0-9]``
    tokens, case-folded, separated by anything that is not a letter or a number. Each
    pattern starts with its first token as a literal (the boundary before it is a fixed-width
    look-behind), so the regex engine scans for it as fast as ``str.find`` (measured: 3 ms per
    MB, against 110 ms with a leading look-behind and IGNORECASE, and 36 ms for an alternation
    of two phrases in one pattern, which loses that scan). Where
    it finds nothing (diacritics folded by the tokenizer: "cafe" in "café"), the caller falls
    back to ``snippet()``.
    """
    alternatives = []
    for i, run in enumerate(query.runs):
        tokens = [t.lower() for t in _ASCII_WORD.findall(run)]
        if not tokens:
            continue
        last = query.prefix_last and i == len(query.runs) - 1
        body = r"[\W_]+".join(tokens)
        before = f"(?<!{_TOKEN_CHAR}{tokens[0]})"
        end = f"{_TOKEN_CHAR}*" if last else f"(?!{_TOKEN_CHAR})"
        alternatives.append(re.compile(f"{tokens[0]}{before}{body[len(tokens[0]) :]}{end}"))
    return alternatives or None


def find_phrases(patterns: list[re.Pattern[str]], text: str, limit: int = 20) -> list[str] | None:
    """The matches of ``highlight_pattern`` in ``text``, as written there, in text order;
    None when lower-casing changes the text's length (a few letters, e.g. "İ", lower to two
    characters: the positions would not carry over)."""
    lower = text.lower()
    if len(lower) != len(text):
        return None
    spans: list[tuple[int, int]] = []
    for pattern in patterns:
        for n, m in enumerate(pattern.finditer(lower)):
            if n >= limit:
                break
            spans.append(m.span())
    return [text[a:b] for a, b in sorted(spans)[:limit]]


def like_pattern(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def clean_snippet(snippet: str) -> str:
    """One line: FTS5 snippets keep the source's newlines and runs of spaces."""
    return _SPACES.sub(" ", snippet).strip()


def _occurrences(lower: str, needles: list[str]) -> Iterator[tuple[int, int]]:
    for needle in needles:
        n = needle.lower()
        start = lower.find(n)
        while start >= 0 and n:
            yield start, start + len(n)
            start = lower.find(n, start + len(n))


def make_snippet(texts: list[str | None], needles: list[str], width: int = 120) -> str:
    """A snippet around the first occurrence of any needle (for hits FTS5 cannot snippet:
    trigram-only and regex hits). Falls back to the start of the first non-empty text."""
    for text in texts:
        if not text:
            continue
        lower = text.lower()
        spans = sorted(_occurrences(lower, needles))
        if not spans:
            continue
        first = spans[0][0]
        begin = max(0, first - width // 3)
        end = min(len(text), begin + width)
        out: list[str] = [ELLIPSIS] if begin > 0 else []
        pos = begin
        for s, e in spans:
            if s < pos or e > end:
                continue
            out.append(text[pos:s])
            out.append(MARK_START + text[s:e] + MARK_END)
            pos = e
        out.append(text[pos:end])
        if end < len(text):
            out.append(ELLIPSIS)
        return clean_snippet("".join(out))
    for text in texts:
        if text:
            return clean_snippet(text[:width] + (ELLIPSIS if len(text) > width else ""))
    return ""


def regex_spans(pattern: Any, text: str, limit: int = 20) -> list[str]:
    found: list[str] = []
    for m in pattern.finditer(text):
        if m.group(0):
            found.append(m.group(0))
        if len(found) >= limit:
            break
    return found
