"""CodeBuddy Code (Tencent): one JSONL file per session under ``~/.codebuddy/projects``.

``$CODEBUDDY_CONFIG_DIR`` (default ``~/.codebuddy``) holds ``projects/<cwd slug>/<session
id>.jsonl``, one record per line in the OpenAI Agents SDK's item shapes (``message``,
``reasoning``, ``function_call``, ``function_call_result``), and a subagent's transcript in
``<session id>/subagents/agent-<id>.jsonl``. Modules: adapter (roots, units, endings, resume),
parser (lines → events and usage).
"""

from agtaild.adapters.codebuddy.adapter import CodeBuddyAdapter

__all__ = ["CodeBuddyAdapter"]
