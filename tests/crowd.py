"""Another local user crowding agtaild's TCP port, as a process of its own (so its event loop
does not share this interpreter's lock with the test that measures the daemon).

    python -m tests.crowd HOST PORT IDLE SLOW SECONDS

holds IDLE connections that never send a byte and SLOW slowloris clients that send a request
head one byte every 0.25 s and never finish it; each is opened again as soon as the daemon
closes it, so the crowd never thins by itself. It prints ``ready`` once every connection was
opened at least once, and at the end one JSON line of what happened. It stops by itself after
SECONDS, or at SIGTERM. Only loopback addresses are accepted.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import resource
import signal
import sys
import time

#: One request head that never ends (the header value goes on and on).
SLOW_HEAD = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100_000


def open_file_room(wanted: int) -> int:
    """Raise the soft limit on open files as far as allowed; how many of ``wanted`` fit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted + 256 if hard == resource.RLIM_INFINITY else min(hard, wanted + 256)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return max(0, min(wanted, soft - 256))


class Crowd:
    def __init__(self, host: str, port: int, idle: int, slow: int, seconds: float) -> None:
        self.addr = (host, port)
        self.idle, self.slow = idle, slow
        self.deadline = time.monotonic() + seconds
        self.stop = asyncio.Event()
        self.stats = {"idle": idle, "slow": slow, "opened": 0, "open_now": 0, "closed_by_server": 0,
                      "connect_failures": 0, "slow_bytes": 0, "most_open": 0}
        self.first_opened: set[int] = set()

    def running(self) -> bool:
        return not self.stop.is_set() and time.monotonic() < self.deadline

    async def _connect(self, n: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            pair = await asyncio.wait_for(asyncio.open_connection(*self.addr), 2.0)
        except (OSError, TimeoutError):
            self.stats["connect_failures"] += 1
            await asyncio.sleep(0.05)
            return None
        self.stats["opened"] += 1
        self.stats["open_now"] += 1
        self.stats["most_open"] = max(self.stats["most_open"], self.stats["open_now"])
        if n not in self.first_opened:
            self.first_opened.add(n)
            if len(self.first_opened) == self.idle + self.slow:
                print("ready", flush=True)
        return pair

    async def _closed(self, reader: asyncio.StreamReader, wait: float) -> bool:
        """Did the daemon close the connection (within ``wait`` seconds)?"""
        try:
            return await asyncio.wait_for(reader.read(1024), wait) == b""
        except TimeoutError:
            return False

    async def hold_idle(self, n: int) -> None:
        while self.running():
            pair = await self._connect(n)
            if pair is None:
                continue
            reader, writer = pair
            try:
                while self.running():
                    if await self._closed(reader, 0.5):
                        self.stats["closed_by_server"] += 1
                        break
            except OSError:
                self.stats["closed_by_server"] += 1
            finally:
                self.stats["open_now"] -= 1
                writer.transport.abort()

    async def hold_slow(self, n: int) -> None:
        while self.running():
            pair = await self._connect(n)
            if pair is None:
                continue
            reader, writer = pair
            try:
                for byte in SLOW_HEAD:
                    if not self.running():
                        break
                    writer.write(bytes([byte]))
                    await writer.drain()
                    self.stats["slow_bytes"] += 1
                    if await self._closed(reader, 0.25):
                        self.stats["closed_by_server"] += 1
                        break
            except OSError:
                self.stats["closed_by_server"] += 1
            finally:
                self.stats["open_now"] -= 1
                writer.transport.abort()

    async def run(self) -> dict[str, int]:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.stop.set)
        tasks = [asyncio.create_task(self.hold_idle(n)) for n in range(self.idle)]
        tasks += [asyncio.create_task(self.hold_slow(self.idle + n)) for n in range(self.slow)]
        with contextlib.suppress(Exception):
            await asyncio.gather(*tasks, return_exceptions=True)
        return self.stats


def main(argv: list[str]) -> int:
    host, port, idle, slow, seconds = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), float(argv[4])
    if not ipaddress.ip_address(host).is_loopback:
        print(f"refusing to crowd {host}: only loopback addresses", file=sys.stderr)
        return 2
    room = open_file_room(idle + slow)
    if room < idle + slow:  # scaled to what this machine allows, in the same proportion
        idle, slow = room * idle // (idle + slow), room * slow // (idle + slow)
    stats = asyncio.run(Crowd(host, port, idle, slow, seconds).run())
    print(json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
