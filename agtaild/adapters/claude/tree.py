"""The saved uuid tree of a forked Claude Code session, kept so that an append costs the append.

A forked session's tree (every record: uuid, parent, typed-prompt flag; every event: the
record it came from) is needed only when the marks of stored events may change: a new
rewind, or a leaf that moves to another branch (agtaild.adapters.claude.branches). Most
appends just continue the active branch, so the tree is kept in a form that an append neither
decodes nor re-encodes:

* ``tree``: a log of frames, each for the records and events of one read, 4-byte length
  first. A read appends a frame (bytes concatenation); a recompute decodes them all and
  writes one frame back. A frame is the msgpack of ``[uuids, odd, parents, heads, owners]``,
  by column (a frame of tuples spent 7 of its 23 bytes a node on headers):

  - ``uuids``: 16 bytes a node, a canonical UUID as its bytes (half the size of its text);
    ``odd``: ``[position, uuid]`` of the nodes whose uuid is not one (their 16 bytes are 0);
  - ``parents``: a node's parent as ``node index - parent index`` when it is a node (most
    are 1: the record before; a parent later in the same frame gives a negative one), else
    its uuid, or nil;
  - ``heads``: the positions of the typed prompts in the frame;
  - ``owners``: ``[seq, node index, …]`` of the events (those with no record are left out),
    each pair as its difference from the previous pair (mostly ``1, 0`` or ``1, 1``).
* ``hashes``: the sorted CRC32s of the node uuids (4 bytes each): a uuid whose CRC is absent
  is certainly not a node; one that is present may be (then the tree is decoded to know).
* ``runs``: the marks given out, as ``[first seq, mark or nil]`` runs over every seq.

:func:`tree_marks` computes every mark of a whole tree (the recompute).
"""

from __future__ import annotations

import bisect
import zlib
from array import array
from typing import Any

import msgspec

_encoder = msgspec.msgpack.Encoder()
_frame_decoder = msgspec.msgpack.Decoder(
    tuple[bytes, list[tuple[int, str]], list[int | str | None], list[int], list[int]]
)
_NO_UUID = bytes(16)


def pack(uuid: str) -> bytes | str:
    """A canonical (lowercase) UUID as its 16 bytes; any other id as it is."""
    if len(uuid) == 36:
        try:
            raw = bytes.fromhex(uuid.replace("-", "", 4))
        except ValueError:
            return uuid
        if len(raw) == 16 and unpack(raw) == uuid:
            return raw
    return uuid


def unpack(value: bytes | str) -> str:
    if isinstance(value, str):
        return value
    h = value.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def crc(uuid: str) -> int:
    return zlib.crc32(uuid.encode("utf-8", "surrogatepass"))


class Hashes:
    """The sorted CRC32 set of the node uuids, as stored (bytes) and searched (array)."""

    def __init__(self, raw: bytes) -> None:
        self.values = array("I")
        self.values.frombytes(raw)

    def __contains__(self, value: int) -> bool:
        values = self.values
        i = bisect.bisect_left(values, value)
        return i < len(values) and values[i] == value

    def add(self, value: int) -> None:
        bisect.insort(self.values, value)

    def tobytes(self) -> bytes:
        return self.values.tobytes()

    @classmethod
    def of(cls, uuids: list[str]) -> Hashes:
        out = cls(b"")
        out.values = array("I", sorted(crc(u) for u in uuids))
        return out


def frame(nodes: list[tuple[str, Any, bool]], owners: list[int], base: int) -> bytes:
    """One frame of ``nodes`` (uuid, parent as a node index or a uuid or None, head), the
    first of them node ``base``, and ``owners`` (``[seq, node index, …]``)."""
    uuids = bytearray()
    odd: list[tuple[int, str]] = []
    parents: list[int | str | None] = []
    heads: list[int] = []
    for i, (uuid, parent, head) in enumerate(nodes):
        packed = pack(uuid)
        if isinstance(packed, bytes):
            uuids += packed
        else:
            uuids += _NO_UUID
            odd.append((i, packed))
        parents.append(base + i - parent if type(parent) is int else parent)
        if head:
            heads.append(i)
    deltas: list[int] = []
    seq = node = 0
    for k in range(0, len(owners), 2):
        deltas += (owners[k] - seq, owners[k + 1] - node)
        seq, node = owners[k], owners[k + 1]
    body = _encoder.encode((bytes(uuids), odd, parents, heads, deltas))
    return len(body).to_bytes(4, "little") + body


class Tree:
    """A decoded tree: nodes in file order (uuid, parent uuid, head) and seq → node index."""

    def __init__(self) -> None:
        self.uuids: list[str] = []
        self.parents: list[str | None] = []
        self.heads: list[bool] = []
        self.index: dict[str, int] = {}
        self.owner: dict[int, int] = {}

    @classmethod
    def decode(cls, raw: bytes) -> Tree:
        """The tree of the saved frames; raises msgspec.DecodeError or ValueError for bytes
        that are not such frames."""
        tree = cls()
        view = memoryview(raw)
        pos = 0
        while pos + 4 <= len(view):
            size = int.from_bytes(view[pos : pos + 4], "little")
            uuids, odd, parents, heads, owners = _frame_decoder.decode(view[pos + 4 : pos + 4 + size])
            pos += 4 + size
            base = len(tree.uuids)
            strange = dict(odd)
            count = len(parents)
            if len(uuids) != 16 * count:
                raise ValueError("a tree frame's columns disagree")
            is_head = [False] * count
            for i in heads:
                is_head[i] = True
            for i in range(count):  # every uuid first: a parent may come later in the frame
                uuid = strange.get(i)
                tree.add(uuid if uuid is not None else unpack(uuids[16 * i : 16 * i + 16]), None, is_head[i])
            for i, parent in enumerate(parents):
                if isinstance(parent, int):
                    at = base + i - parent
                    if not 0 <= at < len(tree.uuids):
                        raise ValueError("a tree frame names a parent outside the tree")
                    parent = tree.uuids[at]
                tree.parents[base + i] = parent
            seq = node = 0
            for k in range(0, len(owners), 2):
                seq += owners[k]
                node += owners[k + 1]
                tree.owner[seq] = node
        return tree

    def add(self, uuid: str, parent: str | None, head: bool) -> int:
        i = len(self.uuids)
        self.uuids.append(uuid)
        self.parents.append(parent)
        self.heads.append(head)
        self.index[uuid] = i
        return i

    def encode(self) -> bytes:
        """The whole tree as one frame."""
        index = self.index
        nodes = [
            (u, index.get(p, p) if p is not None else None, h)
            for u, p, h in zip(self.uuids, self.parents, self.heads, strict=True)
        ]
        owners = [x for seq in sorted(self.owner) for x in (seq, self.owner[seq])]
        return frame(nodes, owners, 0)


class Runs:
    """seq → mark, as ``[[first seq, mark], …]`` runs (adjacent seqs mostly share a mark)."""

    def __init__(self, runs: list[list[Any]]) -> None:
        self.runs = runs
        self._starts: list[int] | None = None

    def get(self, seq: int) -> list[Any] | None:
        if self._starts is None:
            self._starts = [r[0] for r in self.runs]
        i = bisect.bisect_right(self._starts, seq) - 1
        return self.runs[i][1] if i >= 0 else None

    def expand(self, end: int) -> list[list[Any] | None]:
        """The mark of every seq below ``end``."""
        out: list[list[Any] | None] = []
        runs = self.runs
        for i, (start, mark) in enumerate(runs):
            if start >= end:
                break
            out.extend([None] * (start - len(out)))
            stop = runs[i + 1][0] if i + 1 < len(runs) else end
            out.extend([mark] * (min(stop, end) - start))
        return out + [None] * (end - len(out))

    def extend(self, start: int, marks: list[list[Any] | None]) -> None:
        """Add the marks of seqs ``start``, ``start + 1``, … (merging equal neighbours)."""
        runs = self.runs
        for i, mark in enumerate(marks):
            if not runs or runs[-1][1] != mark:
                runs.append([start + i, mark])
        self._starts = None

    @classmethod
    def of(cls, marks: list[list[Any] | None]) -> Runs:
        out = cls([])
        out.extend(0, marks)
        return out


#: The fork id of the session start: rewinding the first prompt writes a second parentless
#: prompt, an alternative of the start.
START = "start"
#: How many forks the session summary lists (``session.extra["forks"]``).
MAX_LISTED_FORKS = 200

Mark = tuple[str, str, int, int]  # (branch, fork uuid, alt, alts)


def tree_marks(
    tree: Tree, leaf: str | None, loose_roots: bool
) -> tuple[list[Mark | None], list[dict[str, Any]], set[str]]:
    """Every node's mark (by index), the fork list, and the pivots (alternatives and forks),
    from the whole tree (agtaild.adapters.claude.branches says what the marks mean)."""
    uuids, parents, heads, index = tree.uuids, tree.parents, tree.heads, tree.index
    children: dict[str, list[str]] = {}
    for uuid, parent, head in zip(uuids, parents, heads, strict=True):
        if head and parent is not None:
            children.setdefault(parent, []).append(uuid)
        elif head and not loose_roots:
            children.setdefault(START, []).append(uuid)
    forks = {p: hs for p, hs in children.items() if len(hs) > 1}
    active: set[str] = set()
    cur = leaf
    while cur is not None and cur not in active:
        active.add(cur)
        at = index.get(cur)
        cur = parents[at] if at is not None else None
    listed: list[dict[str, Any]] = []
    for fork, hs in forks.items():
        on = [i for i, h in enumerate(hs) if h in active]
        if len(listed) < MAX_LISTED_FORKS:
            listed.append(
                {"fork": fork, "alts": len(hs), "active": on[0] + 1 if on else None,
                 "on_active_chain": fork in active or (fork == START and bool(on)), "heads": hs}
            )  # fmt: skip
    alt_of = {h: (fork, i + 1, len(hs)) for fork, hs in forks.items() for i, h in enumerate(hs)}
    marks: dict[str, Mark | None] = {}
    for uuid in uuids:
        if uuid in marks:
            continue
        # Walk up to the first node already resolved (or the root), then resolve downwards.
        path: list[str] = []
        cur2: str | None = uuid
        seen: set[str] = set()
        while cur2 is not None and cur2 not in marks and cur2 in index and cur2 not in seen:
            seen.add(cur2)
            path.append(cur2)
            cur2 = parents[index[cur2]]
        above = marks.get(cur2) if cur2 is not None else None
        for n in reversed(path):
            spot = alt_of.get(n)
            if spot is not None and (above is None or above[0] == "active"):
                above = ("active" if n in active else "inactive", *spot)
            marks[n] = above
    return [marks.get(u) for u in uuids], listed, set(alt_of) | set(forks)
