"""Secrets in the query layer: the findings the index's pass recorded (``secrets.list``, the
"what to rotate" view), the ``has_secret`` filter of sessions.list and search, and the user's
allowlist (``secrets.allow``/``secrets.unallow``, kept in agtaild.userstate, not the index).

``secrets.list`` answers from the findings as they are, with how many events are ``pending``
(a daemon's pass still running); ``agtail secrets`` in-process finishes the pass first
(:data:`FINISH_SECONDS` at most), so its list is whole. A request never runs the pass: it
would hold the index's write lock. Its answer is masked like every other (agtaild.query.masking):
it carries fingerprints and masks, never a secret.
"""

from __future__ import annotations

from typing import Any

from agtaild.index.params import Params

#: Seconds a ``secrets.list`` call may spend finishing the pass before it answers.
FINISH_SECONDS = 120.0


def _store(svc: Any) -> Any:
    return getattr(svc, "state", None)


def allowed_fingerprints(svc: Any) -> dict[str, Any]:
    from agtaild.userstate.allowlist import allowed

    return allowed(_store(svc))


def apply_has_secret(svc: Any, p: Params, flt: Any) -> None:
    """Set the ``has_secret`` filter of a SessionFilter / SearchScope from the request."""
    has = p.flag("has_secret")
    if has is None:
        return
    flt.has_secret = has
    flt.secret_allowed = sorted(allowed_fingerprints(svc))


def annotate_secrets(svc: Any, sessions: list[dict[str, Any]]) -> None:
    """Give each session document holding secrets the user did not allowlist ``secrets``: how
    many distinct ones the index found in it (the viewer's badge). Sessions with none are left
    as they are. Its sessions are found by (agent, id, collection, path), as the index keeps them."""
    import sqlite3

    if not sessions:
        return
    allowed = set(allowed_fingerprints(svc))
    by_key = {(s.get("agent"), s.get("id")): s for s in sessions}
    pairs = list(by_key)
    try:
        db = svc._reader()
        for lo in range(0, len(pairs), 400):
            part = pairs[lo : lo + 400]
            marks = ",".join("(?, ?)" for _ in part)
            rows = db.execute(
                "SELECT s.agent, s.sid, s.collection, f.fingerprint FROM secret_findings f"
                f" JOIN sessions s ON s.id = f.session_id WHERE (s.agent, s.sid) IN (VALUES {marks})"
                " GROUP BY s.id, f.fingerprint",
                [v for pair in part for v in pair],
            ).fetchall()
            counts: dict[tuple[Any, Any, Any], int] = {}
            for agent, sid, collection, fp in rows:
                if fp not in allowed:
                    counts[(agent, sid, collection)] = counts.get((agent, sid, collection), 0) + 1
            for (agent, sid, collection), n in counts.items():
                doc = by_key.get((agent, sid))
                if doc is not None and doc.get("collection") == collection:
                    doc["secrets"] = n
    except sqlite3.Error:  # an index without the findings table: nothing to say
        return


def secrets_list(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.findings import list_secrets
    from agtaild.index.queries import resolve_session

    p = Params("secrets.list", params, ("agent", "session", "allowlisted", "imported", "places", "limit"))
    agent = svc.check_agent("secrets.list", p.text("agent"))
    session_id = None
    ref = p.text("session", max_len=1000)
    if ref is not None:
        from agtaild.errors import bad_param

        a, _, ident = ref.partition(":") if ":" in ref else (None, "", ref)
        if not ident:
            raise bad_param("session", f"{ref[:80]!r} is not AGENT:ID or an id")
        svc.check_agent("secrets.list", a)
        session_id = resolve_session(svc._reader(), a or agent, ident)
    return list_secrets(
        svc._reader(),
        allowed=allowed_fingerprints(svc),
        include_allowed=bool(p.flag("allowlisted")),
        session_id=session_id,
        agent=agent,
        imported=p.flag("imported"),
        places=p.integer("places", 20, minimum=0, maximum=1000) or 0,
        limit=p.integer("limit", 200, minimum=1, maximum=10_000) or 200,
    )


def _allowlist_change(method: str, svc: Any, params: dict[str, Any], on: bool) -> dict[str, Any]:
    from agtaild.errors import UsageError
    from agtaild.userstate.allowlist import allow, check_fingerprint, unallow

    p = Params(method, params, ("fingerprint", "reason"))
    store = _store(svc)
    if store is None:
        raise UsageError(f"{method}: this service keeps no user state (a team server)")
    fp = check_fingerprint(p.text("fingerprint", required=True, max_len=200))
    changed = allow(store, fp, p.text("reason", max_len=1000) or "") if on else unallow(store, fp)
    return {"fingerprint": fp, "allowlisted": on, "changed": changed}


def secrets_allow(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    return _allowlist_change("secrets.allow", svc, params, True)


def secrets_unallow(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    return _allowlist_change("secrets.unallow", svc, params, False)
