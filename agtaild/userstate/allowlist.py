"""The secrets a user allowlisted: a false positive, or a key already revoked.

It is the user's decision, not derived data, so it lives in the user-state store
(``state.sqlite3``) beside labels and stars, keyed by the finding's fingerprint (the sha256 of
the secret: the same secret everywhere, in every session, and again after a reindex). An
allowlisted secret is left out of ``agtail secrets`` and ``--has-secret``; it is still masked
at every exit (masking rescans the text sent with the rules alone, and a mask costs nothing).

The table comes with its own migration (:func:`m002_secret_allowlist`, run by the store like
its others) and records who allowed each secret and when. Not in the store's ``changes`` log
(that log is of sessions: a fingerprint is no session).
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from agtaild.errors import UsageError

#: agtaild.userstate.store.UserState (not imported: the store imports this module's migration)
UserState = Any

FINGERPRINT = re.compile(r"[0-9a-f]{64}")
MAX_REASON = 500


def m002_secret_allowlist(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE secret_allowlist (fingerprint TEXT PRIMARY KEY, reason TEXT NOT NULL,"
        " who TEXT NOT NULL, at REAL NOT NULL)"
    )


def check_fingerprint(value: Any) -> str:
    fp = value.strip().lower() if isinstance(value, str) else ""
    if not FINGERPRINT.fullmatch(fp):
        raise UsageError(
            f"not a secret's fingerprint: {str(value)[:80]!r} (64 hex digits, as `agtail secrets` shows)",
            data={"param": "fingerprint"},
        )
    return fp


def allow(store: UserState, fingerprint: str, reason: str = "", who: str = "user") -> bool:
    """Allowlist a secret; False when it already was (its reason is then updated)."""
    fp = check_fingerprint(fingerprint)
    reason = (reason or "").strip()
    if len(reason) > MAX_REASON:
        raise UsageError(f"the reason is longer than {MAX_REASON} characters", data={"param": "reason"})
    return _write(store, fp, reason, who)


def unallow(store: UserState, fingerprint: str, who: str = "user") -> bool:
    """Take a secret off the allowlist; False when it was not on it."""
    return _write(store, check_fingerprint(fingerprint), None, who)


def _write(store: UserState, fp: str, reason: str | None, who: str) -> bool:
    at = store._clock()
    with store._lock:
        db = store.db
        db.execute("BEGIN IMMEDIATE")
        try:
            before = db.execute("SELECT 1 FROM secret_allowlist WHERE fingerprint = ?", (fp,)).fetchone()
            if reason is None:
                db.execute("DELETE FROM secret_allowlist WHERE fingerprint = ?", (fp,))
            else:
                db.execute(
                    "INSERT OR REPLACE INTO secret_allowlist (fingerprint, reason, who, at) VALUES (?, ?, ?, ?)",
                    (fp, reason, who, at),
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return (before is None) if reason is not None else (before is not None)


def allowed(store: UserState | None) -> dict[str, dict[str, Any]]:
    """Every allowlisted fingerprint → ``{"reason", "who", "at"}``."""
    if store is None or not store.path.exists():
        return {}
    with store._lock:
        rows = store.db.execute("SELECT fingerprint, reason, who, at FROM secret_allowlist").fetchall()
    return {fp: {"reason": reason, "who": who, "at": at} for fp, reason, who, at in rows}
