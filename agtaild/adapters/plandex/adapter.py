"""The Plandex adapter: a self-hosted server's plan folders, one unit per plan.

The Plandex server (``plandex-ai/plandex`` 2.2.1, commit 9017ba3, ``app/server/db/fs.go``)
keeps its files in ``$PLANDEX_BASE_DIR``, else ``~/plandex-server`` when it runs with
``GOENV=development``, else ``/plandex-server`` (the path inside its Docker image, usually a
Docker volume the host does not see). Plans sit at ``orgs/<org id>/plans/<plan id>/``; each
plan folder is also a git repository whose branches are the plan's branches (the files read
are the checked-out branch's). The ``plandex`` CLI on a laptop keeps none of this: with the
cloud service, or a server whose folder is not on this machine, there is nothing to read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import NotRegularFile, open_regular
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.adapters.kit.session_dir import BadRecord, SessionDir, SessionDirAdapter, json_bytes
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.adapters.plandex.plan import PlanReader
from agtaild.errors import AgtailError
from agtaild.model import Session

#: The plan's folders of JSON files, in the order they are read.
FOLDERS = ("conversation", "descriptions", "results")


class PlandexAdapter(SessionDirAdapter):
    id: ClassVar[str] = "plandex"
    name: ClassVar[str] = "Plandex (self-hosted server)"
    env_vars: ClassVar[tuple[str, ...]] = ("PLANDEX_BASE_DIR",)
    root_help: ClassVar[str] = (
        "a Plandex server's base dir (holding orgs/), an org's folder, or one plan's folder"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "plandex server 2.2.1 plan folders (hand-made from its source)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("plandex/synthetic-agtail",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [env_path(env, "PLANDEX_BASE_DIR") or home / "plandex-server"]

    def discover(self, root: Path) -> Iterator[Unit]:
        for plan in self._plans(root):
            files = _plan_files(plan)
            if any(os.sep + "conversation" + os.sep in f for f in files):
                yield Unit(agent=self.id, path=str(plan), files=files, root=str(root))

    @staticmethod
    def _plans(root: Path) -> list[Path]:
        if (root / "conversation").is_dir():
            return [root]  # one plan's folder
        if (root / "orgs").is_dir():
            orgs = [Path(e.path) for e in scan.entries(root / "orgs") if scan.is_dir(e)]
        elif (root / "plans").is_dir():
            orgs = [root]  # one org's folder
        else:
            return []
        return [
            Path(e.path)
            for org in orgs
            if (org / "plans").is_dir()
            for e in scan.entries(org / "plans")
            if scan.is_dir(e)
        ]

    def native_files(self, unit: Unit) -> list[str]:
        """The plan's JSON files (its ``.git`` history and ``context/`` files are not copied)."""
        return _plan_files(Path(unit.path))

    def snapshot(self, unit: Unit, *, now: float | None = None) -> SessionDir:
        """Every JSON file of the plan, each read with one open (a regular file only: anything
        else in its place is a bad record, never followed). The plan's time is its folders'
        (a file added or removed changes them) and, for a file that does not decode, that
        file's own: only such a file may be half written, and a file per record makes a stat
        per file the read's main cost."""
        folder = unit.path
        docs: dict[str, dict[str, Any]] = {name: {} for name in FOLDERS}
        newest = 0.0
        for sub in FOLDERS:
            base = os.path.join(folder, sub)
            if not os.path.isdir(base):
                continue
            names = [e.name for e in scan.entries(base) if e.name.endswith(".json")]
            found = docs[sub]
            for name in names:
                path = os.path.join(base, name)
                try:
                    with open_regular(path) as fh:
                        data = fh.read()
                except FileNotFoundError:
                    continue  # removed since it was listed
                except NotRegularFile:
                    found[name] = BadRecord(b"", torn=False)
                    continue
                except OSError as exc:
                    raise AgtailError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
                found[name] = doc = json_bytes(data) if data.strip() else BadRecord(data, torn=True)
                if isinstance(doc, BadRecord):
                    newest = max(newest, _mtime(path))
        for path in (folder, *(os.path.join(folder, sub) for sub in FOLDERS)):
            newest = max(newest, _mtime(path))
        now = time.time() if now is None else now
        return _Plan(
            path=Path(folder), files={}, mtime=newest, settled=now - newest >= SETTLE_SECONDS, docs=docs
        )

    def new_session(self, unit: Unit) -> Session:
        folder = Path(unit.path)
        s = Session(agent=self.id, id=folder.name, path=unit.path)
        if folder.parent.name == "plans":
            s.extra["org_id"] = folder.parent.parent.name
        return s

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        docs = sdir.docs if isinstance(sdir, _Plan) else {name: {} for name in FOLDERS}
        torn = [
            f"{sub}/{name}"
            for sub, found in docs.items()
            for name, doc in found.items()
            if isinstance(doc, BadRecord)
        ]
        if torn and not sdir.settled:
            # Plandex writes each file in place (os.WriteFile): one may be half written now.
            raise AgtailError(f"{unit.path}: {torn[0]} is being written; it will be read again")
        reader = PlanReader(book)
        reader.read(docs["conversation"], docs["descriptions"], docs["results"])
        s = book.session
        s.title = title_from_prompt(s.first_prompt)
        s.resumable = False
        last: dict[str, Any] = reader.last or {}
        raw_flags = last.get("flags")
        flags: dict[str, Any] = raw_flags if isinstance(raw_flags, dict) else {}
        if flags.get("hasError") is True:
            s.ending = "error"
        elif last.get("stopped") is True:
            s.ending = "interrupted"
        s.usage = book.total_usage()
        s.extra["tokens"] = sum(e.extra.get("tokens", 0) for e in book.events if e.kind == "text")


class _Plan(SessionDir):
    #: folder → file name → decoded document (or BadRecord)
    docs: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _plan_files(plan: Path) -> list[str]:
    out: list[str] = []
    for sub in FOLDERS:
        folder = plan / sub
        if not folder.is_dir():
            continue
        for entry in scan.entries(folder):
            if entry.name.endswith(".json") and scan.is_file(entry):
                out.append(entry.path)
    return sorted(out)
