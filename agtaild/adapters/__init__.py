"""The adapter registry: one list, built-ins and outside adapters alike.

Layer rule: the adapters import nothing above the model (``agtaild.model``, ``errors``,
``fsnames``, ``textsafe``, ``dirs``); an agent package imports ``base``, ``kit`` and itself, and
another agent's package only where its agent is a fork of that one (Kilo of Cline and
OpenCode, Roo Code of Cline, Qwen Code of Gemini CLI, OpenClaw of Pi, whose agent core and entry
format it runs, Tabnine CLI of Gemini CLI, TRAE CLI of Codex CLI; Qoder CLI of Claude Code, whose
transcript format its writer writes; Claude Desktop of Claude Code, which it runs).
tests/test_layers.py checks it.

A new agent is one package under ``agtaild/adapters/<agent>/`` (its ``__init__`` exposes the
Adapter class) plus one line in ``BUILTIN`` (docs/adapters.md, "Adding an agent").
Outside packages register through the ``agtail.adapters`` entry-point group (each entry
point names an Adapter subclass).
"""

from __future__ import annotations

import importlib
import os
import sys
from functools import lru_cache
from typing import Any

from agtaild.adapters.base import Adapter
from agtaild.errors import UsageError

#: "package:Class" of every built-in adapter, one per agent, in the order `agtail doctor` lists them.
BUILTIN: list[str] = [
    "agtaild.adapters.claude:ClaudeCodeAdapter",
    "agtaild.adapters.codex:CodexAdapter",
    "agtaild.adapters.gemini:GeminiAdapter",
    "agtaild.adapters.opencode:OpenCodeAdapter",
    "agtaild.adapters.pi:PiAdapter",
    "agtaild.adapters.pi:OhMyPiAdapter",
    "agtaild.adapters.grok:GrokAdapter",
    "agtaild.adapters.kiro:KiroAdapter",
    "agtaild.adapters.copilot_cli:CopilotCliAdapter",
    "agtaild.adapters.droid:DroidAdapter",
    "agtaild.adapters.kimi:KimiAdapter",
    "agtaild.adapters.cursor:CursorAdapter",
    "agtaild.adapters.amp:AmpAdapter",
    "agtaild.adapters.copilot_vscode:CopilotVscodeAdapter",
    "agtaild.adapters.cline:ClineAdapter",
    "agtaild.adapters.kilo:KiloAdapter",
    "agtaild.adapters.roo_code:RooCodeAdapter",
    "agtaild.adapters.openhands:OpenHandsAdapter",
    "agtaild.adapters.zed:ZedAdapter",
    "agtaild.adapters.vibe:VibeAdapter",
    "agtaild.adapters.qwen:QwenAdapter",
    "agtaild.adapters.continue_dev:ContinueAdapter",
    "agtaild.adapters.aider:AiderAdapter",
    "agtaild.adapters.crush:CrushAdapter",
    "agtaild.adapters.goose:GooseAdapter",
    "agtaild.adapters.openclaw:OpenClawAdapter",
    "agtaild.adapters.gptme:GptmeAdapter",
    "agtaild.adapters.hermes:HermesAdapter",
    "agtaild.adapters.open_interpreter:OpenInterpreterAdapter",
    "agtaild.adapters.codebuddy:CodeBuddyAdapter",
    "agtaild.adapters.codebuff:CodebuffAdapter",
    "agtaild.adapters.junie:JunieAdapter",
    "agtaild.adapters.windsurf:WindsurfAdapter",
    "agtaild.adapters.tabnine:TabnineAdapter",
    "agtaild.adapters.trae_cli:TraeCliAdapter",
    "agtaild.adapters.forge:ForgeAdapter",
    "agtaild.adapters.amazon_q:AmazonQAdapter",
    "agtaild.adapters.warp:WarpAdapter",
    "agtaild.adapters.plandex:PlandexAdapter",
    "agtaild.adapters.auggie:AuggieAdapter",
    "agtaild.adapters.cortex_code:CortexCodeAdapter",
    "agtaild.adapters.deepseek_tui:DeepSeekTuiAdapter",
    "agtaild.adapters.iflow:IflowAdapter",
    "agtaild.adapters.qoder:QoderAdapter",
    "agtaild.adapters.claude_desktop:ClaudeDesktopAdapter",
    "agtaild.adapters.antigravity:AntigravityAdapter",
    "agtaild.adapters.chatgpt:ChatGptAdapter",
    "agtaild.adapters.claude_ai:ClaudeAiAdapter",
    "agtaild.adapters.gemini_apps:GeminiAppsAdapter",
]

_extra: list[Adapter] = []


def register(adapter: Adapter) -> None:
    """Add an adapter at run time (plugins and tests)."""
    _extra.append(adapter)
    all_adapters.cache_clear()


def _load(spec: str) -> Adapter:
    module_name, _, cls_name = spec.partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    return cls()


@lru_cache(maxsize=1)
def all_adapters() -> tuple[Adapter, ...]:
    found: dict[str, Adapter] = {}
    for spec in BUILTIN:
        adapter = _load(spec)
        found[adapter.id] = adapter
    for ep in _plugin_entry_points():
        cls = ep.load()
        adapter = cls()
        found.setdefault(adapter.id, adapter)
    for adapter in _extra:
        found[adapter.id] = adapter
    return tuple(found.values())


def _plugin_entry_points() -> list[Any]:
    """The ``agtail.adapters`` entry points of the installed distributions."""
    if not _plugins_may_exist():
        return []
    from importlib.metadata import entry_points

    return list(entry_points(group="agtail.adapters"))


def _plugins_may_exist() -> bool:
    """False only when no distribution on ``sys.path`` can declare an ``agtail.adapters`` entry
    point: the ``entry_points.txt`` of every ``*.dist-info``/``*.egg-info`` folder (and of an
    egg's ``EGG-INFO``) is read directly. Importing importlib.metadata costs ~30 ms of every
    command's start-up (every CLI call finds its adapters) and almost no installation has a
    plugin; anything this check cannot read through (a zip on the path, a zipped egg) leaves
    the answer to importlib.metadata."""
    for entry in sys.path:
        base = entry or "."
        try:
            names = os.listdir(base)
        except OSError:
            if os.path.isfile(base):
                return True  # a zip archive or a zipped egg: importlib.metadata looks inside
            continue
        folders = [n for n in names if n.endswith((".dist-info", ".egg-info"))]
        folders += [os.path.join(n, "EGG-INFO") for n in names if n.endswith(".egg")]
        if "EGG-INFO" in names:  # the path entry is an egg folder itself
            folders.append("EGG-INFO")
        for folder in folders:
            if folder.endswith("EGG-INFO") and os.path.isfile(os.path.join(base, os.path.dirname(folder))):
                return True  # a zipped egg beside the others
            try:
                with open(os.path.join(base, folder, "entry_points.txt"), "rb") as fh:
                    if b"agtail.adapters" in fh.read():
                        return True
            except OSError:
                continue
    return False


def get_adapter(agent: str) -> Adapter:
    for adapter in all_adapters():
        if adapter.id == agent:
            return adapter
    known = ", ".join(a.id for a in all_adapters())
    raise UsageError(f"unknown agent {agent!r}; known agents: {known}")
