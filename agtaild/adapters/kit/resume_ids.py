"""Session ids that are safe to put on an agent's command line.

A resume command is built from an id read out of a file that anything on the machine may
have written. An id starting with ``-`` would be parsed by the agent as an option, and spaces
or shell metacharacters have no business in an id either; such ids get no resume command.
Each adapter names its agent's id alphabet (UUIDs, ``T-<uuid>``, …).
"""

from __future__ import annotations

import re

#: A UUID (any case), the usual session id shape.
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: Letters, digits, ``_``, ``.`` and ``-`` (not first): the widest alphabet accepted.
TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
#: The same with a letter or digit first: the ids Cline, Roo, Kilo and Mistral Vibe make
#: (epoch-ms digits, ``<ms>_<random>``, UUIDs).
ALNUM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def safe_id(value: str | None, alphabet: re.Pattern[str] = TOKEN) -> str | None:
    """``value`` when it matches ``alphabet`` entirely and cannot parse as an option."""
    if not value or value.startswith("-") or alphabet.fullmatch(value) is None:
        return None
    return value
