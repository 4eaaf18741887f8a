"""Continue (continuedev/continue: the IDE extensions and the ``cn`` CLI): ``~/.continue/sessions``.

Modules: adapter, items. The adapter class is what the registry loads."""

from agtaild.adapters.continue_dev.adapter import ContinueAdapter

__all__ = ["ContinueAdapter"]
