"""Kimi CLI (MoonshotAI ``kimi-cli``): ``~/.kimi/sessions/<md5(work dir)>/<id>/``.

Modules: adapter, code, wire. The adapter class is what the registry loads."""

from agtaild.adapters.kimi.adapter import KimiAdapter

__all__ = ["KimiAdapter"]
