"""The client moved to the ``agtail_client`` package (clients/python/, installed with agtail):
this module only re-exports it, so that code written against ``agtaild.client`` keeps working.
New code imports ``agtail_client``."""

from __future__ import annotations

from agtail_client import ApiError, Client, EventStream, SseEvent, Unreachable, read_state
from agtail_client.discovery import STATE_FILE

__all__ = ["STATE_FILE", "ApiError", "Client", "EventStream", "SseEvent", "Unreachable", "read_state"]
