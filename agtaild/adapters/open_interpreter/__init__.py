"""Open Interpreter (PyPI ``open-interpreter``): one JSON array per conversation.

The terminal interface saves ``<platformdirs config dir>/open-interpreter/conversations/
<first words>__<Month_DD_YYYY_HH-MM-SS>.json`` (``~/.config/open-interpreter`` on Linux,
``~/Library/Application Support/open-interpreter`` on macOS), rewritten whole after every
response. Modules: adapter (roots, units, the reading of the array).
"""

from agtaild.adapters.open_interpreter.adapter import OpenInterpreterAdapter

__all__ = ["OpenInterpreterAdapter"]
