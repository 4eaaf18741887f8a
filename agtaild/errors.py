"""One small exception hierarchy, mapped once to CLI exit codes and once to HTTP statuses.

AgtailError
├── UsageError      bad arguments or parameters      exit 2 · HTTP 400 · code "bad_request"
├── NotFound        no such session / route / thing  exit 4 · HTTP 404 · code "not_found"
├── Refused         allowed syntax, refused action   exit 3 · HTTP 409 · code "refused"
│                   (resume of an imported session, a hostile sync manifest, …)
├── Unauthorized    missing or wrong token           exit 1 · HTTP 401 · code "unauthorized"
├── Forbidden       bad Host/Origin                  exit 1 · HTTP 403 · code "forbidden"
├── TooLarge        request or file over a limit     exit 1 · HTTP 413 · code "too_large"
├── Busy            no room for one more connection  exit 1 · HTTP 503 · code "busy"
└── (itself)        anything else we raise on purpose exit 1 · HTTP 500 · code "error"

Messages are for people: say what went wrong and, where possible, how to fix it.
"""

from __future__ import annotations


class AgtailError(Exception):
    exit_code = 1
    http_status = 500
    code = "error"

    def __init__(self, message: str, *, data: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class UsageError(AgtailError):
    exit_code = 2
    http_status = 400
    code = "bad_request"


class NotFound(AgtailError):
    exit_code = 4
    http_status = 404
    code = "not_found"


class Refused(AgtailError):
    exit_code = 3
    http_status = 409
    code = "refused"


class Unauthorized(AgtailError):
    exit_code = 1
    http_status = 401
    code = "unauthorized"


class Forbidden(AgtailError):
    exit_code = 1
    http_status = 403
    code = "forbidden"


class TooLarge(AgtailError):
    exit_code = 1
    http_status = 413
    code = "too_large"


class Busy(AgtailError):
    exit_code = 1
    http_status = 503
    code = "busy"


def error_body(err: AgtailError) -> dict[str, object]:
    """The one error shape of the API: {"ok": false, "error": {"code", "message"}, "status"}."""
    return {"ok": False, "error": {"code": err.code, "message": err.message}, "status": err.http_status}
