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

Incremental reads: once a session forked, the tracker keeps the tree (uuid → parent, head
flag, seqs of the events it produced) and the marks it last gave out; before that it keeps only
the parents of prompts (to notice the first fork), and the read that finds a first fork in an
appended part asks for one read from the start (the earlier records' tree was not kept). After a read it recomputes the marks of the whole
tree; events of this read get them directly, and stored events whose marks changed are re-marked
through ``ReadResult.marks`` (seq → extra keys), so an append that moves the leaf to another
branch touches only the events whose mark changed.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.model import Event

#: The ``extra`` keys this module owns.
MARK_KEYS = ("branch", "fork", "alt", "alts")
#: How many forks the session summary lists (``session.extra["forks"]``).
MAX_LISTED_FORKS = 200

#: The fork id of the session start: rewinding the first prompt writes a second parentless
#: prompt, an alternative of the start.
START = "start"

Mark = tuple[str, str, int, int]  # (branch, fork uuid, alt, alts)


class Node(msgspec.Struct, array_like=True, omit_defaults=True):
    parent: str | None
    head: bool = False
    #: The seqs of the events this record produced (None: none yet).
    seqs: list[int] | None = None


class BranchState(msgspec.Struct):
    """Kept in the parser state between reads."""

    nodes: dict[str, Node] = msgspec.field(default_factory=dict)
    leaf: str | None = None
    #: Records with a head child; a second head child makes a fork.
    head_parents: set[str] = msgspec.field(default_factory=set)
    #: A parentless user/assistant record that is not a head: the file has no real tree
    #: (synthetic or very old files), so parentless heads are not alternatives of the start.
    loose_roots: bool = False
    #: Whether some record has two head children (until then nothing is marked).
    forked: bool = False
    #: The marks stored with each event (seq → mark), as last given out.
    marks: dict[int, list[Any]] = msgspec.field(default_factory=dict)


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
        #: The tree: the saved one once the session forked, else only this read's records.
        self.nodes: dict[str, Node] = state.nodes
        self.from_start = from_start
        #: A first fork found by a read that continued a saved state without a tree: the
        #: earlier records are not known, so the file must be read again from the start.
        self.need_full_read = False
        self.current: str | None = None
        self.patches: dict[int, dict[str, Any]] = {}
        self.forks: list[dict[str, Any]] = []

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
        nodes = self.nodes
        if uuid not in nodes:
            parent = obj.get("parentUuid")
            if parent is None:
                parent = obj.get("logicalParentUuid")
            if type(parent) is not str or parent == uuid:
                parent = None
            head = kind == "user" and not sidechain and is_head(obj)
            nodes[uuid] = Node(parent, head) if head else Node(parent)
            if head:
                where = parent if parent is not None else START
                if where in st.head_parents and not st.forked:
                    st.forked = True
                    self.need_full_read = not self.from_start
                st.head_parents.add(where)
            elif parent is None and not sidechain and kind in ("user", "assistant"):
                st.loose_roots = True
        if not sidechain and (kind == "user" or kind == "assistant"):
            st.leaf = uuid

    def note(self, event: Event) -> None:
        """Remember which record an event came from (by its uuid, else the current record)."""
        owner = event.uuid if event.uuid is not None and event.uuid in self.nodes else self.current
        if owner is None:
            return
        node = self.nodes[owner]
        if node.seqs is None:
            node.seqs = [event.seq]
        elif event.seq not in node.seqs:
            node.seqs.append(event.seq)

    # -- marking ----------------------------------------------------------------------------
    def settle(self, output: dict[int, Event]) -> None:
        """Recompute the marks; mark this read's events and queue patches for stored ones.
        The tree is saved with the state only once the session forked: most never do, and a
        50 MB session's tree would be most of its state."""
        if not self.st.forked:
            self.st.nodes = {}
            return
        self.st.nodes = self.nodes
        desired = self._marks()
        old = self.st.marks
        new: dict[int, list[Any]] = {}
        for uuid, node in self.st.nodes.items():
            mark = desired.get(uuid)
            if mark is not None and node.seqs:
                for seq in node.seqs:
                    new[seq] = list(mark)
        for seq in set(old) | set(new):
            want = new.get(seq)
            ev = output.get(seq)
            if ev is not None:
                _apply(ev.extra, want)
                self.patches.pop(seq, None)
            elif old.get(seq) != want:
                self.patches[seq] = _patch(want)
        self.st.marks = new

    def _marks(self) -> dict[str, Mark]:
        nodes = self.nodes
        children: dict[str, list[str]] = {}
        for uuid, node in nodes.items():
            if node.head and node.parent is not None:
                children.setdefault(node.parent, []).append(uuid)
            elif node.head and not self.st.loose_roots:
                children.setdefault(START, []).append(uuid)
        forks = {p: heads for p, heads in children.items() if len(heads) > 1}
        active: set[str] = set()
        cur = self.st.leaf
        while cur is not None and cur not in active:
            active.add(cur)
            at = nodes.get(cur)
            cur = at.parent if at is not None else None
        self.forks = []
        for fork, heads in forks.items():
            on = [i for i, h in enumerate(heads) if h in active]
            if len(self.forks) < MAX_LISTED_FORKS:
                self.forks.append(
                    {"fork": fork, "alts": len(heads), "active": on[0] + 1 if on else None,
                     "on_active_chain": fork in active or (fork == START and bool(on)), "heads": heads}
                )  # fmt: skip
        alt_of = {h: (fork, i + 1, len(heads)) for fork, heads in forks.items() for i, h in enumerate(heads)}
        marks: dict[str, Mark | None] = {}
        for uuid in nodes:
            if uuid in marks:
                continue
            # Walk up to the first node already resolved (or the root), then resolve downwards.
            path: list[str] = []
            cur2: str | None = uuid
            seen: set[str] = set()
            while cur2 is not None and cur2 not in marks and cur2 in nodes and cur2 not in seen:
                seen.add(cur2)
                path.append(cur2)
                cur2 = nodes[cur2].parent
            above = marks.get(cur2) if cur2 is not None else None
            for n in reversed(path):
                spot = alt_of.get(n)
                if spot is not None and (above is None or above[0] == "active"):
                    above = ("active" if n in active else "inactive", *spot)
                marks[n] = above
        return {k: v for k, v in marks.items() if v is not None}


def _apply(extra: dict[str, Any], mark: list[Any] | None) -> None:
    for key in MARK_KEYS:
        extra.pop(key, None)
    if mark is not None:
        extra.update(zip(MARK_KEYS, mark, strict=True))


def _patch(mark: list[Any] | None) -> dict[str, Any]:
    if mark is None:
        return dict.fromkeys(MARK_KEYS)
    return dict(zip(MARK_KEYS, mark, strict=True))
