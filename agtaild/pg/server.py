"""The daemon's two PostgreSQL roles.

* ``agtaild --backend postgresql://…``: the read-only team server. The same API app as a
  local daemon, over :class:`agtaild.pg.service.TeamService`; no watchers, no index, no
  writer. Its change feed (SSE ``changes`` and ``follow`` wake-ups) comes from polling the
  sessions that machines pushed since the last look.
* ``agtaild --pg-push URL``: a local daemon that also pushes its index after every update
  (:class:`IndexPusher`, woken by the same change hub the API streams from).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from agtaild.api.hub import ChangeHub
from agtaild.config import Config

log = logging.getLogger("agtaild.pg")

#: Seconds between looks at the team database for newly pushed sessions.
POLL_SECONDS = 2.0


async def team_parts(
    args: argparse.Namespace, config: Config, hub: ChangeHub, state: dict[str, Any]
) -> tuple[Any, ...]:
    """The service, methods, update hook, health and background task of a team server."""
    from agtaild.pg.machine import machine_name
    from agtaild.pg.service import METHODS, TeamService

    data_dir = Path(config.data_dir)
    here = machine_name(data_dir, args.machine) if args.machine or (data_dir / "machine").exists() else None
    service = await asyncio.to_thread(TeamService, args.backend, data_dir=data_dir, machine=here)
    polled: dict[str, Any] = {"errors": 0, "last_error": None, "last_poll": None}

    def health() -> dict[str, Any]:
        return {"pid": os.getpid(), **state, "backend": "postgresql", "machine": here, "feed": dict(polled)}

    async def feed() -> None:
        stamp = None
        first = True
        while True:
            try:
                stamp, changed = await asyncio.to_thread(service.changes_since, None if first else stamp)
                first = False
                polled["last_poll"] = time.time()
                if changed:
                    await hub.publish(changed)
            except Exception as err:  # the database may restart: keep serving, say so on /health
                polled["errors"] += 1
                polled["last_error"] = f"{type(err).__name__}: {err}"
                log.warning("team database poll failed: %s", err)
            await asyncio.sleep(POLL_SECONDS)

    async def background(_app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(feed())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return service, METHODS.keys(), None, health, background


class IndexPusher:
    """Pushes the local index into the team database whenever the index changed."""

    def __init__(self, url: str, config: Config, machine: str | None, hub: ChangeHub) -> None:
        from agtaild.pg.machine import machine_name

        self.url = url
        self.index_path = Path(config.index_path)
        self.machine = machine_name(Path(config.data_dir), machine)
        self.hub = hub
        self.pushes = 0
        self.errors = 0
        self.last_error: str | None = None
        self.last_push: dict[str, Any] | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        from agtaild.pg.push import push

        seen = -1
        while True:
            if self.hub.last != seen or (self.errors and self.last_error):
                seen = self.hub.last
                try:
                    report = await asyncio.to_thread(push, self.index_path, self.url, self.machine)
                    self.pushes += 1
                    self.last_push = report.as_json()
                    self.last_error = None
                except Exception as err:  # the team database is down: retry on the next change or tick
                    self.errors += 1
                    self.last_error = f"{type(err).__name__}: {err}"
                    log.warning("push to the team database failed: %s", err)
            await self.hub.wait(seen, timeout=30.0)
            await asyncio.sleep(1.0)  # let a burst of updates settle into one push

    def status(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "pushes": self.pushes,
            "errors": self.errors,
            "last_error": self.last_error,
            "last_push": self.last_push,
        }
