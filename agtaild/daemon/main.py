"""`agtaild`: the long-running daemon — watch the roots, keep the index, serve the API.

Start-up order matters: on a new index the index workers' forkserver is started first (it
starts beside the rest), the data dir is locked (one daemon per index), the sockets are bound
and only then is ``agtaild.json`` written and systemd told READY; then the watchers are armed,
and then the first scan begins (armed first: nothing written during the scan is missed; it
reads newest first and commits early, so a new install lists its recent sessions while the
rest is still being read). Shutdown (SIGTERM/SIGINT) runs the other way: STOPPING, stop
accepting, end the live streams, finish the index update in flight (it is committed), stop
the watchers, close the index, remove ``agtaild.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agtaild import __version__
from agtaild.config import Config, load_config, runtime_dir
from agtaild.errors import AgtailError, UsageError

if TYPE_CHECKING:
    import asyncio

    from aiohttp import web

    from agtaild.api.hub import ChangeHub

# The server's modules (aiohttp, the API, the watcher) are imported where they are used, not
# here: the index's worker processes import this module too (multiprocessing re-imports the
# main module, the `agtaild` script, in every worker), and they need none of it. Each worker
# used to spend the daemon's whole start-up import (≈ 0.3 s of CPU, aiohttp's TLS contexts
# included) before reading its first session.

log = logging.getLogger("agtaild")

DEFAULT_LISTEN = "127.0.0.1:7717"
STATE_FILE = "agtaild.json"
#: listen() backlog of the TCP socket (the kernel caps it at net.core.somaxconn) and the most
#: connections asyncio accepts in one turn of the event loop.
TCP_BACKLOG = 2048
ACCEPT_BATCH = 32


def build_parser() -> argparse.ArgumentParser:
    from agtaild.daemon.watcher import MODES

    p = argparse.ArgumentParser(prog="agtaild", description="Watch, index and serve your AI coding agents' sessions.")
    p.add_argument("--version", action="version", version=f"agtaild {__version__}")
    p.add_argument("--listen", metavar="HOST:PORT", default=os.environ.get("AGTAIL_LISTEN", DEFAULT_LISTEN),
                   help=f"TCP address, or 'none' (env: AGTAIL_LISTEN; default: {DEFAULT_LISTEN})")
    p.add_argument("--socket", metavar="PATH", default=os.environ.get("AGTAIL_SOCKET"),
                   help="unix socket path, or 'none' (env: AGTAIL_SOCKET; default: <runtime dir>/agtaild.sock)")
    p.add_argument("--data-dir", metavar="DIR", help="index and state directory (env: AGTAIL_DATA_DIR)")
    p.add_argument("--root", metavar="AGENT=PATH", action="append", default=[],
                   help="read AGENT's sessions from PATH instead of its default root (repeatable)")
    p.add_argument("--only-roots", action="store_true", help="ignore every default root: only the --root options")
    p.add_argument("--allow-host", metavar="NAME", action="append", default=[],
                   help="also accept this Host header over TCP (beside the loopback names)")
    p.add_argument("--watch", choices=MODES, default="auto",
                   help="auto: native watching, polling where it fails; polling; native; off (rescans only)")
    p.add_argument("--poll-interval", type=float, default=10.0, metavar="SECONDS", help="polling period (default 10)")
    p.add_argument("--rescan-interval", type=float, default=600.0, metavar="SECONDS",
                   help="full rescan period, the safety net for missed events (default 600)")
    p.add_argument("--debounce", type=float, default=0.05, metavar="SECONDS",
                   help="quiet time before a changed file is re-read (default 0.05)")
    p.add_argument("--no-archive", action="store_true",
                   help="do not mirror native files into <data dir>/archive (env: AGTAIL_ARCHIVE=0); "
                   "sessions an agent deletes are then lost")
    p.add_argument("--backend", metavar="URL", default=os.environ.get("AGTAIL_BACKEND"),
                   help="serve a team's PostgreSQL database read-only instead of this machine's index "
                   "(postgresql://…; env: AGTAIL_BACKEND; docs/team.md)")
    p.add_argument("--pg-push", metavar="URL", default=os.environ.get("AGTAIL_PG_PUSH"),
                   help="also push this machine's index into a team's PostgreSQL after every update "
                   "(env: AGTAIL_PG_PUSH)")
    p.add_argument("--machine", metavar="NAME", help="this machine's name in the team database (default: stored in the data dir)")
    p.add_argument("--log-level", default=os.environ.get("AGTAIL_LOG_LEVEL", "info"),
                   choices=["debug", "info", "warning", "error"], help="(env: AGTAIL_LOG_LEVEL)")
    return p


def parse_listen(value: str) -> tuple[str, int] | None:
    """``HOST:PORT`` / ``[::1]:PORT`` / ``none`` → (host, port) or None."""
    if value.lower() in ("none", "off", ""):
        return None
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen expects HOST:PORT (e.g. {DEFAULT_LISTEN}) or none, got {value!r}")
    return host, int(port)


def sd_notify(message: str) -> bool:
    """Tell systemd (Type=notify) about our state; a no-op outside systemd."""
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return False
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(addr)
            s.sendall(message.encode())
        return True
    except OSError as err:
        log.warning("sd_notify failed: %s", err)
        return False


def lock_data_dir(data_dir: Path) -> int:
    """One daemon per data dir: two writers on one index would fight over it."""
    fd = os.open(data_dir / "agtaild.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise AgtailError(f"another agtaild already serves {data_dir} (see {data_dir / STATE_FILE})") from None
    return fd


def unix_socket(path: Path, *, own_dir: bool) -> socket.socket:
    """Bind the socket 0600, replacing only a stale socket. The directory is made 0700 when it
    is ours (the runtime dir, or one we create); a directory the user named for --socket is
    left alone — it may be /tmp — and the socket's own 0600 mode protects it there."""
    from agtaild.api.security import ensure_private_dir

    if own_dir or not path.parent.exists():
        ensure_private_dir(path.parent)
    if len(os.fsencode(path)) > 100:
        raise UsageError(f"the socket path {path} is too long for a unix socket; use a shorter --socket")
    if path.exists() or path.is_symlink():
        if not path.is_socket():
            raise AgtailError(f"{path} exists and is not a socket; refusing to replace it")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(1.0)
            try:
                probe.connect(str(path))
            except OSError:
                path.unlink()  # stale: nobody answers
            else:
                raise AgtailError(f"another agtaild is listening on {path}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    os.chmod(path, 0o600)  # before listen(): nobody can connect in between
    return sock


def tcp_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise AgtailError(f"{host}:{port} is in use (another agtaild?); choose another with --listen") from None
        raise AgtailError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    return sock


def write_state(data_dir: Path, doc: dict[str, Any]) -> None:
    """agtaild.json, atomically: a reader never sees half a file."""
    tmp = data_dir / f".{STATE_FILE}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(msgspec.json.format(msgspec.json.encode(doc)) + b"\n")
    os.replace(tmp, data_dir / STATE_FILE)


def remove_state(data_dir: Path) -> None:
    path = data_dir / STATE_FILE
    with contextlib.suppress(OSError, msgspec.DecodeError):
        if msgspec.json.decode(path.read_bytes()).get("pid") == os.getpid():
            path.unlink()


def watch_roots(config: Config) -> list[tuple[str, str]]:
    """Native and imported roots, plus the import store itself (new collections appear
    there). Never the archive: agtaild writes it, and would wake itself."""
    roots = [(r.agent, r.path) for r in config.roots if r.kind != "archive"]
    config.import_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    roots.append(("", str(config.import_dir)))
    return roots


def tick_checks(config: Config, recheck: Callable[[], list[str]]) -> Callable[[], list[str]]:
    """What the writer asks at each tick: the watcher's roots that appeared (agtaild.daemon.watcher),
    and whether the archive's finisher has finished since (agtaild.store.archive.finish): its
    pinned files are archived now, and a scan makes the index whole with them."""
    from agtaild.store.archive.blobs import STORE_DIR
    from agtaild.store.archive.finish import Completions

    finished = Completions(Path(config.archive_dir) / STORE_DIR)

    def tick() -> list[str]:
        out = list(recheck())
        if finished.changed():
            out.append(str(finished.store_root))
        return out

    return tick


def check_intervals(args: argparse.Namespace) -> None:
    """Timers the writer and watcher run on: a zero or negative one would spin."""
    if args.rescan_interval < 10:
        raise UsageError("--rescan-interval must be at least 10 seconds (it is the safety net, not the watcher)")
    if args.poll_interval < 0.1:
        raise UsageError("--poll-interval must be at least 0.1 seconds")
    if not 0 <= args.debounce <= 60:
        raise UsageError("--debounce must be between 0 and 60 seconds")


def check_writable_data_dir(data_dir: Path, index_path: Path) -> None:
    """The daemon writes its lock, token, state and index there: refuse a data dir that is
    a file or read-only with one clear sentence (the CLI still reads such an index)."""
    from agtaild.index.storage import check_data_dir, is_writable

    check_data_dir(data_dir)
    if not is_writable(data_dir, index_path):
        raise AgtailError(
            f"agtaild cannot write its data dir {data_dir} (read-only); it keeps its lock, token and index "
            "there. `agtail --no-daemon` still reads the index as it is"
        )


async def local_parts(
    args: argparse.Namespace,
    config: Config,
    hub: ChangeHub,
    state: dict[str, Any],
    serving: asyncio.Event | None = None,
) -> tuple[Any, ...]:
    """This machine's index: the service, its writer task and the watchers (and the pusher).

    The first scan waits for ``serving`` (set once the sockets are bound and agtaild.json is
    written): on a new install it reads for a while, on the writer's thread, and the daemon
    should answer first — the sessions it commits are then listed as they come."""
    import asyncio

    from agtaild.daemon.scheduler import IndexWriter
    from agtaild.daemon.watcher import Watcher
    from agtaild.query.methods import METHODS
    from agtaild.query.service import Service

    service = await asyncio.to_thread(Service, config)
    loop = asyncio.get_running_loop()
    watcher_box: list[Watcher] = []
    pusher = None
    if args.pg_push:
        from agtaild.pg.server import IndexPusher

        pusher = IndexPusher(args.pg_push, config, args.machine, hub)
    writer = IndexWriter(
        service,
        hub,
        debounce=args.debounce,
        max_delay=max(1.0, args.debounce * 10),
        rescan_interval=args.rescan_interval,
        on_tick=tick_checks(config, lambda: watcher_box[0].recheck() if watcher_box else []),
        count_agents=lambda: {a["id"]: a["sessions"] for a in service.call("agents.list", {})["agents"]},
    )
    watcher = Watcher(watch_roots(config), writer.note, loop, mode=args.watch, poll_interval=args.poll_interval)

    # A request that found the index damaged or gone reopens it; the writer refills it.
    def refill_index() -> None:
        loop.call_soon_threadsafe(writer.note, (), (str(config.index_path),))

    service.on_repaired = refill_index
    watcher_box.append(watcher)

    def health() -> dict[str, Any]:
        storage = service.index.status()
        if service.index.replaced():  # deleted or swapped under us: say so, and rebuild now
            storage.update(state="rebuilding", message="the index file was deleted or replaced; rebuilding it")
            writer.note((), gone_dirs=(str(config.index_path),))
        extra: dict[str, Any] = {"pg_push": pusher.status()} if pusher else {}
        engine = service.semantic
        if engine is not None:  # search by meaning, when configured: its build and health
            extra["embeddings"] = engine.status(fresh=False)
        return {"pid": os.getpid(), **state, "index": writer.status(), "watch": watcher.status(),
                "storage": storage, "progress": writer.progress(), **extra}

    async def background(_app: web.Application) -> AsyncIterator[None]:
        armed = asyncio.Event()

        async def arm() -> None:
            # After the sockets are bound (answering does not wait for a watch on every
            # directory of every root), before the first scan (nothing written during it is
            # missed).
            if serving is not None:
                await serving.wait()
            try:
                await asyncio.to_thread(watcher.start)
            except Exception:
                log.exception("could not start watching the roots; periodic rescans still run")
            finally:
                armed.set()  # the first scan runs in any case

        arming = asyncio.ensure_future(arm())
        writer.start(after=armed)
        from agtaild.semantic.engine import Background

        # Search by meaning's embedder: its own thread, lowest priority, idle unless configured.
        service.embedder = Background(lambda: service.semantic)
        service.embedder.start()
        writer.after_update.append(service.embedder.nudge)
        if pusher:
            pusher.start()
        yield
        await asyncio.to_thread(service.embedder.stop)  # a batch in flight is committed or dropped
        await writer.stop()  # the update in flight finishes and is committed
        if pusher:
            await pusher.stop()
        if serving is not None and not serving.is_set():
            arming.cancel()  # still waiting for the sockets: no watch was made
        with contextlib.suppress(asyncio.CancelledError):
            await arming  # a watcher.start under way finishes before the watches are removed
        await asyncio.to_thread(watcher.stop)

    return service, METHODS.keys(), (lambda full: writer.request(full=full)), health, background


def start_index_workers_early(config: Config) -> None:
    """A new index: the first update reads in worker processes (agtaild.index.update), and the
    server they are forked from starts now, beside the daemon's own start-up (imports, sockets),
    instead of after the first update has begun: the newest sessions are listed sooner."""
    if (os.cpu_count() or 1) > 1 and not config.index_path.exists():
        from agtaild.index.readers import start_workers_early

        start_workers_early()


async def serve(args: argparse.Namespace) -> int:
    import asyncio

    check_intervals(args)
    config = load_config(data_dir=args.data_dir, root_options=args.root, only_roots=args.only_roots)
    if args.no_archive:
        config.archive = False
    data_dir = Path(config.data_dir)
    check_writable_data_dir(data_dir, config.index_path)
    if not args.backend:
        start_index_workers_early(config)

    from aiohttp import web

    from agtaild.api.admission import fit_to_open_files
    from agtaild.api.app import MAX_HEADER_FIELD, MAX_REQUEST_LINE, create_app
    from agtaild.api.guard import GuardedAppRunner, GuardLimits
    from agtaild.api.hub import ChangeHub
    from agtaild.api.security import LOOPBACK_HOSTS, Security, ensure_private_dir, load_or_create_token

    ensure_private_dir(data_dir)
    lock_fd = lock_data_dir(data_dir)
    if not args.backend:
        from agtaild.index.owner import for_daemon

        # The data dir's index follows this daemon's roots; commands with others use their own.
        taken_over = for_daemon(config, defaults=not (args.root or args.only_roots))
        if taken_over:
            log.warning("%s", taken_over)
    listen = parse_listen(args.listen)
    sock_path = None if (args.socket or "").lower() == "none" else Path(args.socket or runtime_dir() / "agtaild.sock")
    if listen is None and sock_path is None:
        raise UsageError("nothing to listen on: --listen none and --socket none")
    if listen is not None and listen[0] not in LOOPBACK_HOSTS:
        log.warning(
            "listening on %s: the API is reachable from the network without TLS (the token and "
            "transcripts cross it in clear); prefer an SSH tunnel to 127.0.0.1", listen[0]
        )
    token = load_or_create_token(data_dir)
    security = Security(token, allow_hosts=[*args.allow_host, *([listen[0]] if listen else [])])

    hub = ChangeHub()
    state: dict[str, Any] = {}
    serving = asyncio.Event()
    if args.backend:
        from agtaild.pg.server import team_parts

        service, methods, update, health, background = await team_parts(args, config, hub, state)
        security.readers = service.reader_token  # readers' tokens (agtail pg add-reader), checked in SQL
    else:
        service, methods, update, health, background = await local_parts(args, config, hub, state, serving)
    app = create_app(service, methods=methods, security=security, hub=hub, update=update, health=health)
    app.cleanup_ctx.append(background)
    runner = GuardedAppRunner(app, limits=fit_to_open_files(GuardLimits()), access_log=log.getChild("access") if log.isEnabledFor(logging.DEBUG) else None,
                           shutdown_timeout=5.0, max_line_size=MAX_REQUEST_LINE,
                           max_field_size=MAX_HEADER_FIELD)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await runner.setup()
    bound: Path | None = None
    try:
        url = None
        if sock_path is not None:
            sock = unix_socket(sock_path, own_dir=args.socket is None)
            bound = sock_path
            await web.SockSite(runner, sock).start()
        if listen is not None:
            tcp = tcp_socket(*listen)
            await web.SockSite(runner, tcp, backlog=ACCEPT_BATCH).start()
            # asyncio accepts up to `backlog` connections per turn of the loop and sets them
            # all up before it reads any request: a small batch keeps a crowd from delaying
            # the answers of a whole turn, and a deep kernel queue (listen() again) keeps the
            # kernel from dropping everyone's SYNs (a 1 s retry) while the crowd is accepted.
            tcp.listen(TCP_BACKLOG)
            host, port = tcp.getsockname()[:2]
            url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
        state.update({"url": url, "socket": str(sock_path) if sock_path else None, "data_dir": str(data_dir)})
        write_state(
            data_dir,
            {
                "url": url,
                "socket": state["socket"],
                "pid": os.getpid(),
                "version": __version__,
                "data_dir": str(data_dir),
                "roots": msgspec.to_builtins(config.roots),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            },
        )
        serving.set()  # the first scan may begin
        sd_notify(f"READY=1\nSTATUS=serving {url or ''} {state['socket'] or ''}".strip())
        log.info("agtaild %s serving %s", __version__, " and ".join(x for x in (state["socket"], url) if x))
        if url:
            log.info("viewer login link (one use, 10 minutes): %s/login?code=%s", url, security.new_login_code())
        await stop.wait()
        log.info("stopping")
        sd_notify("STOPPING=1")
        service.interrupt_reads()  # a long search in a reader thread must not delay the stop
    finally:
        await runner.cleanup()
        await asyncio.to_thread(service.close)
        remove_state(data_dir)
        if bound is not None:
            with contextlib.suppress(OSError):
                bound.unlink()
        os.close(lock_fd)
    return 0


class VisibleFormatter(logging.Formatter):
    """Log lines quote paths, titles and clients' requests: control characters in them are
    shown, not obeyed, when the log is a terminal (agtaild/textsafe.py)."""

    def format(self, record: logging.LogRecord) -> str:
        from agtaild.textsafe import visible

        return visible(super().format(record))


def main(argv: list[str] | None = None) -> int:
    from agtaild.dirs import private_umask

    umask = private_umask()  # the index, archive, import store, token, socket: 0600 / 0700
    try:
        return _main(argv)
    finally:
        os.umask(umask)


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(VisibleFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), handlers=[handler])
    import asyncio

    try:
        return asyncio.run(serve(args))
    except AgtailError as err:
        log.error("%s", err.message)
        return err.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
