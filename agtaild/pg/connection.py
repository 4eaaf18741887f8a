"""How a push reaches the team database, and what it says when PostgreSQL stops it.

A push goes over whatever the URL says; plain TCP to another host carries every transcript
readable on the way, so it warns (:func:`transport_warning`). A push stopped mid-way — its role
revoked (``agtail pg remove-machine`` ends its connections), the server restarting — leaves the
database after its last whole batch: :func:`stopped` says that, in words, with the cursor.
"""

from __future__ import annotations

from typing import Any

from agtaild.errors import AgtailError


def connect_team(url: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise AgtailError("PostgreSQL support needs psycopg: pip install 'psycopg[binary]'") from None
    try:
        return psycopg.connect(url, connect_timeout=10)
    except psycopg.Error as err:
        raise AgtailError(f"cannot connect to the team database: {str(err).strip()}") from None


def stopped(err: Exception, cursor: int, batches: int) -> AgtailError:
    """A push that PostgreSQL stopped: what happened, and that nothing of the failed batch is
    there (each batch is one transaction with the cursor)."""
    import psycopg

    said = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    kept = (
        f"{batches} whole batches went in before it, the cursor stays at {cursor}; the next push resumes there"
        if batches
        else "nothing was written, the cursor stays where it was"
    )
    if isinstance(err, psycopg.errors.InsufficientPrivilege):
        return AgtailError(
            f"the team database refused this push ({said}): these credentials were revoked, or are"
            f" another machine's; {kept}"
        )
    if isinstance(err, psycopg.OperationalError):
        return AgtailError(
            f"the connection to the team database ended during the push ({said}) — its credentials"
            f" removed, or the server restarted; {kept}"
        )
    return AgtailError(f"the push stopped: {said}; {kept}")


def transport_warning(host: str | None, ssl_in_use: bool, sslmode: str | None) -> str | None:
    """What to say about how a push reaches the team database: plain TCP to another host sends
    every transcript readable on the way (a unix socket or loopback stays on this machine)."""
    if ssl_in_use or not host or host.startswith("/") or host.startswith("@"):
        return None
    if host in ("localhost", "::1") or host.startswith("127."):
        return None
    return (
        f"pushing to {host} over plain TCP: transcripts cross the network unencrypted; add"
        " sslmode=verify-full to the URL (and the server's CA as sslrootcert)"
        + (f" — sslmode={sslmode} allowed this" if sslmode else "")
    )
