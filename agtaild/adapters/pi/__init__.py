"""Pi (badlogic/pi-mono) and Oh My Pi (can1357/oh-my-pi): one JSONL tree file per session.

Modules: adapter, content, tree. The adapter class is what the registry loads."""

from agtaild.adapters.pi.adapter import OhMyPiAdapter, PiAdapter

__all__ = ["OhMyPiAdapter", "PiAdapter"]
