"""A ChatGPT export message's ``content`` → the text it shows.

``content.content_type`` says the shape: ``text`` and ``multimodal_text`` keep ``parts``
(strings, or objects such as ``image_asset_pointer`` and ``audio_transcription``); ``code``,
``execution_output``, ``system_error`` and ``tether_browsing_display`` keep ``text`` (or
``result``); ``tether_quote`` a quoted page (``title``, ``url``, ``text``); ``thoughts`` a
list of ``{summary, content}``; ``reasoning_recap`` a line ("Thought for 12 seconds");
``user_editable_context`` the custom instructions (``user_profile``, ``user_instructions``);
``model_editable_context`` the memory (``model_set_context``).
"""

from __future__ import annotations

from typing import Any


def _strings(*values: Any) -> str:
    return "\n\n".join(v for v in values if isinstance(v, str) and v.strip())


def part_text(part: Any) -> str:
    """One element of ``parts``: a string as it is, an image or file as a placeholder."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("content_type")
    if kind == "audio_transcription":
        text = part.get("text")
        return text if isinstance(text, str) else ""
    if isinstance(part.get("text"), str):
        return str(part["text"])
    if kind == "image_asset_pointer":
        return "[image]"
    if isinstance(kind, str) and kind:
        return f"[{kind}]"
    return ""


def content_text(content: Any) -> str:
    """The text of a message's content ("" when it holds none)."""
    if not isinstance(content, dict):
        return ""
    kind = content.get("content_type")
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(t for t in (part_text(p) for p in parts) if t)
    if kind == "thoughts":
        thoughts = content.get("thoughts")
        if not isinstance(thoughts, list):
            return ""
        return "\n\n".join(
            _strings(t.get("summary"), t.get("content")) for t in thoughts if isinstance(t, dict)
        ).strip()
    if kind == "tether_quote":
        head = " ".join(v for v in (content.get("title"), content.get("url")) if isinstance(v, str) and v)
        return _strings(head, content.get("text"))
    if kind == "user_editable_context":
        return _strings(content.get("user_profile"), content.get("user_instructions"))
    if kind == "model_editable_context":
        return _strings(content.get("model_set_context"))
    return _strings(content.get("text"), content.get("result"))
