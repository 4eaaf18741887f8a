"""Which installed Claude Code plugin a hook run or an SDK session came from.

Claude Code keeps installed plugins in ``<claude dir>/plugins/cache/<marketplace>/<plugin>/
<version>/``. Two attributions use that cache, and only that cache (so only plugins installed
on this machine resolve):

* **Hooks.** A plugin declares hooks in ``hooks/hooks.json`` and/or the ``hooks`` entry of its
  ``plugin.json`` (inline, or paths to more hook files). Transcripts record the hook's command
  either as written (``${CLAUDE_PLUGIN_ROOT}/…``) or expanded to the plugin's directory; both
  forms are matched exactly.
* **SDK sessions a plugin started.** A plugin that drives Claude through the SDK sends a
  prompt built from a template in its source. A programmatic session whose first prompt's
  first line equals a literal template line exactly is that plugin's. Looser matching
  (prefixes, fuzzy) attributes people's own prompts to plugins, so there is none.

A command or line claimed by two different plugins is ambiguous and attributes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.kit.files import read_regular, read_regular_text

#: Source files searched for prompt templates.
SOURCE_SUFFIXES = frozenset(
    {".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".py", ".sh", ".bash", ".rb", ".go"}
)
#: Files whose every line is literal text (prompt files, slash-command bodies).
TEXT_SUFFIXES = frozenset({".md", ".txt", ".prompt", ".tmpl"})
MAX_SOURCE_BYTES = 512 * 1024
#: Shorter lines ("Done.", "}") are too common to say anything about where a prompt came from.
MIN_PROMPT_LINE = 12
_SKIP_DIRS = frozenset({"node_modules", ".git", "__pycache__", ".venv", "venv", "dist", "build"})
_PLUGIN_ROOT_VARS = ("${CLAUDE_PLUGIN_ROOT}", "$CLAUDE_PLUGIN_ROOT")


class PluginIndex:
    """Hook commands and prompt template lines of the plugins in one plugin cache."""

    def __init__(self) -> None:
        self.commands: dict[str, str | None] = {}
        self.prompt_lines: dict[str, str | None] = {}
        self.plugins: list[str] = []

    def plugin_for_command(self, command: str | None) -> str | None:
        return self.commands.get(command.strip()) if command else None

    def plugin_for_prompt(self, prompt: str | None) -> str | None:
        """The plugin whose template's first line equals the prompt's first line."""
        if not prompt:
            return None
        line = prompt.lstrip("\n").split("\n", 1)[0].strip()
        return self.prompt_lines.get(line) if len(line) >= MIN_PROMPT_LINE else None

    def _claim(self, table: dict[str, str | None], key: str, plugin: str) -> None:
        if table.get(key, plugin) != plugin:
            table[key] = None  # two plugins: ambiguous
        else:
            table[key] = plugin


def load_plugin_index(plugins_dir: Path) -> PluginIndex | None:
    """Read ``plugins_dir/cache``; None when there is no cache (the common, cheap case)."""
    cache = plugins_dir / "cache"
    if not cache.is_dir():
        return None
    index = PluginIndex()
    for marketplace in _subdirs(cache):
        for plugin in _subdirs(marketplace):
            name = f"{plugin.name}@{marketplace.name}"
            versions = list(_subdirs(plugin))
            if versions:
                index.plugins.append(name)
            for version_dir in versions:
                _index_plugin(index, version_dir, name)
    return index


def _subdirs(path: Path) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
            yield Path(entry.path)


def _index_plugin(index: PluginIndex, root: Path, name: str) -> None:
    for command in _hook_commands(root):
        index._claim(index.commands, command, name)
        expanded = command
        for var in _PLUGIN_ROOT_VARS:
            expanded = expanded.replace(var, str(root))
        index._claim(index.commands, expanded, name)
    for line in _template_lines(root):
        index._claim(index.prompt_lines, line, name)


def _load_json(path: Path) -> Any:
    try:
        return msgspec.json.decode(read_regular(path))
    except (OSError, msgspec.DecodeError):
        return None


def _hook_commands(root: Path) -> set[str]:
    configs: list[Any] = [_load_json(root / "hooks" / "hooks.json")]
    for manifest_path in (root / ".claude-plugin" / "plugin.json", root / "plugin.json"):
        manifest = _load_json(manifest_path)
        if not isinstance(manifest, dict):
            continue
        hooks = manifest.get("hooks")
        refs = hooks if isinstance(hooks, list) else [hooks]
        for ref in refs:
            if isinstance(ref, str):  # a path, relative to the plugin root
                target = (root / ref).resolve()
                if target.is_relative_to(root.resolve()):
                    configs.append(_load_json(target))
            else:
                configs.append(ref)
    commands: set[str] = set()
    for config in configs:
        _collect_commands(config, commands)
    return commands


def _collect_commands(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        command = node.get("command")
        if isinstance(command, str) and node.get("type", "command") == "command" and command.strip():
            out.add(command.strip())
        for value in node.values():
            if isinstance(value, (dict, list)):
                _collect_commands(value, out)
    elif isinstance(node, list):
        for value in node:
            _collect_commands(value, out)


def _template_lines(root: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")]
        for filename in filenames:
            suffix = os.path.splitext(filename)[1].lower()
            if suffix not in SOURCE_SUFFIXES and suffix not in TEXT_SUFFIXES:
                continue
            path = os.path.join(dirpath, filename)
            try:
                if os.path.getsize(path) > MAX_SOURCE_BYTES:
                    continue
                text = read_regular_text(path, errors="replace")
            except OSError:
                continue
            lines = (line.strip() for line in text.splitlines()) if suffix in TEXT_SUFFIXES else literal_lines(text)
            for line in lines:
                if len(line) >= MIN_PROMPT_LINE and " " in line:
                    yield line


def literal_lines(source: str) -> Iterator[str]:
    """The lines of text inside string literals of a source file.

    A small lexer, good enough for JS/TS/Python/shell: single-line literals give their first
    line (up to an escaped ``\\n``), multi-line literals (backticks, triple quotes) give each of
    their lines. Comments end the scan of a line.
    """
    open_delim: str | None = None
    for raw in source.splitlines():
        i = 0
        if open_delim is not None:
            end = _find_close(raw, open_delim, 0)
            if end < 0:
                yield raw.strip()
                continue
            yield raw[:end].strip()
            i = end + len(open_delim)
            open_delim = None
        n = len(raw)
        while i < n:
            ch = raw[i]
            if ch in "\"'`":
                delim = ch * 3 if raw.startswith(ch * 3, i) else ch
                start = i + len(delim)
                end = _find_close(raw, delim, start)
                if end < 0:
                    if delim == "`" or len(delim) == 3:
                        open_delim = delim
                        yield _unescape(raw[start:]).strip()
                    break
                yield _unescape(raw[start:end].split("\\n", 1)[0]).strip()
                i = end + len(delim)
            elif ch == "#" or raw.startswith("//", i):
                break
            else:
                i += 1


def _find_close(text: str, delim: str, start: int) -> int:
    pos = text.find(delim, start)
    while pos >= 0:
        backslashes = 0
        j = pos - 1
        while j >= start and text[j] == "\\":
            backslashes += 1
            j -= 1
        if backslashes % 2 == 0:
            return pos
        pos = text.find(delim, pos + 1)
    return -1


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return text.replace('\\"', '"').replace("\\'", "'").replace("\\`", "`").replace("\\\\", "\\")
