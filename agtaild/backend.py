"""How the CLI reaches the service: a running agtaild, or the embedded index in-process.

Both speak the same method names as JSON-RPC (`sessions.list`, `search`, …) and return the
same JSON documents, so a command never cares which one it got.
"""

from __future__ import annotations

from typing import Any, Protocol


class Backend(Protocol):
    def call(self, method: str, params: dict[str, Any]) -> Any: ...

    def close(self) -> None: ...


class LocalBackend:
    """The service in this process, on the embedded index."""

    def __init__(self, config: Any) -> None:
        from agtaild.service import Service

        self.service = Service(config)

    def call(self, method: str, params: dict[str, Any]) -> Any:
        return self.service.call(method, params)

    def close(self) -> None:
        self.service.close()


def daemon_backend(ctx: Any) -> Backend | None:
    """A client for the daemon serving this data dir, or None when none answers."""
    return None


def open_backend(ctx: Any) -> Backend:
    if not ctx.no_daemon:
        remote = daemon_backend(ctx)
        if remote is not None:
            return remote
    return LocalBackend(ctx.config)
