"""Secrets the index pipeline found: a findings table, written incrementally after each update.

Every event stored is scanned once, by the writer, after the update that stored it: the pass
reads the events above a high-water mark (``meta.secrets_through``, an event id) plus those
the writer queued because their id was reused below it (``secret_pending``), builds each event's
document exactly as the query layer sends it (agtaild.index.queries.event_doc), and scans the
fields an exit would scan (agtaild.secrets.items). An append therefore scans only its new
events. A big first index does not wait for the pass: each update scans at most a budget
inline (an update that read BIG_UPDATE_BYTES or more scans nothing inline), and the daemon's
writer runs the rest between updates (agtaild.daemon.scheduler).

Two tables:

* ``secret_findings``: one row per secret per place — rule, session, event (id and seq), field
  (a JSON Pointer into the event: ``/text``, ``/input/command``), character offsets in that
  field's string, the fingerprint (sha256 of the secret, never the secret), confidence, the
  last characters a mask shows, and the event's time (first/last seen). The writer deletes
  them with their events (agtaild.index.writer), so a re-read session keeps no stale ones;
  an event whose stored JSON the writer patches is queued to be scanned again.
* ``secret_clean``: the digests of events scanned clean (agtaild.secrets.items.digest). An exit
  that is about to send such an event need not scan it again (agtaild.query.masking); the
  digest is of the very bytes sent, so a changed event is simply not found there.

The session-level texts (a title, the first prompt, the working directory, the unit's path,
the project, the git branch) are scanned the same way, incrementally by the session's change
number (``meta.secrets_sessions_through``: every write of a session row stamps the next one):
their findings have ``seq`` -1 and event id 0, and a ``field`` under ``/session/``
(``/session/title``, ``/session/cwd``); they go with their session like the rest.

Both are recorded under the scanner's rules identity (``meta.secrets_rules``): other rules
(an upgrade, a rule file) empty them and the pass starts again from the first event.
"""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING, Any

from agtaild.index.storage import immediate

if TYPE_CHECKING:  # the scanner (re2) is imported by the functions that scan, not by the writer
    from agtaild.secrets.scanner import Scanner

#: Characters of event text the pass reads inline after an update (an append is far less;
#: a first index leaves the rest to the daemon's idle passes or to ``agtail secrets``).
INLINE_BUDGET_CHARS = 8 << 20
#: An update that read at least this many bytes of transcripts (a first index) scans nothing
#: inline: its 8 MiB would come after the index, on its critical path (≈ 0.45 s of CPU on the
#: 200 MB bench corpus), and the daemon's writer or ``agtail secrets`` scans it all anyway.
BIG_UPDATE_BYTES = 16 << 20
#: Up to this many event ids above the mark, the events left are counted (a walk of their
#: rows); beyond, estimated from the ids (agtaild.index.findings.events_above).
EXACT_COUNT_IDS = 20_000
#: Events read per batch of the pass.
BATCH_EVENTS = 500
_COLUMNS = "id, session_id, seq, data, text, tool_result, result_moved, epoch"
#: The session fields scanned (text a session row holds besides its events).
SESSION_FIELDS = ("title", "first_prompt", "cwd", "path", "project", "git_branch")
#: ``seq`` of a finding in a session-level field (no event holds it).
SESSION_SEQ = -1


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def through(db: sqlite3.Connection) -> int:
    """The highest event id the pass has read (0: none)."""
    try:
        return int(_meta(db, "secrets_through") or 0)
    except ValueError:
        return 0


def sessions_through(db: sqlite3.Connection) -> int:
    """The highest session change number the pass has read (0: none)."""
    try:
        return int(_meta(db, "secrets_sessions_through") or 0)
    except ValueError:
        return 0


def events_above(db: sqlite3.Connection, mark: int) -> int:
    """The events above the pass's mark: 0 exactly when there is none. Counting them walks the
    events table's rows (3.8 s of a 2 GB index's 942,225 events, and the daemon asks after each
    half-second step of its pass), so beyond :data:`EXACT_COUNT_IDS` ids this is the ids left
    above the mark: an upper bound, off by the ids of events deleted since (a re-read session's
    old ones), which a progress figure can bear."""
    top = db.execute("SELECT max(id) FROM events").fetchone()[0]
    if top is None or top <= mark:
        return 0
    if top - mark > EXACT_COUNT_IDS:
        return int(top - mark)
    return int(db.execute("SELECT count(*) FROM events WHERE id > ?", (mark,)).fetchone()[0])


def queue_reused(db: sqlite3.Connection, first: int, count: int) -> None:
    """Called by the writer after inserting events ``first`` … ``first + count - 1``: ids at or
    below the mark (reused after the events above them were deleted) are queued for the pass."""
    mark = through(db)
    if count and first <= mark:
        db.execute(
            "INSERT OR IGNORE INTO secret_pending (event_id) SELECT id FROM events WHERE id BETWEEN ? AND ?",
            (first, min(mark, first + count - 1)),
        )


def requeue(db: sqlite3.Connection, event_ids: list[int]) -> None:
    """Events changed in place (their ``extra`` patched): scanned again by the next pass."""
    mark = through(db)
    db.executemany(
        "INSERT OR IGNORE INTO secret_pending (event_id) VALUES (?)", [(i,) for i in event_ids if i <= mark]
    )


def forget_all(db: sqlite3.Connection) -> None:
    """Every event is gone (a reindex): the findings with them, and the pass starts again.
    Clean digests stay: they name bytes, not events, and hold for the same bytes again."""
    db.execute("DELETE FROM secret_findings")
    db.execute("DELETE FROM secret_pending")
    _set_meta(db, "secrets_through", "0")
    _set_meta(db, "secrets_sessions_through", "0")


def pending(db: sqlite3.Connection, scanner: Scanner | None = None) -> int:
    """Events (and sessions, for their own fields) not scanned yet under the scanner's rules;
    the events above the mark counted exactly up to :data:`EXACT_COUNT_IDS` ids, and beyond
    that as the ids left (see :func:`events_above`)."""
    from agtaild.secrets.items import rules_identity

    if scanner is not None and _meta(db, "secrets_rules") != rules_identity(scanner):
        return int(
            db.execute("SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM sessions)").fetchone()[0]
        )
    above = events_above(db, through(db))
    queued = db.execute("SELECT count(*) FROM secret_pending").fetchone()[0]
    sessions = db.execute(
        "SELECT count(*) FROM sessions WHERE change > ?", (sessions_through(db),)
    ).fetchone()[0]
    return int(above) + int(queued) + int(sessions)


def scan_pass(
    db: sqlite3.Connection,
    scanner: Scanner,
    *,
    max_chars: int | None = INLINE_BUDGET_CHARS,
    max_seconds: float | None = None,
) -> dict[str, Any]:
    """Scan events not scanned yet, a batch per transaction, until none is left or a budget is
    spent (``None``: no budget). Returns ``{"scanned", "findings", "pending"}``. The caller
    holds the index's write lock; the connection is in autocommit mode."""
    from agtaild.secrets.items import rules_identity

    identity = rules_identity(scanner)
    started = time.monotonic()
    scanned = found = chars = 0
    if _meta(db, "secrets_rules") != identity:
        with immediate(db):
            db.execute("DELETE FROM secret_findings")
            db.execute("DELETE FROM secret_clean")
            db.execute("DELETE FROM secret_pending")
            _set_meta(db, "secrets_rules", identity)
            _set_meta(db, "secrets_through", "0")
            _set_meta(db, "secrets_sessions_through", "0")
    while True:
        if max_chars is not None and chars >= max_chars:
            break
        if max_seconds is not None and time.monotonic() - started >= max_seconds:
            break
        smark = sessions_through(db)
        srows = db.execute(
            "SELECT id, change, activity, data FROM sessions WHERE change > ? ORDER BY change LIMIT ?",
            (smark, BATCH_EVENTS),
        ).fetchall()
        if srows:
            with immediate(db):
                n, f, c = _scan_sessions(db, scanner, srows)
                _set_meta(db, "secrets_sessions_through", str(srows[-1][1]))
            scanned, found, chars = scanned + n, found + f, chars + c
            continue
        mark = through(db)
        queued = [
            r[0]
            for r in db.execute(
                "SELECT event_id FROM secret_pending ORDER BY event_id LIMIT ?", (BATCH_EVENTS,)
            )
        ]
        if queued:
            marks = ",".join("?" * len(queued))
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM events WHERE id IN ({marks}) ORDER BY id", queued
            ).fetchall()
        else:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?", (mark, BATCH_EVENTS)
            ).fetchall()
            if not rows:
                break
        with immediate(db):
            n, f, c = _scan_rows(db, scanner, rows)
            if queued:
                db.executemany("DELETE FROM secret_pending WHERE event_id = ?", [(i,) for i in queued])
            else:
                _set_meta(db, "secrets_through", str(rows[-1][0]))
        scanned, found, chars = scanned + n, found + f, chars + c
    return {"scanned": scanned, "findings": found, "pending": pending(db)}


def _scan_rows(db: sqlite3.Connection, scanner: Scanner, rows: list[Any]) -> tuple[int, int, int]:
    """Scan the events of ``rows``: their clean digests and their findings written."""
    from agtaild.index.queries import event_doc
    from agtaild.secrets import jsonwalk
    from agtaild.secrets.items import digest, fields_to_scan

    texts: list[str] = []
    items: list[tuple[Any, dict[str, Any], bytes | None, int, int]] = []
    for row in rows:
        eid, _sid, _seq, data, text, result, moved, _epoch = row
        doc = event_doc(data, text, result, moved)
        fields, _ = fields_to_scan(doc)
        lo = len(texts)
        for k, v in fields.items():
            jsonwalk.texts_of(v, texts, k)
        items.append((row, fields, digest(fields), lo, len(texts)))
    results = scanner.results(texts)
    clean: list[tuple[bytes]] = []
    findings: list[tuple[Any, ...]] = []
    for row, fields, key, lo, hi in items:
        if not any(r.spans or r.scanned is not None for r in results[lo:hi]):
            if key is not None:
                clean.append((key,))
            continue
        eid, sid, seq, _data, _text, _result, _moved, epoch = row
        db.execute("DELETE FROM secret_findings WHERE event_id = ?", (eid,))  # a re-scan of a queued id
        for k, v in fields.items():
            for finding in jsonwalk.scan_value(scanner, v, "/" + k.replace("~", "~0").replace("/", "~1"), k):
                findings.append(
                    (eid, sid, seq, finding.field, finding.rule, finding.start, finding.end,
                     finding.fingerprint, finding.confidence, finding.tail, epoch)
                )  # fmt: skip
    if clean:
        db.executemany("INSERT OR IGNORE INTO secret_clean (digest) VALUES (?)", clean)
    if findings:
        db.executemany(
            'INSERT INTO secret_findings (event_id, session_id, seq, field, rule, start, "end", fingerprint,'
            " confidence, tail, epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            findings,
        )
    return len(rows), len(findings), sum(map(len, texts))


def _scan_sessions(db: sqlite3.Connection, scanner: Scanner, rows: list[Any]) -> tuple[int, int, int]:
    """Scan the session-level fields of ``rows`` (id, change, activity, data); their old
    session-level findings replaced."""
    import msgspec

    from agtaild.secrets import jsonwalk

    findings: list[tuple[Any, ...]] = []
    chars = 0
    # As for events (_scan_rows): every field's texts scanned in one batch first, and only a
    # field with a hit scanned again for its findings (a scanner call per field cost ~0.15 ms,
    # six fields a session: most of an append's secrets pass).
    texts: list[str] = []
    fields: list[tuple[int, Any, str, str, int, int]] = []
    for sid, _change, activity, data in rows:
        try:
            doc = msgspec.json.decode(data)
        except msgspec.DecodeError:
            continue
        db.execute("DELETE FROM secret_findings WHERE session_id = ? AND seq = ?", (sid, SESSION_SEQ))
        if not isinstance(doc, dict):
            continue
        for name in SESSION_FIELDS:
            value = doc.get(name)
            if not isinstance(value, str) or not value:
                continue
            chars += len(value)
            lo = len(texts)
            jsonwalk.texts_of(value, texts, name)
            fields.append((sid, activity, name, value, lo, len(texts)))
    results = scanner.results(texts) if texts else []
    for sid, activity, name, value, lo, hi in fields:
        if not any(r.spans or r.scanned is not None for r in results[lo:hi]):
            continue
        for finding in jsonwalk.scan_value(scanner, value, f"/session/{name}", name):
            findings.append(
                (0, sid, SESSION_SEQ, finding.field, finding.rule, finding.start, finding.end,
                 finding.fingerprint, finding.confidence, finding.tail, activity)
            )  # fmt: skip
    if findings:
        db.executemany(
            'INSERT INTO secret_findings (event_id, session_id, seq, field, rule, start, "end", fingerprint,'
            " confidence, tail, epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            findings,
        )
    return len(rows), len(findings), chars


def known_clean(db: sqlite3.Connection, scanner: Scanner, keys: list[bytes]) -> set[bytes]:
    """Which of ``keys`` (item digests) the pass recorded as clean under the scanner's rules."""
    from agtaild.secrets.items import rules_identity

    try:
        if _meta(db, "secrets_rules") != rules_identity(scanner):
            return set()
        out: set[bytes] = set()
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            out.update(
                r[0] for r in db.execute(f"SELECT digest FROM secret_clean WHERE digest IN ({marks})", part)
            )
        return out
    except sqlite3.OperationalError:  # an index without the tables yet: nothing known
        return set()


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def list_secrets(
    db: sqlite3.Connection,
    *,
    allowed: dict[str, Any],
    include_allowed: bool = False,
    session_id: int | None = None,
    agent: str | None = None,
    imported: bool | None = None,
    places: int = 20,
    limit: int = 200,
) -> dict[str, Any]:
    """One entry per distinct secret (fingerprint), the newest first — what to rotate: its rule,
    a mask of it, how many sessions and places, first and last seen, and its newest places."""
    where: list[str] = []
    args: list[Any] = []
    if session_id is not None:
        where.append("f.session_id = ?")
        args.append(session_id)
    if agent is not None:
        where.append("f.session_id IN (SELECT id FROM sessions WHERE agent = ?)")
        args.append(agent)
    if imported is not None:
        where.append("f.session_id IN (SELECT id FROM sessions WHERE (kind = 'imported') = ?)")
        args.append(int(imported))
    clause = " WHERE " + " AND ".join(where) if where else ""
    rows = db.execute(
        "SELECT f.fingerprint, max(f.rule), max(f.confidence), max(f.tail), count(DISTINCT f.session_id), count(*),"
        f" min(f.epoch), max(f.epoch) FROM secret_findings f{clause} GROUP BY f.fingerprint"
        " ORDER BY max(f.epoch) IS NULL, max(f.epoch) DESC, f.fingerprint",
        args,
    ).fetchall()
    hidden = 0
    out: list[dict[str, Any]] = []
    for fp, rule, confidence, tail, sessions, count, first, last in rows:
        listed = fp in allowed
        if listed and not include_allowed:
            hidden += 1
            continue
        if len(out) >= limit:
            continue
        where_fp = "f.fingerprint = ?" + (" AND " + " AND ".join(where) if where else "")
        spots = db.execute(
            'SELECT s.agent, s.sid, f.seq, f.field, f.epoch, f.start, f."end" FROM secret_findings f'
            f" JOIN sessions s ON s.id = f.session_id WHERE {where_fp}"
            " ORDER BY f.epoch IS NULL, f.epoch DESC, f.id DESC LIMIT ?",
            [fp, *args, places],
        ).fetchall()
        out.append(
            {
                "fingerprint": fp,
                "rule": rule,
                "confidence": confidence,
                "masked": f"«secret:{rule} …{tail}»" if tail else f"«secret:{rule}»",
                "session_count": sessions,
                "place_count": count,
                "first_seen": _iso(first),
                "last_seen": _iso(last),
                "allowlisted": listed,
                "places": [
                    {"agent": a, "id": sid, "seq": seq, "field": field, "ts": _iso(ep), "start": s, "end": e}
                    for a, sid, seq, field, ep, s, e in spots
                ],
            }
        )
    return {"secrets": out, "total": len(rows) - hidden, "allowlisted_hidden": hidden, "pending": pending(db)}
