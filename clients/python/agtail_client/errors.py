"""One exception tree for every failure the client reports, each carrying the API's error code.

Scripts catch :class:`ApiError` for "anything agtaild refused", or one subclass for one case
(``except NotFound``). The REST error shape (``{"ok": false, "error": {"code", "message"}}``)
and JSON-RPC errors (``data.code``) map onto the same classes, so a script does not care which
wire carried the call.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from typing import Any


class ApiError(Exception):
    """An error answer: ``code`` is agtail's error code (bad_request, not_found, …), ``status``
    the HTTP status when there was one (0 otherwise), ``data`` the JSON-RPC error data."""

    #: The code this class stands for (the base class stands for every code).
    code_name = "error"

    def __init__(self, code: str, message: str, status: int = 0, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, status={self.status})"


class BadRequest(ApiError):
    """A bad parameter (the message names it), or an unknown one."""

    code_name = "bad_request"


class Unauthorized(ApiError):
    """No token, or a wrong one, over TCP."""

    code_name = "unauthorized"


class Forbidden(ApiError):
    """The Host or Origin of the request is not one agtaild accepts."""

    code_name = "forbidden"


class NotFound(ApiError):
    """No such session (or endpoint, or JSON-RPC method)."""

    code_name = "not_found"


class MethodNotAllowed(ApiError):
    """E.g. a POST on a GET route."""

    code_name = "method_not_allowed"


class Refused(ApiError):
    """Understood and refused, e.g. resuming an imported or archived session."""

    code_name = "refused"


class TooLarge(ApiError):
    """A request body over the daemon's limit."""

    code_name = "too_large"


class Busy(ApiError):
    """The daemon has no room for one more authenticated connection right now (HTTP 503)."""

    code_name = "busy"


class InternalError(ApiError):
    """A bug in agtaild (its log has the traceback)."""

    code_name = "internal"


class Unreachable(ApiError):
    """Nobody answers at this address (the daemon is not running, or went away)."""

    code_name = "unreachable"

    def __init__(self, message: str) -> None:
        super().__init__("unreachable", message)


_BY_CODE: dict[str, type[ApiError]] = {
    cls.code_name: cls
    for cls in (BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, Refused, TooLarge, Busy, InternalError)
}

#: JSON-RPC's own codes, for errors that carry no agtail code in ``data``.
_RPC_CODES = {-32601: "not_found", -32602: "bad_request", -32600: "bad_request", -32700: "bad_request", -32603: "internal"}


def error_for(code: str, message: str, status: int = 0, data: Any = None) -> ApiError:
    """The exception for agtail error ``code`` (ApiError itself for a code this client does not
    know yet: a newer daemon may add codes)."""
    if code == "unreachable":
        return Unreachable(message)
    return _BY_CODE.get(code, ApiError)(code, message, status, data)


def rpc_error(err: Any) -> ApiError:
    """The exception for a JSON-RPC ``error`` member."""
    if not isinstance(err, dict):
        return ApiError("error", f"malformed JSON-RPC error: {err!r}")
    raw = err.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    rpc_code = err.get("code")
    code = data.get("code") or (_RPC_CODES.get(rpc_code, "error") if isinstance(rpc_code, int) else "error")
    return error_for(str(code), str(err.get("message", "error")), int(data.get("status") or 0), data)
