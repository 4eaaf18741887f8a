"""The Gemini Apps adapter: one session of Takeout activity per file of the import store.

A stored session is a JSON array of Takeout entries, oldest first, each exactly as the
export has it: ``{header: "Gemini Apps", title, time, products, activityControls,
safeHtmlItem: [{html}], subtitles: [{name, url?}], attachedFiles?, imageFile?}``. Each entry
is one record:

* ``title`` "Prompted …" → ``text`` (the prompt, "Prompted " cut off); each of
  ``safeHtmlItem`` → ``text`` by the assistant (the HTML as plain text,
  agtaild.adapters.gemini_apps.html_text). Two or more answers are regenerated drafts: they
  are marked as the alternatives of a fork at the prompt, the last one active;
* any other title ("Created …", "Used …", "Selected preferred draft", "Gave feedback: …") →
  ``system`` (``subtype: activity``);
* ``subtitles`` (the Gem used, "Attached 1 file.", the file names) and ``attachedFiles`` /
  ``imageFile`` → ``extra`` of the prompt.

Takeout records no model and no token usage. Never resumable.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit
from agtaild.adapters.gemini_apps.groups import entry_keys, group_entries
from agtaild.adapters.gemini_apps.html_text import html_to_text
from agtaild.adapters.kit.export_docs import conversation_units, head_of
from agtaild.adapters.kit.export_zip import ExportError
from agtaild.adapters.kit.jsondoc import Category, JsonDocAdapter, RecordBook
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import Event, Session

MARKER = b'"header"'
PROMPTED = "Prompted "
#: The activity files of the Gemini Apps folder (older Takeouts wrote "MyActivity.json").
ACTIVITY_NAMES = ("My Activity.json", "MyActivity.json")


def _is_activity(path: Any) -> bool:
    return path.name in ACTIVITY_NAMES and any("gemini" in part.lower() for part in path.parts[:-1])


class GeminiAppsAdapter(JsonDocAdapter):
    id: ClassVar[str] = "gemini-apps"
    name: ClassVar[str] = "Gemini Apps (Google Takeout)"
    root_help: ClassVar[str] = "a folder of sessions `agtail import gemini` grouped from a Takeout"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "Google Takeout My Activity JSON (hand-made from the documented schema)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("gemini-apps/synthetic-agtail/store",)
    export_service: ClassVar[str | None] = "gemini"

    def discover(self, root: Path) -> Iterator[Unit]:
        for unit in conversation_units(self.id, root, MARKER):
            if head_of(unit.path, 64).lstrip()[:1] == b"[":
                yield unit

    def split_export(self, export: Any) -> list[tuple[str, Any]]:
        names = export.find(_is_activity)
        if not names:
            html = export.find(lambda p: p.name in ("My Activity.html", "MyActivity.html"))
            hint = (
                " (it holds the HTML form: choose JSON as the format of My Activity in Takeout)"
                if html
                else ""
            )
            raise ExportError(
                f"{export.path} holds no Gemini Apps My Activity.json: not a Takeout of Gemini Apps{hint}"
            )
        entries: list[Any] = []
        for name in names:
            doc = export.read_json(name)
            if not isinstance(doc, list):
                raise ExportError(f"{export.path}: {name} is not an array of activity entries")
            entries.extend(e for e in doc if isinstance(e, dict))
        return [(gid, group) for gid, group in group_entries(entries)]

    def superseded(self, stored: Any, conversations: list[tuple[str, Any]]) -> bool:
        keys = entry_keys(stored)
        if not keys:
            return False
        now: set[tuple[str, str]] = set()
        for _, group in conversations:
            now |= entry_keys(group)
        return keys <= now

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        if not isinstance(doc, list):
            book.bad(1)
            return
        for i, entry in enumerate(doc):
            if not isinstance(entry, dict) or not isinstance(entry.get("title"), str):
                book.bad(i + 1)
                continue
            book.count(self._entry(entry, i, book))

    def _entry(self, entry: dict[str, Any], i: int, book: RecordBook) -> Category:
        s = book.session
        ts = norm_iso(entry.get("time"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        title: str = entry["title"]
        base: dict[str, Any] = {"ts": ts, "source": {"entry": i}}
        if not title.startswith(PROMPTED):
            book.emit(Event(seq=-1, kind="system", role="system", text=title, subtype="activity", **base))
            return "events"
        prompt = title[len(PROMPTED) :]
        prompt_id = f"{i}"
        extra: dict[str, Any] = {}
        subtitles = [
            x.get("name")
            for x in entry.get("subtitles") or ()
            if isinstance(x, dict) and isinstance(x.get("name"), str)
        ]
        if subtitles:
            extra["subtitles"] = subtitles
        for key in ("attachedFiles", "imageFile"):
            if entry.get(key):
                extra[key] = entry[key]
        book.emit(Event(seq=-1, kind="text", role="user", text=prompt, uuid=prompt_id, extra=extra, **base))
        s.messages += 1
        if s.first_prompt is None and prompt.strip():
            s.first_prompt = prompt
        items = entry.get("safeHtmlItem")
        items = items if isinstance(items, list) else []
        answers: list[str] = [
            a["html"] for a in items if isinstance(a, dict) and isinstance(a.get("html"), str)
        ]
        for n, html in enumerate(answers, 1):
            marks: dict[str, Any] = {}
            if len(answers) > 1:
                marks = {"branch": "active" if n == len(answers) else "inactive", "fork": prompt_id, "alt": n,
                         "alts": len(answers)}  # fmt: skip
            book.emit(Event(seq=-1, kind="text", role="assistant", text=html_to_text(html), uuid=f"{i}.{n}",
                            parent_uuid=prompt_id, extra=marks, **base))  # fmt: skip
        if answers:
            s.messages += 1
        if len(answers) > 1:
            forks = s.extra.setdefault("forks", [])
            forks.append({"fork": prompt_id, "alts": len(answers), "active": len(answers), "on_active_chain": True,
                          "heads": [f"{i}.{n}" for n in range(1, len(answers) + 1)]})  # fmt: skip
        return "events"

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        s = book.session
        s.resumable = False
        s.title = title_from_prompt(s.first_prompt)
        return s

    def resume(self, session: Session) -> ResumeCommand | None:
        return None  # Takeout activity has no conversation to go back to
