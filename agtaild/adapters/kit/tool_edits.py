"""Edit-tool calls of Gemini CLI, OpenCode and Pi → the common edit shape (agtaild.adapters.kit.edits).

Each function knows one agent's edit tools (its adapter calls it where it builds the tool use):

* Gemini CLI ``replace`` / ``edit`` / ``smart_edit`` (``file_path``, ``old_string``,
  ``new_string``) and ``write_file``: the ``resultDisplay.fileDiff`` unified diff when recorded
  (the file's own line numbers), else the old/new strings of the call.
* OpenCode ``edit`` (``filePath``, ``oldString``, ``newString``; ``metadata.diff`` when recorded),
  ``multiedit`` (``edits``) and ``patch``/``apply_patch`` (``patchText``, Codex's envelope).
* Pi / Oh My Pi ``edit`` (``path``, ``oldText``, ``newText``, or a list of ``edits``).
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit import apply_patch, edits

GEMINI_EDIT_TOOLS = frozenset({"replace", "edit", "smart_edit", "write_file"})


def gemini_edit(tool: Any, args: Any, call: Any) -> dict[str, Any] | None:
    if tool not in GEMINI_EDIT_TOOLS or not isinstance(args, dict):
        return None
    display = call.get("resultDisplay") if isinstance(call, dict) else None
    if isinstance(display, dict) and isinstance(display.get("fileDiff"), str):
        files = edits.from_unified(display["fileDiff"], path=args.get("file_path") or display.get("fileName"))
        if files:
            return edits.edit_doc(list(files))
    if tool == "write_file":
        return None
    return edits.edit_doc(
        [edits.from_texts(args.get("file_path"), args.get("old_string"), args.get("new_string"))]
    )


def opencode_edit(tool: Any, inp: Any, metadata: Any) -> dict[str, Any] | None:
    if not isinstance(inp, dict):
        return None
    path = inp.get("filePath")
    if tool == "edit":
        diff = metadata.get("diff") if isinstance(metadata, dict) else None
        files = edits.from_unified(diff, path=path) if isinstance(diff, str) else []
        if files:
            return edits.edit_doc(list(files))
        return edits.edit_doc([edits.from_texts(path, inp.get("oldString"), inp.get("newString"))])
    if tool == "multiedit" and isinstance(inp.get("edits"), list):
        hunks: list[dict[str, Any]] = []
        for one in inp["edits"]:
            change = (
                edits.from_texts(path, one.get("oldString"), one.get("newString"))
                if isinstance(one, dict)
                else None
            )
            hunks += change["hunks"] if change else []
        return edits.edit_doc([edits.file_change(path, hunks)])
    if tool in ("patch", "apply_patch") and isinstance(inp.get("patchText"), str):
        return apply_patch.edit_of("apply_patch", inp["patchText"])
    return None


def pi_edit(tool: Any, args: Any) -> dict[str, Any] | None:
    if tool != "edit" or not isinstance(args, dict):
        return None
    path = args.get("path") or args.get("file_path")
    if isinstance(args.get("edits"), list):
        hunks: list[dict[str, Any]] = []
        for one in args["edits"]:
            change = (
                edits.from_texts(path, one.get("oldText"), one.get("newText"))
                if isinstance(one, dict)
                else None
            )
            hunks += change["hunks"] if change else []
        return edits.edit_doc([edits.file_change(path, hunks)])
    return edits.edit_doc([edits.from_texts(path, args.get("oldText"), args.get("newText"))])
