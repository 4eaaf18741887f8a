"""JSON-RPC 2.0 at POST /rpc over the same service methods as REST.

Follows the specification (https://www.jsonrpc.org/specification): batches (answered in
order, notifications left out, HTTP 204 when nothing is left), notifications (run, never
answered), and its error codes:

  -32700 parse error · -32600 invalid request · -32601 method not found ·
  -32602 invalid params (``data.path`` is the validation path, e.g. ["params", "limit"], and
  ``data.param`` / ``data.problem`` the parameter and what is wrong with it) ·
  -32603 internal error.

Application errors use the implementation-defined range with the agtail error code in
``data.code``: -32004 not found, -32009 refused, -32000 anything else.
Params are named (an object); every method's parameters are in agtaild/api/params.py.

A body nested deeper than msgspec's decoder goes (about 1000 levels) is a parse error; one
that decodes but is nested deeper than :data:`MAX_DEPTH` is an invalid request. Either way
the answer is HTTP 200 with the JSON-RPC error, never a 500.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec
from aiohttp import web

from agtaild.api.context import CTX, ApiContext, encode, json_response
from agtaild.api.params import METHOD_TABLE, ParamError
from agtaild.errors import AgtailError, NotFound, Refused, UsageError

log = logging.getLogger("agtaild.rpc")

MAX_BATCH = 100
#: The deepest nesting a request may have (a request is an object with params of plain
#: values; batches add one level).
MAX_DEPTH = 32
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
NOT_FOUND = -32004
REFUSED = -32009

_NO_ID = object()


def error(id_: Any, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return encode({"jsonrpc": "2.0", "error": err, "id": id_})


def depth_over(value: Any, limit: int) -> bool:
    """True when ``value`` nests lists and objects more than ``limit`` deep (iterative: no
    recursion to exhaust, and it stops at the first level too deep)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool))


def rpc_methods(ctx: ApiContext) -> list[str]:
    """Methods callable over JSON-RPC: every service method (validated here when the method
    table knows it, by the service otherwise)."""
    return sorted(ctx.methods)


async def handle_one(ctx: ApiContext, req: Any) -> bytes | None:
    """One request object → its encoded response, or None for a notification."""
    if not isinstance(req, dict):
        return error(None, INVALID_REQUEST, "invalid request: expected a JSON object")
    id_ = req.get("id", _NO_ID)
    if id_ is not _NO_ID and not _valid_id(id_):
        return error(None, INVALID_REQUEST, "invalid request: id must be a string, a number or null")
    notification = id_ is _NO_ID
    rid = None if notification else id_
    if req.get("jsonrpc") != "2.0":
        return error(rid, INVALID_REQUEST, 'invalid request: "jsonrpc" must be exactly "2.0"')
    method = req.get("method")
    if not isinstance(method, str):
        return error(rid, INVALID_REQUEST, 'invalid request: "method" must be a string')
    params = req.get("params")
    if "params" in req and not isinstance(params, dict | list):
        return error(rid, INVALID_REQUEST, 'invalid request: "params" must be an object or an array')
    response = await _invoke(ctx, method, params, rid)
    return None if notification else response


async def _invoke(ctx: ApiContext, method: str, params: Any, rid: Any) -> bytes:
    if not ctx.has_method(method):
        return error(rid, METHOD_NOT_FOUND, f"method not found: {method[:80]!r}", {"methods": rpc_methods(ctx)})
    spec = METHOD_TABLE.get(method)
    try:
        if spec is not None:
            checked = spec.parse_json(params)
        elif isinstance(params, dict) or params is None:
            checked = dict(params or {})  # a newer service method: the service checks its params
        else:
            raise ParamError("params", "must be an object of named parameters")
        if method == "index.update" and ctx.update is not None:
            result = await ctx.update(bool(checked.get("full", False)))
            return encode({"jsonrpc": "2.0", "result": result, "id": rid})
        body = await ctx.call_encoded(method, checked, ok=False)
        # One join, one copy of a body that may be large (a chain of + copies it at each step).
        return b"".join((b'{"jsonrpc":"2.0","result":', body, b',"id":', encode(rid), b"}"))
    except UsageError as err:  # ParamError too
        # The message is for people as the service wrote it (-32602 already says "invalid
        # params"); data holds the parts a client words its own way (agtaild.errors.bad_param).
        shaped = err.data if isinstance(err.data, dict) else {}
        param = err.param if isinstance(err, ParamError) else shaped.get("param")
        data: dict[str, Any] = {"code": err.code}
        if isinstance(param, str):
            data["path"] = ["params", param]
            data.update({k: v for k, v in shaped.items() if k in ("param", "problem", "standalone")})
        return error(rid, INVALID_PARAMS, err.message, data)
    except NotFound as err:
        return error(rid, NOT_FOUND, err.message, {"code": err.code, "status": err.http_status})
    except Refused as err:
        return error(rid, REFUSED, err.message, {"code": err.code, "status": err.http_status})
    except AgtailError as err:
        return error(rid, SERVER_ERROR, err.message, {"code": err.code, "status": err.http_status})
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("JSON-RPC %s failed", method)
        return error(rid, INTERNAL_ERROR, "internal error (the daemon's log has the details)")


async def rpc(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    raw = await request.read()
    try:
        payload = msgspec.json.decode(raw)
    except msgspec.DecodeError as err:
        return json_response(error(None, PARSE_ERROR, f"parse error: {err}"))
    except RecursionError:
        return json_response(error(None, PARSE_ERROR, "parse error: the JSON is nested too deeply"))
    if depth_over(payload, MAX_DEPTH):
        return json_response(
            error(None, INVALID_REQUEST, f"invalid request: nested more than {MAX_DEPTH} levels deep")
        )
    if isinstance(payload, list):
        if not payload:
            return json_response(error(None, INVALID_REQUEST, "invalid request: empty batch"))
        if len(payload) > MAX_BATCH:
            return json_response(
                error(None, INVALID_REQUEST, f"invalid request: a batch of {len(payload)} is over the limit of {MAX_BATCH}")
            )
        answers = await asyncio.gather(*(handle_one(ctx, item) for item in payload))
        parts = [a for a in answers if a is not None]
        if not parts:
            return web.Response(status=204)
        return json_response(b"[" + b",".join(parts) + b"]")
    answer = await handle_one(ctx, payload)
    if answer is None:
        return web.Response(status=204)
    return json_response(answer)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/rpc", rpc)
