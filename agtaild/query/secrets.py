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
