"""Helpers every adapter may use, none of which knows one agent's format.

Reading files and stores (``jsonl``, ``jsondoc``, ``sqlite_db``, ``session_dir``, ``scan``),
times (``stamps``), edits and patches (``edits``, ``edit_shapes``, ``tool_edits``, ``apply_patch``), ids for a
command line (``resume_ids``), VS Code's storage folders (``vscode_hosts``) and the collector
pause of a long read (``gc_pause``).

Layer rule: a kit module imports only ``agtaild.model``, ``agtaild.errors``,
``agtaild.adapters.base`` and other kit modules, never an agent package.
"""
