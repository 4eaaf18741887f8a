"""What kind of thing a tool call does, whatever the agent named its tool: one mapping for all.

Every agent names its tools its own way — a shell is ``Bash``, ``bash``, ``run_shell_command``,
``exec_command``, ``Execute``, ``Shell``, ``run_commands``, ``terminal``, ``execute_command``…
— so a tool table by name splits one kind of work nine ways. :func:`category_of` gives every
call one of :data:`CATEGORIES`, kept beside its own name (agtaild.index.prepare stores it as
``extra.tool_category`` and in ``events.tool_category``; ``stats --by tool-category`` groups
by it). Decided, in order, by:

1. the name, compared without case and punctuation (``run_shell_command`` = ``RunShellCommand``)
   against the table below — the names the agents of agtaild/adapters use;
2. for editor tools that do several things (OpenHands' ``file_editor``, Anthropic's
   ``str_replace_editor``, Cline's ``editor``), the input: ``view`` reads, ``create`` or a
   whole new text writes, a replacement edits;
3. an MCP tool's own name (``mcp__github__search_code`` → ``search_code``), then the words of
   the name (``run_in_sandbox_shell`` → shell, ``fetch_page`` → web);
4. an edit the adapter or the generic path found in the call (``extra.edit``) → edit;
5. else ``other``.
"""

from __future__ import annotations

import re
from typing import Any

CATEGORIES = ("shell", "read", "write", "edit", "search", "web", "subagent", "todo", "other")

_NAMES: dict[str, tuple[str, ...]] = {
    "shell": (
        "bash", "shell", "execcommand", "localshell", "runshellcommand", "execute", "runcommands",
        "runcommand", "terminal", "executecommand", "runterminalcmd", "runinterminal", "executebash",
        "cmd", "powershell", "bashoutput", "killshell", "killbash", "writestdin", "exec", "runinterminaltool",
    ),
    "read": (
        "read", "readfile", "readfiles", "view", "cat", "openfile", "readmanyfiles", "notebookread",
        "fileread", "readtextfile", "viewfile", "getfile",
    ),
    "write": ("write", "writefile", "create", "createfile", "writetofile", "newfile", "filewrite"),
    "edit": (
        "edit", "multiedit", "replace", "applypatch", "patch", "strreplacefile", "replaceinfile",
        "searchreplace", "editfile", "notebookedit", "applydiff", "insertcontent", "smartedit",
        "strreplace", "fileedit", "editnotebook",
    ),
    "search": (
        "grep", "glob", "search", "find", "ls", "listfiles", "searchfiles", "codebasesearch", "filesearch",
        "listdirectory", "listdir", "findfiles", "rg", "searchfilecontent", "grepsearch", "globsearch",
        "semanticsearch", "searchcode", "listcodedefinitionnames",
    ),
    "web": (
        "webfetch", "websearch", "fetch", "googlewebsearch", "browser", "browseraction", "fetchurl",
        "searchweb", "webbrowser", "urlfetch",
    ),
    "subagent": (
        "task", "agent", "spawnagent", "invokeagent", "subagent", "waitagent", "newtask", "dispatchagent",
        "sendinput", "closeagent", "delegate", "runsubagent",
    ),
    "todo": (
        "todowrite", "todoread", "taskcreate", "taskupdate", "tasklist", "taskget", "settodolist",
        "checklist", "tasktracker", "updateplan", "writetodos", "managetodolist", "todo", "todolist",
    ),
    # Names the rules below would misread: asking the person, switching modes, finishing.
    "other": (
        "exitplanmode", "enterplanmode", "askuserquestion", "askfollowupquestion", "attemptcompletion",
        "completetask", "skill", "toolsearch", "imagegeneration", "viewimage", "think",
    ),
}
_BY_NAME = {name: category for category, names in _NAMES.items() for name in names}
#: Tools that view, create or edit a file as their input says.
_EDITORS = frozenset({"editor", "fileeditor", "strreplaceeditor", "strreplacebasededittool", "texteditor"})
_EDITOR_COMMANDS = {"view": "read", "create": "write", "str_replace": "edit", "insert": "edit",
                    "undo_edit": "edit", "strreplace": "edit"}  # fmt: skip
#: The words of a name that say what it does (rule 3), in the order they are tried.
_WORDS = (
    ("web", ("web", "browser", "url", "http", "fetch")),
    ("shell", ("bash", "shell", "terminal", "powershell", "command", "commands")),
    ("todo", ("todo", "todos", "checklist", "plan")),
    ("subagent", ("agent", "subagent", "delegate")),
    ("search", ("grep", "glob", "search", "find")),
    ("edit", ("edit", "replace", "patch", "diff")),
    ("write", ("write", "create")),
    ("read", ("read", "view", "cat", "open")),
)
_SPLIT = re.compile(r"[^a-z0-9]+")


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)  # camelCase → camel Case
    return [w for w in _SPLIT.split(spaced.lower()) if w]


def _editor(inp: Any) -> str | None:
    if not isinstance(inp, dict):
        return None
    command = inp.get("command")
    if isinstance(command, str) and command in _EDITOR_COMMANDS:
        return _EDITOR_COMMANDS[command]
    if any(isinstance(inp.get(k), str) for k in ("old_str", "old_string", "old_text", "oldText")):
        return "edit"
    if any(isinstance(inp.get(k), str) for k in ("new_text", "file_text", "content", "newText")):
        return "write"
    return None


def category_of(tool: Any, inp: Any = None, *, has_edit: bool = False) -> str:
    """The category of a call of ``tool`` with input ``inp`` (see the module docstring)."""
    name = tool if isinstance(tool, str) else ""
    key = _key(name)
    found = _BY_NAME.get(key)
    if found is not None:
        return found
    if key in _EDITORS:
        return _editor(inp) or ("edit" if has_edit else "other")
    if name.startswith("mcp__") and name.count("__") >= 2:  # mcp__<server>__<tool>
        own = name.rsplit("__", 1)[1]
        found = _BY_NAME.get(_key(own))
        if found is not None:
            return found
        name = own
    words = set(_words(name))
    for category, hints in _WORDS:
        if words.intersection(hints):
            return category
    return "edit" if has_edit else "other"
