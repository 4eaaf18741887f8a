"""Codebuff (formerly Manicode): one folder per chat under ``~/.config/manicode/projects``.

``<config dir>/projects/<project basename>/chats/<chat id>/`` holds ``chat-messages.json`` (the
CLI's ChatMessage list, rewritten whole) and ``run-state.json`` (the SDK's RunState). Modules:
adapter (roots, units, session, resume), chat (messages and their blocks → events and usage),
run_state (the working directory, ending and credits the run state records).
"""

from agtaild.adapters.codebuff.adapter import CodebuffAdapter

__all__ = ["CodebuffAdapter"]
