"""agtail_client: a zero-dependency (standard library only) client for agtaild, the agtail
daemon that indexes the session transcripts of AI coding agents.

It finds the daemon as the `agtail` CLI does (the data dir, its agtaild.json, the unix socket
first, then TCP with the token file), speaks JSON-RPC and REST over one kept-alive HTTP/1.1
connection, and follows Server-Sent Events. The `agtail` CLI itself uses it.

    from agtail_client import Client
    with Client.connect() as c:                         # or Client.connect("~/.local/share/agtail")
        for hit in c.search("flaky test", limit=5):
            print(hit["session"]["id"], hit["snippet"])
        for ev in c.follow("claude-code", "2c4d36d7"):  # new events as they are written
            print(ev["seq"], ev["kind"], ev.get("text"))
"""

from __future__ import annotations

from agtail_client.client import RECONNECT_DELAYS, Client
from agtail_client.discovery import STATE_FILE, default_data_dir, read_state, read_token
from agtail_client.errors import (
    ApiError,
    BadRequest,
    Busy,
    Forbidden,
    InternalError,
    MethodNotAllowed,
    NotFound,
    Refused,
    TooLarge,
    Unauthorized,
    Unreachable,
    error_for,
)
from agtail_client.sse import EventStream, SseEvent
from agtail_client.transport import InsecureConnectionWarning, InsecureServer, check_url

__version__ = "0.2.0"

__all__ = [
    "RECONNECT_DELAYS",
    "STATE_FILE",
    "ApiError",
    "BadRequest",
    "Busy",
    "Client",
    "EventStream",
    "Forbidden",
    "InsecureConnectionWarning",
    "InsecureServer",
    "InternalError",
    "MethodNotAllowed",
    "NotFound",
    "Refused",
    "SseEvent",
    "TooLarge",
    "Unauthorized",
    "Unreachable",
    "check_url",
    "default_data_dir",
    "error_for",
    "read_state",
    "read_token",
]
