"""Factory Droid (``droid``): ``~/.factory/sessions/<cwd-slug>/<id>.jsonl``.

Modules: adapter, parser. The adapter class is what the registry loads."""

from agtaild.adapters.droid.adapter import DroidAdapter

__all__ = ["DroidAdapter"]
