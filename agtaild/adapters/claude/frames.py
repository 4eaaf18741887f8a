"""A bounded, insertion-ordered map kept in the Claude parser state so that an append neither
decodes nor re-encodes the older entries.

The usage book (agtaild.adapters.claude.usage) remembers the last few thousand API responses
of a session. Decoded as one dict, that memory was most of what an append to a long session
cost: on a 48 MB session the state was 800 KB, 720 KB of it the two usage maps, decoded
(≈ 2 ms of CPU and 16,000 objects) and encoded again for every appended line. Here the newest
entries live in ``recent`` (a plain dict, at most ``spill`` entries), and older ones in frames:
each frame is the msgpack of a map of ``spill`` entries, kept as bytes — not decoded when
the state is loaded, written back as they are — with a sorted CRC32 filter of its
keys beside it (4 bytes a key). A key that is not in ``recent`` and whose CRC no filter holds is
certainly not in the map, so looking up a new key (what nearly every line does) decodes
nothing; a frame is decoded only when its filter holds the key's CRC: the key is there (a
replay of an older response, rare), or a false positive (at most ``spill`` in 2³² per frame).

When ``recent`` reaches ``spill`` entries it becomes a frame, and beyond ``frames`` frames the
oldest is dropped: the map holds the newest ``frames × spill`` entries at least and
``(frames + 1) × spill`` at most. An entry updated in place keeps its position. All of this
depends only on the sequence of ``get``/``set`` calls, never on where a read stopped, so the
stored form is the same whether a file was read in one step or in many.
"""

from __future__ import annotations

import bisect
from array import array
from typing import Any

import msgspec

from agtaild.adapters.claude.tree import Hashes, crc

_encode = msgspec.msgpack.encode
_frame_decoder = msgspec.msgpack.Decoder(dict[str, Any])
#: Lookups in one read after which the filters are searched as one (see FramedMap._union).
UNION_AFTER = 64


class Frames(msgspec.Struct, array_like=True):
    """The stored form (part of the parser state)."""

    recent: dict[str, Any] = msgspec.field(default_factory=dict)
    #: Each the msgpack of a ``{key: value}`` map, oldest first. Stored as msgpack bin (its
    #: length first): loading it is a copy, where a ``msgspec.Raw`` would be walked through.
    frames: list[bytes] = msgspec.field(default_factory=list)
    #: Each frame's keys as sorted CRC32s (``array("I")`` bytes).
    filters: list[bytes] = msgspec.field(default_factory=list)


class FramedMap:
    """One per read, working on a :class:`Frames` of the parser state."""

    def __init__(self, stored: Frames, *, spill: int, frames: int) -> None:
        self.stored = stored
        self.spill = spill
        self.max_frames = frames
        #: Frames decoded by this read (index → map) and filters searched (index → Hashes).
        self._decoded: dict[int, dict[str, Any]] = {}
        self._filters: dict[int, Hashes] = {}
        #: A frame or filter that does not decode was met (a damaged state): it is taken as
        #: empty, and the parser asks for a read from the start (``wants_full_read``).
        self.damaged = False
        #: After UNION_AFTER lookups in one read (a long read), all filters merged into one
        #: sorted array, kept up to date: one search a lookup instead of one a frame.
        self._union: array[int] | None = None
        self._lookups = 0
        #: The last lookup (key, frame index): ``set`` right after ``get`` needs it again.
        self._last: tuple[str, int | None] | None = None

    def __len__(self) -> int:
        return len(self.stored.recent) + self.spill * len(self.stored.frames)

    def _find(self, key: str) -> int | None:
        """The index of the frame holding ``key``, if one does."""
        stored = self.stored
        if not stored.frames:
            return None
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        value = crc(key)
        union = self._union
        if union is None:
            self._lookups += 1
            if self._lookups > UNION_AFTER and not self.damaged:
                union = self._union = self._merged()
        if union is not None:
            at = bisect.bisect_left(union, value)
            if at == len(union) or union[at] != value:
                self._last = (key, None)
                return None
        found = None
        for i in range(len(stored.frames) - 1, -1, -1):
            if value in self._filter(i) and key in self._frame(i):
                found = i
                break
        self._last = (key, found)
        return found

    def _filter(self, i: int) -> Hashes:
        hashes = self._filters.get(i)
        if hashes is None:
            try:
                hashes = Hashes(self.stored.filters[i])
            except ValueError:  # not a whole number of 4-byte values
                self.damaged, hashes = True, Hashes(b"")
                self._union = None
            self._filters[i] = hashes
        return hashes

    def _merged(self) -> array[int] | None:
        values = array("I")
        for i in range(len(self.stored.frames)):
            values.extend(self._filter(i).values)
        return None if self.damaged else array("I", sorted(values))

    def _frame(self, i: int) -> dict[str, Any]:
        frame = self._decoded.get(i)
        if frame is None:
            try:
                frame = _frame_decoder.decode(self.stored.frames[i])
            except msgspec.DecodeError:
                self.damaged, frame = True, {}
            self._decoded[i] = frame
        return frame

    def get(self, key: str) -> Any:
        """The value of ``key``, or None when the map does not hold it (values are never None)."""
        recent = self.stored.recent
        if key in recent:
            return recent[key]
        i = self._find(key)
        return self._frame(i)[key] if i is not None else None

    def set(self, key: str, value: Any) -> None:
        """Insert ``key`` as the newest entry, or update it where it is."""
        stored = self.stored
        recent = stored.recent
        if key in recent:
            recent[key] = value
            return
        i = self._find(key)
        if i is not None:
            frame = self._frame(i)
            frame[key] = value
            stored.frames[i] = _encode(frame)
            return
        self._last = None
        recent[key] = value
        if len(recent) >= self.spill:
            self._spill()

    def setdefault(self, key: str, value: Any) -> None:
        """Insert ``key`` unless the map holds it already."""
        if self.get(key) is None:
            self.set(key, value)

    def _spill(self) -> None:
        stored = self.stored
        hashes = array("I", sorted(crc(k) for k in stored.recent))
        stored.frames.append(_encode(stored.recent))
        stored.filters.append(hashes.tobytes())
        stored.recent = {}
        self._last = None
        union = self._union
        if union is not None:
            for value in hashes:
                bisect.insort(union, value)
        if len(stored.frames) > self.max_frames:
            drop = len(stored.frames) - self.max_frames
            if union is not None:
                for i in range(drop):
                    for value in self._filter(i).values:
                        del union[bisect.bisect_left(union, value)]
            del stored.frames[:drop]
            del stored.filters[:drop]
            self._decoded.clear()
            self._filters.clear()
