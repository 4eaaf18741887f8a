"""How the CLI reaches the service: a running agtaild, or the embedded index in-process.

Both speak the same method names as JSON-RPC (`sessions.list`, `search`, …) and return the
same JSON documents, so a command never cares which one it got.
"""

from __future__ import annotations

from agtaild.errors import AgtailError, Busy, Forbidden, NotFound, Refused, TooLarge, Unauthorized, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from collections.abc import Callable
    from typing import Any, Protocol

    class Backend(Protocol):
        def call(
            self,
            method: str,
            params: dict[str, Any],
            *,
            reveal: bool = False,
            meanwhile: Callable[[], object] | None = None,
        ) -> Any: ...

        def close(self) -> None: ...


class LocalBackend:
    """The service in this process, on the embedded index."""

    def __init__(self, config: Any) -> None:
        from agtaild.query.service import Service

        self.service = Service(config)

    def call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        reveal: bool = False,
        meanwhile: Callable[[], object] | None = None,
    ) -> Any:
        """``reveal``: the answer unmasked, for this user's own process; logged like the
        daemon's reveals (agtaild.query.reveal_log), in the data dir's reveal.log.
        ``meanwhile``: run first (in one process nothing runs beside the call)."""
        if meanwhile is not None:
            meanwhile()
        if reveal:
            import os

            from agtaild.query.reveal_log import record

            record(
                self.service.config.data_dir,
                f"uid {os.getuid()} pid {os.getpid()} (in-process CLI)",
                method,
                params,
            )
        return self.service.call(method, params, reveal=reveal)

    def close(self) -> None:
        self.service.close()


class DaemonBackend:
    """The service in a running agtaild, over JSON-RPC (unix socket first, else TCP + token)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        reveal: bool = False,
        meanwhile: Callable[[], object] | None = None,
    ) -> Any:
        """``reveal``: asked of the daemon, which honours it only over its unix socket for
        the user it runs as (agtaild.api.reveal); over TCP it answers 403. ``meanwhile``:
        the caller's own work, run while the daemon computes the answer."""
        from agtail_client import ApiError, Unreachable

        if reveal:
            params = {**params, "reveal": True}
        try:
            return self.client.call(method, params, meanwhile=meanwhile)
        except TimeoutError as err:
            where = self.client.url or self.client.socket_path
            raise AgtailError(f"agtaild at {where} sent no whole answer in time ({err}); try again") from None
        except Unreachable as err:
            raise AgtailError(f"{err.message}; run the command again, or with --no-daemon") from None
        except ApiError as err:  # data kept: the CLI words a refused parameter as its option
            raise _ERRORS.get(err.code, AgtailError)(err.message, data=err.data) from None
        except OSError as err:
            raise AgtailError(
                f"lost the connection to agtaild ({err}); try again, or use --no-daemon"
            ) from None

    def download(self, path: str, params: dict[str, Any], out: Any) -> dict[str, str]:
        """A REST document of any size (a session's export) copied into ``out`` as it comes."""
        from agtail_client import ApiError, Unreachable

        sink = _Sink(out)
        try:
            headers: dict[str, str] = self.client.download(path, params, sink)
            return headers
        except TimeoutError as err:
            raise AgtailError(f"agtaild sent no whole answer in time ({err}); try again") from None
        except Unreachable as err:
            raise AgtailError(f"{err.message}; run the command again, or with --no-daemon") from None
        except ApiError as err:
            raise _ERRORS.get(err.code, AgtailError)(err.message, data=err.data) from None
        except OSError as err:
            if sink.error is not None:  # writing failed (a closed pipe, a full disk): not the daemon
                raise sink.error from None
            raise AgtailError(
                f"lost the connection to agtaild ({err}); try again, or use --no-daemon"
            ) from None

    def close(self) -> None:
        self.client.close()


class _Sink:
    """``out`` for a download, remembering a failure to write (told apart from the daemon's)."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        try:
            return int(self.out.write(data))
        except OSError as err:
            self.error = err
            raise


_ERRORS: dict[str, type[AgtailError]] = {
    "bad_request": UsageError,
    "not_found": NotFound,
    "refused": Refused,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "too_large": TooLarge,
    "busy": Busy,
}


def _same_roots(daemon_roots: Any, ours: list[Any]) -> bool:
    """Do the daemon and this command read the same roots? (archive roots follow the data dir)"""
    import msgspec

    def key(roots: Any) -> set[tuple[Any, ...]]:
        return {
            (r.get("agent"), r.get("path"), r.get("kind"), r.get("collection"))
            for r in roots or []
            if r.get("kind") != "archive"
        }

    return key(daemon_roots) == key(msgspec.to_builtins(ours))


def daemon_backend(ctx: Any) -> Backend | None:
    """A client for the daemon serving this data dir, or None when none answers.

    Used only when the daemon serves the same data dir and, if this command was given
    --root/--only-roots, the same roots: otherwise its answers would be about other files.
    """
    import os.path  # not pathlib: with urllib.parse under it, ~15 % of a command

    from agtail_client import Client, read_state

    data_dir = ctx.resolved_data_dir
    info = read_state(data_dir)
    if info is None or os.path.normpath(str(info.get("data_dir", ""))) != os.path.normpath(data_dir):
        return None
    # Roots are resolved (which imports every adapter) only when the command names its own.
    if (ctx.root_options or ctx.only_roots) and not _same_roots(info.get("roots"), ctx.config.roots):
        return None
    client = Client.discover(data_dir)
    return DaemonBackend(client) if client is not None else None


def server_backend() -> Backend | None:
    """``AGTAIL_SERVER`` (a daemon's URL, e.g. a team server behind TLS) with its token from
    ``AGTAIL_TOKEN`` or the file named by ``AGTAIL_TOKEN_FILE``: then that daemon answers.
    Plain http:// only to loopback, unless AGTAIL_INSECURE=1 (what `agtail --insecure` sets):
    then with a warning on stderr."""
    import os

    url = os.environ.get("AGTAIL_SERVER")
    if not url:
        return None
    from agtail_client import Client

    checked_url(url, "AGTAIL_SERVER")  # refused here, or warned about once

    token = os.environ.get("AGTAIL_TOKEN")
    token_file = os.environ.get("AGTAIL_TOKEN_FILE")
    if not token and token_file:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as err:
            raise AgtailError(f"AGTAIL_TOKEN_FILE {token_file}: {err.strerror}") from None
    import warnings

    with warnings.catch_warnings():  # said once, above, in agtail's own words
        warnings.simplefilter("ignore")
        client = Client(url=url, token=token or None)
    return DaemonBackend(client)


def checked_url(url: str, what: str) -> str | None:
    """``url`` may carry a token (https, or http to loopback): None. http to anywhere else
    with the opt-in (AGTAIL_INSECURE=1): the warning, already written to stderr. Otherwise a
    UsageError (exit 2) that says why and what to do."""
    import sys

    from agtail_client import InsecureServer, check_url

    try:
        warning = check_url(url)
    except InsecureServer as err:
        raise UsageError(f"{what}: {err}") from None
    except ValueError as err:
        raise UsageError(f"{what} {url!r} is not a daemon URL ({err})") from None
    if warning is not None:
        print(f"agtail: warning: {warning}", file=sys.stderr)
    return warning


def open_backend(ctx: Any) -> Backend:
    if not ctx.no_daemon:
        server = server_backend()
        if server is not None:
            return server
        remote = daemon_backend(ctx)
        if remote is not None:
            return remote
    return LocalBackend(ctx.config)
