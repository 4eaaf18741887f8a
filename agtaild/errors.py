"""One small exception hierarchy, mapped once to CLI exit codes and once to HTTP statuses.

AgtailError
├── UsageError      bad arguments or parameters      exit 2 · HTTP 400 · code "bad_request"
├── NotFound        no such session / route / thing  exit 4 · HTTP 404 · code "not_found"
├── Refused         allowed syntax, refused action   exit 3 · HTTP 409 · code "refused"
│                   (resume of an imported session, a hostile sync manifest, …)
├── Gone            the thing is known, what it needs exit 5 · HTTP 410 · code "gone"
│                   is not (resume: the session's directory was deleted)
├── Unauthorized    missing or wrong token           exit 1 · HTTP 401 · code "unauthorized"
├── Forbidden       bad Host/Origin                  exit 1 · HTTP 403 · code "forbidden"
├── TooLarge        request or file over a limit     exit 1 · HTTP 413 · code "too_large"
├── Busy            no room for one more connection  exit 1 · HTTP 503 · code "busy"
└── (itself)        anything else we raise on purpose exit 1 · HTTP 500 · code "error"

Messages are for people: say what went wrong and, where possible, how to fix it. A refused
parameter (:func:`bad_param`) keeps its name and the problem apart in ``data``, so each front
end says it in its own terms: the API "parameter 'since': …", the CLI "--since: …", MCP
"argument 'since': …" (:func:`worded`); never a method name or a protocol's layer.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Callable


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


class Gone(AgtailError):
    """Known, but what it needs is gone: ``resume`` of a session whose directory no longer
    exists. Not NotFound (4: no such session), so a script can tell the two apart."""

    exit_code = 5
    http_status = 410
    code = "gone"


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


def bad_param(name: str, problem: str, *, standalone: bool = False) -> UsageError:
    """A parameter's value refused. ``standalone``: the problem is a whole sentence that says
    which value it is about ("unknown agent 'x' (known: …)"), so no front end prefixes a name."""
    message = problem if standalone else said_of(f"parameter {name!r}", problem)
    data: dict[str, object] = {"param": name, "problem": problem}
    if standalone:
        data["standalone"] = True
    return UsageError(message, data=data)


def unknown_agent(agent: str, known: list[str]) -> UsageError:
    """An agent id no adapter has, in the one wording every front end shows."""
    return bad_param("agent", f"unknown agent {agent[:64]!r} (known: {', '.join(known)})", standalone=True)


def worded(err: AgtailError, label: Callable[[str], str | None]) -> str:
    """``err.message`` in a front end's terms: for a refused parameter, ``label(name)`` (e.g.
    ``--since``) before the problem, or the problem alone (``label`` gives None, or the problem
    is standalone); any other error as it is."""
    data = err.data if isinstance(err.data, dict) else {}
    name, problem = data.get("param"), data.get("problem")
    if not isinstance(name, str) or not isinstance(problem, str):
        return err.message
    if data.get("standalone"):
        return problem
    said = label(name)
    return problem if said is None else said_of(said, problem)


def said_of(name: str, problem: str) -> str:
    """``--limit must be at least 1``, ``--since: 'x' is not a date``: a colon only before a value."""
    sep = ": " if problem[:1] in ("'", '"') else " "
    return name + sep + problem


def error_body(err: AgtailError) -> dict[str, object]:
    """The one error shape of the API: {"ok": false, "error": {"code", "message"}, "status"}."""
    return {"ok": False, "error": {"code": err.code, "message": err.message}, "status": err.http_status}
