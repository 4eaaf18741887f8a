"""Roo Code (RooCodeInc/Roo-Code), a Cline fork: the same task folders, read by cline_tasks.

Where: ``globalStorage/rooveterinaryinc.roo-cline/tasks/<taskId>/`` in every VS Code-family
editor (vscode_hosts), or wherever the ``roo-cline.customStoragePath`` setting points (an
editor setting, not an env var: pass that folder with ``--root roo-code=PATH``). Roo adds
``history_item.json`` per task (``parentTaskId``/``rootTaskId`` link subtasks, ``mode``,
``workspace``) and ``tasks/_index.json``; API messages may carry ``isSummary`` (a condense
summary) and ``condenseParent`` (hidden by a condense, still kept).

Resume: Roo has no command line; a task is reopened from the editor's history (None).
"""

from __future__ import annotations

from typing import ClassVar

from agtaild.adapters.cline.tasks import TaskDirAdapter


class RooCodeAdapter(TaskDirAdapter):
    id: ClassVar[str] = "roo-code"
    name: ClassVar[str] = "Roo Code"
    env_vars: ClassVar[tuple[str, ...]] = ()
    root_help: ClassVar[str] = (
        "an editor's globalStorage/rooveterinaryinc.roo-cline folder (holding tasks/), its tasks/ "
        "folder, or the roo-cline.customStoragePath folder"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("Roo Code 3.x task folders (synthetic, from the 3.52 source)",)
    sample_roots: ClassVar[tuple[str, ...]] = (
        "roo-code/synthetic-agtail/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline",
    )
    extension_ids: ClassVar[tuple[str, ...]] = ("rooveterinaryinc.roo-cline",)
