"""The HTTP transport: another agtaild's import and export endpoints (docs/sync.md).

Push writes into the other daemon's import store (:class:`HttpDestination`); pull reads the
other daemon's native sessions (:class:`HttpSource`). Every request carries the other
daemon's token. The server applies the same safety checks again (agtaild/sync/server.py):
a client is not trusted either.
"""

from __future__ import annotations

import http.client
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from agtaild.errors import AgtailError, Forbidden, NotFound, Refused, TooLarge, Unauthorized, UsageError
from agtaild.sync.manifest import CHUNK, Manifest, decode_manifest, encode_manifest
from agtaild.sync.transfer import DestState, TransferError, WriteOp, WriteResult

API = "/api/v1"
TIMEOUT = 60.0
_ERRORS: dict[int, type[AgtailError]] = {
    400: UsageError,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Refused,
    413: TooLarge,
}


class HttpClient:
    def __init__(self, base_url: str, token: str | None) -> None:
        try:
            parsed = urllib.parse.urlsplit(base_url)
            parsed.port  # noqa: B018 - a port that is not a number or out of range raises here
        except ValueError as exc:  # e.g. "http://[::1:bad": an unclosed IPv6 address
            raise UsageError(f"{base_url!r} is not a valid URL ({exc}); write http(s)://host:port") from None
        if parsed.scheme not in {"http", "https"} or not parsed.hostname:
            raise UsageError(f"{base_url!r} is not an http(s)://host:port URL of another agtaild")
        from agtail_client import InsecureServer, check_url

        try:  # plain http only to loopback, or with AGTAIL_INSECURE=1 (and a warning)
            warning = check_url(base_url)
        except InsecureServer as err:
            raise UsageError(str(err)) from None
        if warning is not None:
            print(f"agtail: warning: {warning}", file=sys.stderr)
        self.base = base_url.rstrip("/")
        self.token = token

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: bytes | Iterable[bytes] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        url = self.base + API + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        req = urllib.request.Request(url, data=body, method=method)
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        for key, value in (headers or {}).items():
            req.add_header(key, value)
        try:
            return urllib.request.urlopen(req, timeout=TIMEOUT)
        except urllib.error.HTTPError as exc:
            raise self._error(exc) from None
        except urllib.error.URLError as exc:
            raise AgtailError(
                f"cannot reach {self.base} ({exc.reason}); is agtaild running there and listening on "
                "that address?"
            ) from None

    def _error(self, exc: urllib.error.HTTPError) -> AgtailError:
        try:
            doc = json.loads(exc.read() or b"{}")
            message = doc["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = f"HTTP {exc.code} {exc.reason}"
        if exc.code == 401:
            message += (
                f" — {self.base} needs its token: copy the other machine's <data dir>/token and pass "
                "--token-file FILE (or set AGTAIL_REMOTE_TOKEN)"
            )
        return _ERRORS.get(exc.code, AgtailError)(f"{self.base}: {message}")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        with self.request(method, path, **kwargs) as resp:
            return json.loads(resp.read())


class HttpDestination:
    """The other daemon's import store, collection ``collection`` (push over HTTP)."""

    def __init__(self, client: HttpClient, collection: str) -> None:
        self.client = client
        self.collection = collection
        self.where = f"{client.base} collection {collection}"
        self._prefix = f"/import/{urllib.parse.quote(collection, safe='')}"

    def state(self) -> DestState:
        doc = self.client.json("GET", self._prefix + "/state")
        return msgspec.convert(doc["state"], DestState)

    def check(self, manifest: Manifest) -> None:
        self.client.json("POST", self._prefix + "/check", body=encode_manifest(manifest),
                         headers={"Content-Type": "application/json"})

    def write(self, op: WriteOp, chunks: Iterable[bytes]) -> WriteResult:
        length = op.entry.size - op.offset
        headers = {
            "Content-Type": "application/octet-stream",
            "Content-Length": str(length),
            "X-Agtail-Write": msgspec.json.encode(op).decode(),
        }
        try:
            doc = self.client.json("PUT", self._prefix + "/file", body=iter(chunks), headers=headers)
        except (ConnectionError, TimeoutError, http.client.HTTPException) as exc:
            raise TransferError(
                f"{op.entry.path}: the upload broke off ({exc}); run the same command again to resume"
            ) from None
        return WriteResult(written=int(doc["written"]), kept_as=doc.get("kept_as"))

    def save_record(self, record: Manifest) -> None:
        self.client.json("PUT", self._prefix + "/manifest", body=encode_manifest(record),
                         headers={"Content-Type": "application/json"})

    def close(self) -> None:
        pass


class HttpSource:
    """The other daemon's native sessions (pull over HTTP)."""

    def __init__(self, client: HttpClient, agents: list[str] | None = None) -> None:
        self.client = client
        self.agents = agents
        self.where = client.base
        self.snapshot: str | None = None

    def manifest(self) -> Manifest:
        query = {"agent": ",".join(self.agents)} if self.agents else None
        doc = self.client.json("GET", "/export/manifest", query=query)
        self.snapshot = doc.get("snapshot")
        return decode_manifest(msgspec.json.encode(doc["manifest"]), f"{self.where} export manifest")

    def prefix_sha256(self, path: str, length: int) -> str:
        doc = self.client.json("GET", "/export/prefix",
                               query={"path": path, "length": length, "snapshot": self.snapshot})
        return str(doc.get("sha256") or "")

    def read(self, path: str, offset: int, length: int) -> Iterator[bytes]:
        query = {"path": path, "offset": offset, "length": length, "snapshot": self.snapshot}
        with self.client.request("GET", "/export/file", query=query) as resp:
            while True:
                try:
                    block = resp.read(CHUNK)
                except (ConnectionError, TimeoutError, OSError, http.client.HTTPException) as exc:
                    raise TransferError(f"{path}: the download broke off ({exc}); run again to resume") from None
                if not block:
                    return
                yield block

    def close(self) -> None:
        pass
