#!/usr/bin/env python3
"""Make a huge Claude Code session for the viewer benchmark: a real session's lines repeated
with fresh ids until the file reaches ``--mb`` megabytes.

Each copy gets new uuids (the parent chain continues from one copy into the next, so it is one
linear conversation), new ``msg_``/``req_``/``toolu_`` ids (so usage is not de-duplicated and
tool results pair with their own calls), and timestamps moved one hour later per copy. The
session id stays the file's own. Default source: the largest Claude sample in tests/corpus.

    python bench/make_huge_claude.py /tmp/huge/projects --mb 50
"""

from __future__ import annotations

import argparse
import json
import re
import uuid
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = (
    REPO / "tests" / "corpus" / "claude-code" / "spotter" / "projects"
    / "-home-USER-projects-spotter-worktrees-spotter-4te" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
)  # fmt: skip
SESSION_ID = "5e55a0b1-0000-4000-8000-00000000b16e"
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_IDS = re.compile(r"\b(msg|req|toolu)_([A-Za-z0-9]+)")
_TS = re.compile(r'"timestamp":"([0-9T:.\-]+)Z"')


def copy_lines(
    lines: list[str], n: int, old_session: str, last_uuid: str | None
) -> tuple[list[str], str | None]:
    mapping: dict[str, str] = {old_session: SESSION_ID}

    def new_uuid(m: re.Match[str]) -> str:
        old = m.group(0)
        if old not in mapping:
            mapping[old] = str(uuid.uuid4())
        return mapping[old]

    def new_id(m: re.Match[str]) -> str:
        return f"{m.group(1)}_c{n}x{m.group(2)}"

    def later(m: re.Match[str]) -> str:
        try:
            t = datetime.fromisoformat(m.group(1)) + timedelta(hours=n)
        except ValueError:
            return m.group(0)
        return f'"timestamp":"{t.isoformat(timespec="milliseconds")}Z"'

    out = []
    for line in lines:
        text = _TS.sub(later, _IDS.sub(new_id, _UUID.sub(new_uuid, line)))
        if last_uuid is not None and '"parentUuid":null' in text and '"isSidechain":false' in text:
            doc = json.loads(text)
            doc["parentUuid"] = last_uuid
            text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        out.append(text)
    for text in reversed(out):
        m = re.search(r'"uuid":"([0-9a-f-]{36})"', text)
        if m and '"isSidechain":true' not in text:
            return out, m.group(1)
    return out, last_uuid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a Claude projects folder to write into")
    parser.add_argument("--mb", type=float, default=50.0, help="target size in MB (default 50)")
    parser.add_argument("--source", type=Path, default=SOURCE, help="the real session to repeat")
    args = parser.parse_args(argv)
    lines = [x for x in args.source.read_text(encoding="utf-8").splitlines() if x.strip()]
    old_session = args.source.stem
    dest = args.root / "-bench-huge-session" / f"{SESSION_ID}.jsonl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    target = int(args.mb * 1_000_000)
    size = 0
    last: str | None = None
    n = 0
    with open(dest, "w", encoding="utf-8") as fh:
        while size < target:
            copied, last = copy_lines(lines, n, old_session, last)
            for text in copied:
                fh.write(text + "\n")
                size += len(text.encode()) + 1
            n += 1
    print(json.dumps({"path": str(dest), "bytes": size, "copies": n, "session": SESSION_ID}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
