"""Conversation branches of a Claude Code session (rewinds and edited prompts).

Every Claude Code record carries ``uuid`` and ``parentUuid``. Rewinding (Esc Esc, ``/rewind``)
or editing an earlier prompt appends a new ``user`` record whose parent is the record *before*
the prompt it replaces, so the old continuation stays in the file: that parent now has two
prompt children. Claude Code itself shows the chain from the newest record back to the root.

Terms used here:

* a **head** is a ``user`` record a person (or a command) typed: not a tool result, not a
  sidechain. Parallel tool results, progress lines and attachments also share parents, but
  they never start a branch, so only heads count.
* a **fork** is a record with two or more head children; its **alternatives** are those heads
  in file order (alt 1, 2, …). Parentless heads are alternatives of the session start
  (fork id ``start``: the first prompt was rewound), unless the file has other parentless
  records (synthetic files without a tree).
* the **active chain** runs from the leaf (the newest user/assistant record) back through
  ``parentUuid`` (``logicalParentUuid`` across a compaction boundary) to the root.

Events below a fork get ``extra`` marks: ``branch`` (``active``/``inactive``), ``fork`` (the
fork's uuid where this line leaves the active chain — for an active event, the nearest fork
above it), ``alt`` (1-based) and ``alts``. Sessions without a fork carry no marks at all.

Incremental reads: before a session forks, the state keeps only the parents of prompts (to
notice the first fork), and the read that finds a first fork in an appended part asks for one
read from the start (the earlier records' tree was not kept). Once it forked, the state keeps
the tree in a form an append neither decodes nor re-encodes (agtaild.adapters.claude.tree),
with the marks of the last records and of the leaf. An append that only continues the tree —
no new alternative, and the new leaf reached from the old one through new or recent records
that are neither alternatives nor forks — changes no stored mark: its records take their
parent's mark and its frame is appended. Anything else (a rewind, a leaf that moves to another
branch, a record the recent marks do not cover) decodes the tree and recomputes every mark,
then re-marks the stored events whose mark changed through ``ReadResult.marks`` (seq → extra
keys). Both ways give the marks a read from the start gives.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.claude.tree import START, Hashes, Mark, Runs, Tree, crc, frame, tree_marks
from agtaild.model import Event

#: The ``extra`` keys this module owns.
MARK_KEYS = ("branch", "fork", "alt", "alts")


#: The state's layout of the saved tree; a forked state of an older layout is read again from
#: the start (once) to rebuild it. (3: frames by column.)
VERSION = 3
#: How many of the last records keep their mark in the state (an append's parents are there).
RECENT = 256


class BranchState(msgspec.Struct):
    """Kept in the parser state between reads."""

    leaf: str | None = None
    #: Records with a head child; a second head child makes a fork.
    head_parents: set[str] = msgspec.field(default_factory=set)
    #: A parentless user/assistant record that is not a head: the file has no real tree
    #: (synthetic or very old files), so parentless heads are not alternatives of the start.
    loose_roots: bool = False
    #: Whether some record has two head children (until then nothing is marked).
    forked: bool = False
    version: int = 0
    # -- once forked (agtaild.adapters.claude.tree) --
    tree: bytes = b""
    count: int = 0
    hashes: bytes = b""
    #: Every seq below this has its mark in ``runs``.
    seqs: int = 0
    runs: list[list[Any]] = msgspec.field(default_factory=list)
    #: uuid → [parent, mark, node index] of the last RECENT records, and of the leaf.
    recent: dict[str, list[Any]] = msgspec.field(default_factory=dict)
    #: Parents named by records that are not records of the file (yet).
    dangling: set[str] = msgspec.field(default_factory=set)
    #: The alternatives (heads of forks) and the forks: where the leaf's chain may not pass
    #: for an append to keep every stored mark.
    pivots: set[str] = msgspec.field(default_factory=set)
    #: The session summary's fork list (``session.extra["forks"]``).
    forks: list[dict[str, Any]] = msgspec.field(default_factory=list)


def is_head(obj: dict[str, Any]) -> bool:
    """A user record that starts a turn: typed text or a command, not a tool result."""
    if obj.get("type") != "user" or obj.get("isSidechain") is True:
        return False
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, list) and content:
        return not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return True


class BranchTracker:
    """One per read, working on the :class:`BranchState` of the parser state."""

    def __init__(self, state: BranchState, *, from_start: bool) -> None:
        self.st = state
        self.from_start = from_start
        #: A first fork found by a read that continued a saved state without a tree (or with
        #: a tree of an older layout): the file must be read again from the start.
        self.need_full_read = state.forked and state.version != VERSION and not from_start
        self.current: str | None = None
        self.patches: dict[int, dict[str, Any]] = {}
        self.forks: list[dict[str, Any]] = state.forks
        #: This read's records: uuid → (parent, head), in file order.
        self.new: dict[str, tuple[str | None, bool]] = {}
        #: This read's seqs (those not saved yet): seq → the record it came from (None: none).
        self.owner: dict[int, str | None] = {}
        #: The saved tree, once something needed it decoded.
        self.old: Tree | None = None
        self._hashes: Hashes | None = None
        #: A new alternative or loose root: every mark must be recomputed.
        self.restructured = False
        self.old_leaf = state.leaf

    # -- the saved tree -----------------------------------------------------------------------
    def _saved(self) -> bool:
        return self.st.forked and self.st.count > 0 and not self.need_full_read

    def _load(self) -> Tree:
        if self.old is None:
            self.old = Tree()
            if self._saved():
                try:
                    self.old = Tree.decode(self.st.tree)
                except (msgspec.DecodeError, ValueError, IndexError):
                    self.need_full_read = True  # a damaged tree: read the file from the start
        return self.old

    def _is_old(self, uuid: str) -> bool:
        """Is ``uuid`` a record saved by an earlier read?"""
        if not self._saved():
            return False
        if uuid in self.st.recent:  # a record written again (a duplicate line): no decode
            return True
        if self.old is None:
            if self._hashes is None:
                self._hashes = Hashes(self.st.hashes)
            if crc(uuid) not in self._hashes:
                return False
        return uuid in self._load().index

    def _known(self, uuid: str) -> bool:
        return uuid in self.new or self._is_old(uuid)

    # -- reading ------------------------------------------------------------------------------
    def see(self, obj: dict[str, Any]) -> None:
        """Place one record in the tree (called for every record, before its events)."""
        uuid = obj.get("uuid")
        if type(uuid) is not str:
            self.current = None
            return
        self.current = uuid
        st = self.st
        kind = obj.get("type")
        sidechain = obj.get("isSidechain") is True
        if not self._known(uuid):
            parent = obj.get("parentUuid")
            if parent is None:
                parent = obj.get("logicalParentUuid")
            if type(parent) is not str or parent == uuid:
                parent = None
            head = kind == "user" and not sidechain and is_head(obj)
            self.new[uuid] = (parent, head)
            if head:
                where = parent if parent is not None else START
                if where in st.head_parents:
                    self.restructured = True
                    if not st.forked:
                        st.forked = True
                        self.need_full_read = not self.from_start
                st.head_parents.add(where)
            elif parent is None and not sidechain and kind in ("user", "assistant"):
                self.restructured = self.restructured or not st.loose_roots
                st.loose_roots = True
        if not sidechain and (kind == "user" or kind == "assistant"):
            st.leaf = uuid

    def note(self, event: Event) -> None:
        """Remember which record an event came from (by its uuid, else the current record);
        the first record named for a seq keeps it."""
        seq = event.seq
        if seq < self.st.seqs or seq in self.owner:
            return
        uuid = event.uuid
        if uuid is not None and uuid != self.current and self._known(uuid):
            self.owner[seq] = uuid
        else:
            self.owner[seq] = self.current

    # -- marking ------------------------------------------------------------------------------
    def settle(self, output: dict[int, Event]) -> None:
        """Mark this read's events, queue patches for stored ones whose mark changed, and save
        the tree. Nothing is kept until the session forks: most never do."""
        st = self.st
        if not st.forked or self.need_full_read:
            return
        # The saved tree may have been decoded (to learn that a uuid is an old record's): that
        # alone changes no mark, so the append still takes the cheap way when it can.
        if self.restructured or not self._append(output):
            self._recompute(output)
        st.version = VERSION
        self.new, self.owner = {}, {}

    def _end(self, output: dict[int, Event]) -> int:
        return max(self.st.seqs, max(self.owner, default=-1) + 1, max(output, default=-1) + 1)

    def _append(self, output: dict[int, Event]) -> bool:
        """The marks of an append that changes no stored mark; False when it might."""
        st = self.st
        recent = st.recent
        known: dict[str, Mark | None] = {}
        fresh_dangling: list[str] = []

        def mark_of(uuid: str) -> tuple[bool, Any]:
            if uuid in known:
                return True, known[uuid]
            entry = recent.get(uuid)
            if entry is not None:
                return True, entry[1]
            return False, None

        for uuid in self.new:
            if uuid in st.dangling:
                return False  # a record an earlier one named as its parent: its subtree moves
            chain = [uuid]
            while True:
                top = self.new[chain[-1]][0]
                if top is None:
                    above = None
                    break
                ok, above = mark_of(top)
                if ok:
                    break
                if top in self.new:
                    if top in chain:
                        return False  # a cycle
                    chain.append(top)
                    continue
                if self._is_old(top):
                    return False  # an older record than the recent ones
                fresh_dangling.append(top)
                above = None
                break
            for n in reversed(chain):
                known[n] = above
        # The leaf's new chain must reach the old leaf through records that are neither
        # alternatives nor forks: then no stored record changes branch.
        if st.leaf != self.old_leaf:
            cur = st.leaf
            steps = len(self.new) + len(recent) + 1
            while cur != self.old_leaf:
                steps -= 1
                if cur is None or steps < 0 or cur in st.pivots:
                    return False
                if cur in self.new:
                    cur = self.new[cur][0]
                elif cur in recent:
                    cur = recent[cur][0]
                else:
                    return False
        end = self._end(output)
        marks: list[Any] = []
        for seq in range(st.seqs, end):
            owner = self.owner.get(seq)
            if owner is None:
                marks.append(None)
                continue
            ok, mark = mark_of(owner)
            if not ok:
                return False
            marks.append(list(mark) if mark is not None else None)
        # Nothing changes branch: mark this read's events, save its frame.
        runs = Runs(st.runs)
        for seq, ev in output.items():
            want = marks[seq - st.seqs] if seq >= st.seqs else runs.get(seq)
            if want is not None:
                _apply(ev.extra, want)
            self.patches.pop(seq, None)
        base = st.count
        order = {u: base + i for i, u in enumerate(self.new)}
        nodes = []
        for uuid, (parent, head) in self.new.items():
            ref: Any = parent
            if parent is not None:
                ref = order[parent] if parent in order else recent[parent][2] if parent in recent else parent
            nodes.append((uuid, ref, head))
        owners = [
            x
            for seq, o in self.owner.items()
            if o is not None
            for x in (seq, order[o] if o in order else recent[o][2])
        ]
        st.tree += frame(nodes, owners, base)
        st.count += len(nodes)
        hashes = self._hashes if self._hashes is not None else Hashes(st.hashes)
        for uuid in self.new:
            hashes.add(crc(uuid))
        st.hashes = hashes.tobytes()
        self._hashes = hashes
        runs.extend(st.seqs, marks)
        st.runs = runs.runs
        st.seqs = end
        st.dangling.update(fresh_dangling)
        for uuid, (parent, _head) in self.new.items():
            mark = known[uuid]
            recent[uuid] = [parent, list(mark) if mark is not None else None, order[uuid]]
        _trim(recent, st.leaf)
        return True

    def _recompute(self, output: dict[int, Event]) -> None:
        """Decode the tree, add this read's records, recompute every mark."""
        st = self.st
        tree = self._load()
        for uuid, (parent, head) in self.new.items():
            tree.add(uuid, parent, head)
        index = tree.index
        for seq, owner in self.owner.items():
            if owner is not None:
                tree.owner[seq] = index[owner]
        by_node, self.forks, st.pivots = tree_marks(tree, st.leaf, st.loose_roots)
        end = self._end(output)
        old = Runs(st.runs).expand(st.seqs)
        new: list[Any] = [None] * end
        for seq, i in tree.owner.items():
            mark = by_node[i]
            if mark is not None and seq < end:
                new[seq] = list(mark)
        for seq in range(end):
            want = new[seq]
            ev = output.get(seq)
            before = old[seq] if seq < len(old) else None
            if ev is not None:
                if want is not None or before is not None:
                    _apply(ev.extra, want)
                self.patches.pop(seq, None)
            elif before != want:
                self.patches[seq] = _patch(want)
        st.tree = tree.encode()
        st.count = len(tree.uuids)
        st.hashes = Hashes.of(tree.uuids).tobytes()
        self._hashes = None
        st.runs = Runs.of(new).runs
        st.seqs = end
        st.dangling = {p for p in tree.parents if p is not None and p not in index}
        st.recent = {}
        tail = range(max(0, len(tree.uuids) - RECENT), len(tree.uuids))
        leaf = index.get(st.leaf) if st.leaf is not None else None
        for i in ([leaf] if leaf is not None and leaf < tail.start else []) + list(tail):
            mark = by_node[i]
            st.recent[tree.uuids[i]] = [tree.parents[i], list(mark) if mark is not None else None, i]
        st.forks = self.forks


def _trim(recent: dict[str, list[Any]], leaf: str | None) -> None:
    """Keep the last RECENT records (and the leaf, wherever it is)."""
    extra = len(recent) - RECENT
    if extra <= 0:
        return
    for uuid in list(recent)[: extra + 1]:
        if extra <= 0:
            break
        if uuid != leaf:
            del recent[uuid]
            extra -= 1


def _apply(extra: dict[str, Any], mark: list[Any] | None) -> None:
    for key in MARK_KEYS:
        extra.pop(key, None)
    if mark is not None:
        extra.update(zip(MARK_KEYS, mark, strict=True))


def _patch(mark: list[Any] | None) -> dict[str, Any]:
    if mark is None:
        return dict.fromkeys(MARK_KEYS)
    return dict(zip(MARK_KEYS, mark, strict=True))
