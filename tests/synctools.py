"""Helpers for the sync tests: two "machines" (data dir + native roots) and an API server in a
thread (the sync client is synchronous, so the server must not share its event loop)."""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path
from typing import Any

from aiohttp import web

from agtaild.config import Config, load_config

CLAUDE = "real/claude-2.1.197/projects"
CODEX = "real/codex-0.171.0/sessions"
TOKEN = "s" * 43


def make_machine(base: Path, corpus: Path, *, claude: bool = True, codex: bool = False) -> Config:
    """A data dir and native roots filled from the real corpus (copies: tests append to them)."""
    roots = []
    if claude:
        shutil.copytree(corpus / CLAUDE, base / "claude" / "projects")
        roots.append(f"claude-code={base / 'claude' / 'projects'}")
    if codex:
        shutil.copytree(corpus / CODEX, base / "codex" / "sessions")
        roots.append(f"codex={base / 'codex' / 'sessions'}")
    return load_config(data_dir=str(base / "data"), root_options=roots, only_roots=True)


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file below root (relative path → bytes)."""
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


class ConfigOnlyService:
    """The part of the service the sync endpoints need: its config."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from agtaild.errors import NotFound

        raise NotFound(f"{method} is not offered by this test service")


class ThreadServer:
    """An aiohttp app on 127.0.0.1:<free port>, served from its own thread and loop."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.url = ""

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)
        return self

    async def _start(self) -> None:
        self.runner = web.AppRunner(self.app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def _cancel_rest(self) -> None:
        await _cancel_rest_impl()

    def __exit__(self, *exc: object) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        asyncio.run_coroutine_threadsafe(self._cancel_rest(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


async def _cancel_rest_impl() -> None:
    me = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks() if t is not me]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


def api_server(config: Config) -> ThreadServer:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security

    app = create_app(ConfigOnlyService(config), methods=[], security=Security(TOKEN))
    return ThreadServer(app)
