"""The daemon's sync endpoints: import (push from another machine) and export (pull by one).

All of them need the token over TCP (the API's security middleware). The import side writes
only below ``<data dir>/imported/<collection>/`` through the same destination writer and the
same whole-set checks as a local pull: a client is as untrusted as any remote. Upload bodies
are streamed to disk (never held in memory) and capped by ``max_file_size``.

Routes (documented in docs/sync.md):
  GET  /api/v1/import                           collections of this import store
  POST /api/v1/import/refresh                   index collections that appeared (after a local pull)
  GET  /api/v1/import/{collection}/state        what the collection holds (sizes, sha256, partials)
  POST /api/v1/import/{collection}/check        refuse a whole manifest before anything is sent
  PUT  /api/v1/import/{collection}/file         one file (header X-Agtail-Write: the write op)
  PUT  /api/v1/import/{collection}/manifest     the record of what was pushed
  GET  /api/v1/export/manifest[?agent=a,b]      this machine's native files (+ snapshot id)
  GET  /api/v1/export/prefix?path&length        sha256 of a file's first bytes
  GET  /api/v1/export/file?path&offset&length   bytes of one file
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from agtaild.api.guard import streaming_body
from agtaild.errors import Refused, TooLarge, UsageError
from agtaild.sync.directory import DirectoryDestination
from agtaild.sync.manifest import HashCache, Manifest, decode_manifest, machine_identity, open_hash_cache
from agtaild.sync.native import LocalFilesSource
from agtaild.sync.safety import DEFAULT_MAX_FILE_SIZE, check_collection_name, check_entries, check_not_native
from agtaild.sync.transfer import TransferError, WriteOp

API = "/api/v1"
MAX_MANIFEST_BYTES = 64 << 20
SNAPSHOTS_KEPT = 4


class SyncServer:
    """Per-app state: the config, the hash cache and the export sources of recent pulls."""

    def __init__(self, config: Any, max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> None:
        self.config = config
        self.max_file_size = int(getattr(config, "max_file_size", 0) or max_file_size)
        self.cache: HashCache = open_hash_cache(config.data_dir)
        self.sources: OrderedDict[str, LocalFilesSource] = OrderedDict()
        self.lock = threading.Lock()
        #: Index updates started after pushes (kept so they are not garbage-collected).
        self.tasks: set[asyncio.Future[Any]] = set()

    def known_agents(self) -> list[str]:
        from agtaild.adapters import all_adapters

        return [a.id for a in all_adapters()]

    def destination(self, collection: str) -> DirectoryDestination:
        check_collection_name(collection)
        root = Path(self.config.import_dir) / collection
        check_not_native(root, [r.path for r in self.config.roots if r.kind == "native"])
        return DirectoryDestination(root, self.cache, set(self.known_agents()))

    def new_source(self, agents: list[str] | None) -> tuple[str, LocalFilesSource]:
        import secrets

        origin, name = machine_identity(self.config.data_dir)
        source = LocalFilesSource(_sendable(self.config, agents), self.cache, origin=origin,
                                  origin_name=name, where="agtaild export")
        sid = secrets.token_hex(8)
        with self.lock:
            self.sources[sid] = source
            while len(self.sources) > SNAPSHOTS_KEPT:
                _, old = self.sources.popitem(last=False)
                old.close()
        return sid, source

    def source(self, sid: str | None) -> LocalFilesSource:
        with self.lock:
            source = self.sources.get(sid or "")
        if source is None:
            raise UsageError("unknown or expired export snapshot; fetch /api/v1/export/manifest again")
        return source

    def close(self) -> None:
        with self.lock:
            for source in self.sources.values():
                source.close()
            self.sources.clear()
        self.cache.close()


SYNC = web.AppKey("agtail_sync", SyncServer)


def _server(request: web.Request) -> SyncServer:
    app = request.app
    if SYNC not in app:
        raise UsageError("this daemon has no sync configuration")
    return app[SYNC]


def _ok(doc: dict[str, Any]) -> web.Response:
    return web.Response(body=msgspec.json.encode({"ok": True, **doc}), content_type="application/json")


async def _thread(fn: Any, *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def _read_manifest(request: web.Request) -> Manifest:
    if (request.content_length or 0) > MAX_MANIFEST_BYTES:
        raise TooLarge(f"a manifest may be at most {MAX_MANIFEST_BYTES} bytes")
    data = await request.content.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise TooLarge(f"a manifest may be at most {MAX_MANIFEST_BYTES} bytes")
    return decode_manifest(data, "the pushed manifest")


async def list_imports(request: web.Request) -> web.Response:
    from agtaild.store.imports import list_collections

    srv = _server(request)
    return _ok({"collections": await _thread(list_collections, srv.config)})


async def import_state(request: web.Request) -> web.Response:
    srv = _server(request)
    dest = srv.destination(request.match_info["collection"])
    state = await _thread(dest.state)
    return _ok({"state": msgspec.to_builtins(state), "max_file_size": srv.max_file_size})


@streaming_body  # checks its own size limit
async def import_check(request: web.Request) -> web.Response:
    srv = _server(request)
    dest = srv.destination(request.match_info["collection"])
    manifest = await _read_manifest(request)
    state = await _thread(dest.state)
    check_entries(manifest.files, max_file_size=srv.max_file_size, case_insensitive=state.case_insensitive,
                  known_agents=srv.known_agents(), existing=state.files.keys(), where="the pushed manifest")
    return _ok({"files": len(manifest.files)})


@streaming_body  # checks its own size limit
async def import_file(request: web.Request) -> web.Response:
    srv = _server(request)
    dest = srv.destination(request.match_info["collection"])
    try:
        op = msgspec.json.decode(request.headers.get("X-Agtail-Write", ""), type=WriteOp)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise UsageError(f"X-Agtail-Write is not a valid write operation: {exc}") from None
    check_entries([op.entry], max_file_size=srv.max_file_size, case_insensitive=False,
                  known_agents=srv.known_agents(), where="the pushed file")
    if op.mode not in {"new", "append", "resume"} or not 0 <= op.offset <= op.entry.size:
        raise UsageError(f"bad write mode {op.mode!r} or offset {op.offset}")
    expected = op.entry.size - op.offset
    if request.content_length is None or request.content_length != expected:
        raise UsageError(f"Content-Length must be {expected} for {op.entry.path} from offset {op.offset}")
    feed: queue.Queue[Any] = queue.Queue(maxsize=8)

    def chunks() -> Iterator[bytes]:
        while True:
            item = feed.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    loop = asyncio.get_running_loop()
    job = loop.run_in_executor(None, dest.write, op, chunks())

    async def put(item: Any) -> bool:
        while not job.done():
            try:
                feed.put_nowait(item)
                return True
            except queue.Full:
                await asyncio.sleep(0.005)
        return False

    try:
        async for block in request.content.iter_chunked(1 << 20):
            if not await put(block):
                break
        else:
            await put(None)
    except BaseException:
        await put(TransferError(f"{op.entry.path}: the upload broke off; the partial file is kept"))
        with contextlib.suppress(BaseException):
            await job
        raise
    result = await job
    return _ok({"written": result.written, "kept_as": result.kept_as})


@streaming_body  # checks its own size limit
async def import_manifest(request: web.Request) -> web.Response:
    srv = _server(request)
    dest = srv.destination(request.match_info["collection"])
    record = await _read_manifest(request)
    check_entries(record.files, max_file_size=srv.max_file_size, case_insensitive=False,
                  known_agents=srv.known_agents(), where="the pushed record")
    await _thread(dest.save_record, record)
    indexing = await _index_new_files(request)
    return _ok({"files": len(record.files), "indexing": indexing})


async def _index_new_files(request: web.Request) -> bool:
    """After a push: let the index read the collection (a new one gets its roots first)."""
    from agtaild.api.context import CTX
    from agtaild.store.imports import adopt_new_collections

    srv = _server(request)
    await _thread(adopt_new_collections, srv.config)
    update = request.app[CTX].update if CTX in request.app else None
    if update is None:
        return False
    task = asyncio.ensure_future(update(False))
    srv.tasks.add(task)
    task.add_done_callback(srv.tasks.discard)
    return True


async def import_refresh(request: web.Request) -> web.Response:
    """After a local `agtail sync pull`: read collections that appeared since the start."""
    return _ok({"indexing": await _index_new_files(request)})


async def export_manifest(request: web.Request) -> web.Response:
    srv = _server(request)
    agents = [a for a in request.query.get("agent", "").split(",") if a] or None
    sid, source = await _thread(srv.new_source, agents)
    manifest = await _thread(source.manifest)
    return _ok({"manifest": msgspec.to_builtins(manifest), "snapshot": sid})


@streaming_body  # checks its own size limit
async def import_state_pack(request: web.Request) -> web.Response:
    """A push's state pack (agtaild.sync.statepack): merged at once, whole or not at all."""
    from agtaild.sync import statepack

    srv = _server(request)
    collection = request.match_info["collection"]
    srv.destination(collection)  # the name is checked as a push's is
    if (request.content_length or 0) > statepack.MAX_BYTES:
        raise TooLarge(f"a state pack may be at most {statepack.MAX_BYTES} bytes")
    data = await request.content.read(statepack.MAX_BYTES + 1)
    merged = await _thread(statepack.merge, srv.config, data, collection, "pushed over HTTP")
    return _ok({"state": merged})


async def export_state_pack(request: web.Request) -> web.Response:
    """This machine's state of its own sessions, as a pull takes it."""
    from agtaild.sync import statepack

    srv = _server(request)
    agents = [a for a in request.query.get("agent", "").split(",") if a] or None
    pack = await _thread(statepack.build, srv.config, None, agents)
    return web.Response(body=pack, content_type="application/json")


def _int(request: web.Request, name: str) -> int:
    try:
        value = int(request.query.get(name, ""))
    except ValueError:
        raise UsageError(f"?{name}= must be a whole number") from None
    if value < 0:
        raise UsageError(f"?{name}= must not be negative")
    return value


async def export_prefix(request: web.Request) -> web.Response:
    source = _server(request).source(request.query.get("snapshot"))
    digest = await _thread(source.prefix_sha256, request.query.get("path", ""), _int(request, "length"))
    return _ok({"sha256": digest})


async def export_file(request: web.Request) -> web.StreamResponse:
    source = _server(request).source(request.query.get("snapshot"))
    path = request.query.get("path", "")
    offset, length = _int(request, "offset"), _int(request, "length")
    if path not in source.files:
        raise Refused(f"{path!r} is not one of the files this daemon exports")
    blocks = source.read(path, offset, length)
    response = web.StreamResponse(headers={"Content-Type": "application/octet-stream",
                                           "Content-Length": str(length)})
    await response.prepare(request)
    while True:
        block = await _thread(next, blocks, None)
        if block is None:
            break
        await response.write(block)
    await response.write_eof()
    return response


def register_routes(app: web.Application) -> None:
    """Mount the sync endpoints (called by the API's app factory through ROUTE_MODULES)."""
    from agtaild.api.context import CTX

    if SYNC not in app and CTX in app:
        config = getattr(app[CTX].service, "config", None)
        if config is not None:
            app[SYNC] = SyncServer(config)

            async def _close(app: web.Application) -> None:
                app[SYNC].close()

            app.on_cleanup.append(_close)
    r = app.router
    r.add_get(f"{API}/import", list_imports)
    r.add_post(f"{API}/import/refresh", import_refresh)
    r.add_get(f"{API}/import/{{collection}}/state", import_state)
    r.add_post(f"{API}/import/{{collection}}/check", import_check)
    r.add_put(f"{API}/import/{{collection}}/file", import_file)
    r.add_put(f"{API}/import/{{collection}}/manifest", import_manifest)
    r.add_put(f"{API}/import/{{collection}}/state-pack", import_state_pack)
    r.add_get(f"{API}/export/manifest", export_manifest)
    r.add_get(f"{API}/export/state-pack", export_state_pack)
    r.add_get(f"{API}/export/prefix", export_prefix)
    r.add_get(f"{API}/export/file", export_file)


#: The name the sync issue gave this entry point.
setup_import_routes = register_routes


def openapi_paths() -> dict[str, Any]:
    """The sync endpoints in the API's OpenAPI document (details: docs/sync.md)."""

    def op(summary: str, op_id: str, body: str | None = None) -> dict[str, Any]:
        doc: dict[str, Any] = {"summary": summary, "operationId": op_id, "tags": ["sync"],
                               "security": [{"bearer": []}], "responses": {"200": {"description": "ok"}}}
        if body is not None:
            doc["requestBody"] = {"required": True, "content": {body: {}}}
        return doc

    coll = {"name": "collection", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        f"{API}/import": {"get": op("Imported collections with counts and last sync", "listImports")},
        f"{API}/import/refresh": {"post": op("Index collections that appeared since the start", "importRefresh")},
        f"{API}/import/{{collection}}/state": {
            "parameters": [coll], "get": op("What a collection holds (size, sha256, partials)", "importState")},
        f"{API}/import/{{collection}}/check": {
            "parameters": [coll], "post": op("Refuse an unsafe manifest as a whole", "importCheck", "application/json")},
        f"{API}/import/{{collection}}/file": {
            "parameters": [coll],
            "put": op("Write one file (header X-Agtail-Write)", "importFile", "application/octet-stream")},
        f"{API}/import/{{collection}}/manifest": {
            "parameters": [coll], "put": op("Save the push record", "importManifest", "application/json")},
        f"{API}/import/{{collection}}/state-pack": {
            "parameters": [coll],
            "put": op("Merge a push's labels, stars, titles and hides", "importStatePack", "application/json")},
        f"{API}/export/manifest": {"get": op("This machine's native files", "exportManifest")},
        f"{API}/export/state-pack": {"get": op("This machine's labels, stars, titles and hides", "exportStatePack")},
        f"{API}/export/prefix": {"get": op("sha256 of a file's first bytes", "exportPrefix")},
        f"{API}/export/file": {"get": op("Bytes of one exported file", "exportFile")},
    }


def _sendable(config: Any, agents: list[str] | None) -> list[Any]:
    """Native files plus sessions kept only by the archive (agtaild.store.archive.archiver)."""
    from agtaild.store.archive.hook import sendable_files

    return sendable_files(config, agents)
