"""Google Antigravity: the CLI's step logs and the IDE's brain artifacts under ``~/.gemini``.

``~/.gemini/antigravity-cli/brain/<conversation id>/.system_generated/logs/transcript_full.jsonl``
(or the shorter ``transcript.jsonl``) is the CLI's step log, one step per line; the IDE keeps
``~/.gemini/antigravity/brain/<conversation id>/*.md`` artifacts (task, plan, walkthrough) while
the conversation itself (``conversations/<id>.pb``) is encrypted. Modules: adapter (roots,
units, resume), steps (step lines → events), artifacts (a brain folder's Markdown → events).
"""

from agtaild.adapters.antigravity.adapter import AntigravityAdapter

__all__ = ["AntigravityAdapter"]
