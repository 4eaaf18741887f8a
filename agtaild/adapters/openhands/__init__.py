"""OpenHands CLI (OpenHands/OpenHands-CLI on the software-agent-sdk): one folder per conversation.

Modules: adapter, events. The adapter class is what the registry loads."""

from agtaild.adapters.openhands.adapter import OpenHandsAdapter

__all__ = ["OpenHandsAdapter"]
