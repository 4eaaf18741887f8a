"""A backup of the whole store as one JSON document (`agtail state export` / `state import`).

It holds every label, mark (star, hide, title) with who set it and when (removals too: a
label a user took off stays off after a restore), the rules, and the secrets allowlist, with
the sha256 of that content. Importing checks the document whole (its format, version and
digest, every row as a change would be checked) before anything is written, then writes it in
one transaction: a bad backup changes nothing. Rows are merged as a pull's state pack is
(agtaild.sync.statepack): a user's change over an agent's over a rule's, then the newer, so
importing a backup into the store it came from changes nothing, and into a newer store loses
nothing newer. A rule already there (same filter and label) is not added twice.
"""

from __future__ import annotations

import json
import time
from typing import Any

from agtaild.errors import UsageError
from agtaild.userstate import checks, envelope
from agtaild.userstate.allowlist import MAX_REASON, check_fingerprint
from agtaild.userstate.rules import MAX_RULES
from agtaild.userstate.store import MARKS, Change, UserState

FORMAT = "agtail-user-state"
VERSION = 1
#: A backup larger than this is not one agtail wrote.
MAX_BYTES = 256 << 20
_BODY = ("labels", "marks", "rules", "secret_allowlist")


def digest(body: dict[str, Any]) -> str:
    return envelope.digest(body, _BODY)


def export(store: UserState) -> dict[str, Any]:
    doc = store.dump()
    body: dict[str, Any] = {
        "labels": doc["labels"],
        "marks": doc["marks"],
        "rules": [],
        "secret_allowlist": [],
    }
    if store.path.exists():
        with store._lock:
            db = store.db
            body["rules"] = [
                list(r) for r in db.execute("SELECT filter, key, value, at FROM rules ORDER BY id")
            ]
            body["secret_allowlist"] = [
                list(r)
                for r in db.execute("SELECT fingerprint, reason, who, at FROM secret_allowlist ORDER BY 1")
            ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sha256": digest(body),
        **body,
    }


def _row(row: Any, n: int, what: str) -> list[Any]:
    if not isinstance(row, list) or len(row) != n:
        raise UsageError(f"the backup's {what}: a malformed row {json.dumps(row)[:80]}")
    return row


def parse(data: bytes) -> dict[str, Any]:
    """The checked document; a backup that is not whole and ours is refused, saying why."""
    try:
        return envelope.check(data, fmt=FORMAT, version=VERSION, lists=_BODY, max_bytes=MAX_BYTES)
    except envelope.EnvelopeError as exc:
        raise UsageError(
            {
                "size": f"the backup is larger than {exc.detail} MB: not one agtail wrote",
                "json": f"the backup is not JSON ({exc.detail})",
                "format": "not a backup of agtail's user state (`agtail state export` writes one)",
                "version": f"the backup is version {exc.detail}; this agtail reads version {VERSION}",
                "list": f"the backup's {exc.detail} is not a list",
                "digest": "the backup's content does not match its sha256 (it was changed or cut short)",
            }[exc.kind]
        ) from None


def restore(store: UserState, doc: dict[str, Any], *, dry_run: bool = False) -> dict[str, int]:
    """Merge a parsed backup into the store: all of it, or (any row bad) nothing."""
    changes: list[Change] = []
    for table in ("labels", "marks"):
        for row in doc[table]:
            collection, agent, sid, name, value, who, at = _row(row, 7, table)
            if not all(isinstance(x, str) for x in (collection, agent, sid, name, who)) or not (
                value is None or isinstance(value, str)
            ):
                raise UsageError(f"the backup's {table}: a malformed row {json.dumps(row)[:80]}")
            if table == "marks" and name not in MARKS:
                raise UsageError(f"the backup's marks: {name[:20]!r} is no mark ({', '.join(MARKS)})")
            ref = (collection, agent, sid)
            if table == "labels":
                changes.append(Change(ref, "label", value, key=name, who=who, at=at))
            else:
                changes.append(Change(ref, name, value, who=who, at=at))
    now = store._clock()
    rules: list[tuple[str, str, str, float]] = []
    for row in doc["rules"]:
        filter_text, key, value, at = _row(row, 4, "rules")
        if not isinstance(filter_text, str) or not filter_text.strip() or len(filter_text) > 2000:
            raise UsageError(
                f"the backup's rules: a rule needs a filter of up to 2000 characters: {json.dumps(row)[:80]}"
            )
        rules.append((filter_text, checks.key(key), checks.value(value), checks.at(at, now)))
    allows: list[tuple[str, str, str, float]] = []
    for row in doc["secret_allowlist"]:
        fp, reason, who, at = _row(row, 4, "secret_allowlist")
        if not isinstance(reason, str) or len(reason) > MAX_REASON:
            raise UsageError(
                f"the backup's secret_allowlist: a reason is text of up to {MAX_REASON} characters"
            )
        allows.append((check_fingerprint(fp), reason, checks.who(who), checks.at(at, now)))
    batch = [store._checked(c) for c in changes]
    out = {"changes": 0, "rules": 0, "secret_allowlist": 0}
    with store._lock:
        db = store.db
        db.execute("BEGIN IMMEDIATE")
        try:
            out["changes"] = sum(1 for c in batch if store._write(db, c))
            store._check_label_count(db, {c.ref for c in batch if c.what == "label"})
            have = {tuple(r) for r in db.execute("SELECT filter, key, value FROM rules")}
            for filter_text, key, value, at in rules:
                if (filter_text, key, value) in have:
                    continue
                have.add((filter_text, key, value))
                db.execute(
                    "INSERT INTO rules (filter, key, value, at) VALUES (?, ?, ?, ?)",
                    (filter_text, key, value, at),
                )
                out["rules"] += 1
            if len(have) > MAX_RULES:
                raise UsageError(f"the store would hold {len(have)} rules; at most {MAX_RULES}")
            for fp, reason, who, at in allows:
                old = db.execute("SELECT at FROM secret_allowlist WHERE fingerprint = ?", (fp,)).fetchone()
                if old is not None and old[0] >= at:
                    continue
                db.execute(
                    "INSERT OR REPLACE INTO secret_allowlist (fingerprint, reason, who, at) VALUES (?, ?, ?, ?)",
                    (fp, reason, who, at),
                )
                out["secret_allowlist"] += 1
            db.execute("ROLLBACK" if dry_run else "COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return out
