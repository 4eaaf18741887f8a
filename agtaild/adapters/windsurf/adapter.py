"""The Windsurf adapter: ``~/.codeium/<channel>/cascade/<cascade id>.pb``, one session each,
with no text.

The trajectories are encrypted at rest (peer readers measured 7.98–8.00 bits of entropy per
byte and found no readable header; docs/research/new-agents.md): agtail can say that a
conversation exists, its id, size and last change, and nothing of what it says. A read looks at
the first bytes only, to tell an encrypted file (near 8 bits per byte) from one that is merely
undecoded (plain protobuf would be far lower): ``extra.encrypted`` says which. Channels:
``windsurf`` (stable), ``windsurf-next`` (the beta) and the older ``~/.codeium/cascade``.
Not resumable: Windsurf has no command line that opens a conversation.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from agtaild.adapters.base import Adapter, ReadResult, ResumeCommand, Unit
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import open_regular, regular_stat
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.model import Event, Session

#: How much of a trajectory is looked at to judge whether it is encrypted.
SAMPLE_BYTES = 4096
#: Bits per byte above which the sample is taken for encrypted (or compressed) data.
ENCRYPTED_BITS = 7.5
#: The folders under ~/.codeium that hold Cascade trajectories.
CHANNELS = ("windsurf", "windsurf-next")


def bits_per_byte(data: bytes) -> float:
    """The Shannon entropy of ``data`` in bits per byte (0 for no data)."""
    if not data:
        return 0.0
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in Counter(data).values())


class WindsurfAdapter(Adapter):
    id: ClassVar[str] = "windsurf"
    name: ClassVar[str] = "Windsurf (Cascade)"
    env_vars: ClassVar[tuple[str, ...]] = ()
    root_help: ClassVar[str] = "a cascade folder of trajectories (~/.codeium/windsurf/cascade)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "cascade .pb (hand-made: random bytes as encrypted files are)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("windsurf/handmade/.codeium/windsurf/cascade",)
    #: What `agtail doctor` adds to the agent's line.
    doctor_note: ClassVar[str] = (
        "Cascade trajectories are encrypted at rest: sessions are listed by id, size and time, without their text"
    )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        codeium = home / ".codeium"
        return [*(codeium / channel / "cascade" for channel in CHANNELS), codeium / "cascade"]

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for entry in scan.entries(root):
            if entry.name.endswith(".pb") and scan.is_file(entry) and scan.size(entry) > 0:
                yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        st = regular_stat(unit.path)
        with open_regular(unit.path) as fh:
            sample = fh.read(SAMPLE_BYTES)
        bits = bits_per_byte(sample)
        encrypted = bits >= ENCRYPTED_BITS
        cascade_id = Path(unit.path).stem
        changed = from_epoch(st.st_mtime)
        s = Session(
            agent=self.id, id=cascade_id, path=unit.path, started=None, ended=changed, resumable=False
        )
        s.title = f"Cascade conversation {cascade_id[:8]} ({'encrypted' if encrypted else 'not decoded'})"
        s.mtime = st.st_mtime
        s.archived = unit.archived
        s.extra = {"bytes": st.st_size, "encrypted": encrypted, "entropy_bits_per_byte": round(bits, 3)}
        if encrypted:
            text = (f"Windsurf keeps this Cascade conversation ({st.st_size} bytes) encrypted at rest; only the "
                    "running Windsurf app can read it, so agtail lists it without its text.")  # fmt: skip
        else:
            text = (f"This Cascade conversation ({st.st_size} bytes) is not encrypted but is protobuf without a "
                    "published schema; agtail lists it without its text.")  # fmt: skip
        event = Event(
            seq=0, kind="system", ts=changed, subtype="unreadable", text=text, source={"file": "whole"}
        )
        s.accounting.count("events")
        return ReadResult(session=s, events=[event], usage=[], state=None, reset=True)

    def resume(self, session: Session) -> ResumeCommand | None:
        return None
