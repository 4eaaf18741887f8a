"""The generic path: an edit recognised by its shape, for tools an adapter left without one.

agtaild.index.prepare applies :func:`generic_edit` to every tool call without
``extra["edit"]``: an input with an old/new text pair, or one holding a unified diff or an
apply_patch envelope. Shapes only, no agent's private format.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.apply_patch import edit_of

#: (old, new) key pairs of edit-tool inputs, for agents whose adapter has no edit normaliser.
_OLD_NEW_KEYS = (
    ("old_string", "new_string"), ("oldString", "newString"), ("old_str", "new_str"),
    ("oldText", "newText"), ("old_text", "new_text"),
)  # fmt: skip
_PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "file", "filename", "target_file")


def generic_edit(inp: Any) -> dict[str, Any] | None:
    """The generic path (agtaild.index.prepare applies it to tool calls an adapter left without
    ``extra["edit"]``): an input with an old/new text pair, or holding a unified diff or an
    apply_patch envelope. Shapes, not any agent's private format."""
    if isinstance(inp, str):
        return _patch_in(inp, None)
    if not isinstance(inp, dict):
        return None
    path = next((inp[k] for k in _PATH_KEYS if isinstance(inp.get(k), str)), None)
    for old_key, new_key in _OLD_NEW_KEYS:
        if isinstance(inp.get(old_key), str) and isinstance(inp.get(new_key), str):
            return edits.edit_doc([edits.from_texts(path, inp[old_key], inp[new_key])])
    for value in inp.values():
        if isinstance(value, str) and len(value) > 20:
            found = _patch_in(value, path)
            if found is not None:
                return found
    return None


def _patch_in(text: str, path: Any) -> dict[str, Any] | None:
    if "*** Begin Patch" in text:
        return edit_of("apply_patch", text)
    if "\n@@ -" in text or text.startswith("@@ -"):
        return edits.edit_doc(list(edits.from_unified(text, path=path if "\n+++ " not in text else None)))
    return None
