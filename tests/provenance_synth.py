"""A synthetic repository for blame's accuracy (docs/provenance.md, bench/RESULTS.md).

Three agents (Claude Code, Codex, Pi) edit the same files in turn, each in its own recorded
format (Claude's Write/Edit with structured patches, Codex's apply_patch envelopes, Pi's
write/edit with old/new texts); between them a person edits the files by hand (unrecorded),
one file is renamed by Codex (``*** Move to:``), another with ``mv`` through Claude's Bash, and
one is reformatted by hand. The script keeps the truth: for every line of every file, the
agent call that wrote it or "hand". ``build`` writes the project and the agents' session files
and returns that truth, so a test can compare blame with it line by line.
"""

from __future__ import annotations

import difflib
import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HAND = ("hand", "", "")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC).timestamp()

Origin = tuple[str, str, str]  # (agent, session id, tool call id) or HAND


def _ts(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class Session:
    agent: str
    sid: str
    lines: list[dict[str, Any]] = field(default_factory=list)
    parent: str | None = None
    calls: int = 0


@dataclass
class Repo:
    project: Path
    roots: dict[str, Path]
    truth: dict[str, list[tuple[str, Origin]]]  # final path → its lines with their origins
    agent_lines: int = 0
    hand_lines: int = 0


class Builder:
    def __init__(self, base: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.base = base
        self.project = base / "project"
        self.project.mkdir(parents=True)
        self.files: dict[str, list[tuple[str, Origin]]] = {}
        self.t = T0
        self.words = 0
        self.sessions: list[Session] = []

    # -- text -----------------------------------------------------------------------------
    def line(self) -> str:
        self.words += 1
        n = self.words
        kind = self.rng.random()
        if kind < 0.25:
            return f"    value_{n} = compute('{self.rng.choice('abcdef')}{n}')"
        if kind < 0.45:
            return f"def step_{n}(x):"
        if kind < 0.55:
            return ""
        if kind < 0.62:
            return "    return x"
        return f"    total_{n} = total_{n - 1} + {self.rng.randint(1, 99)}  # note {n}"

    def block(self, k: int) -> list[str]:
        return [self.line() for _ in range(k)]

    def tick(self) -> float:
        self.t += self.rng.uniform(20, 90)
        return self.t

    # -- the truth ------------------------------------------------------------------------
    @staticmethod
    def changed(old: list[tuple[str, Origin]], new: list[str], origin: Origin) -> list[tuple[str, Origin]]:
        """``new`` replacing ``old``: kept lines keep their origin, the others are ``origin``."""
        texts = [x for x, _ in old]
        out: list[tuple[str, Origin]] = [(x, origin) for x in new]
        for b in difflib.SequenceMatcher(None, texts, new, autojunk=False).get_matching_blocks():
            for k in range(b.size):
                out[b.b + k] = (new[b.b + k], old[b.a + k][1])
        return out

    def write_disk(self) -> None:
        for name, lines in self.files.items():
            (self.project / name).write_text("".join(x + "\n" for x, _ in lines))

    def path(self, name: str) -> str:
        return str(self.project / name)

    # -- agents ---------------------------------------------------------------------------
    def session(self, agent: str) -> Session:
        s = Session(agent=agent, sid=str(uuid.UUID(int=self.rng.getrandbits(128), version=4)))
        self.sessions.append(s)
        if agent == "codex":
            t = self.tick()
            s.lines.append({"timestamp": _ts(t), "type": "session_meta", "payload": {
                "id": s.sid, "timestamp": _ts(t), "cwd": str(self.project), "originator": "codex_cli_rs",
                "cli_version": "0.171.0", "source": "cli", "model_provider": "openai"}})
            s.lines.append({"timestamp": _ts(t), "type": "turn_context", "payload": {
                "cwd": str(self.project), "model": "gpt-5", "approval_policy": "never", "sandbox_policy": {"type": "read-only"}}})
        elif agent == "pi":
            t = self.tick()
            s.lines.append({"type": "session", "version": 3, "id": s.sid, "timestamp": _ts(t), "cwd": str(self.project)})
        return s

    def prompt(self, s: Session, text: str) -> None:
        t = self.tick()
        if s.agent == "claude-code":
            u = str(uuid.uuid4())
            s.lines.append({"type": "user", "message": {"role": "user", "content": text}, "uuid": u,
                            "parentUuid": s.parent, "timestamp": _ts(t), "sessionId": s.sid,
                            "cwd": str(self.project), "version": "2.1.197", "isSidechain": False, "userType": "external"})
            s.parent = u
        elif s.agent == "codex":
            s.lines.append({"timestamp": _ts(t), "type": "event_msg", "payload": {"type": "user_message", "message": text}})
            s.lines.append({"timestamp": _ts(t), "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}})
        else:
            mid = uuid.uuid4().hex[:8]
            s.lines.append({"type": "message", "id": mid, "parentId": s.parent, "timestamp": _ts(t),
                            "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": int(t * 1000)}})
            s.parent = mid

    def _claude_call(self, s: Session, tool: str, inp: dict[str, Any], result: dict[str, Any] | None) -> str:
        cid = f"toolu_{uuid.UUID(int=self.rng.getrandbits(128)).hex}"
        t = self.tick()
        u = str(uuid.uuid4())
        s.lines.append({"type": "assistant", "uuid": u, "parentUuid": s.parent, "timestamp": _ts(t), "sessionId": s.sid,
                        "cwd": str(self.project), "version": "2.1.197", "isSidechain": False, "requestId": f"req_{u[:8]}",
                        "message": {"id": f"msg_{u[:12]}", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
                                    "content": [{"type": "tool_use", "id": cid, "name": tool, "input": inp}],
                                    "usage": {"input_tokens": 10, "output_tokens": 5}}})
        r = str(uuid.uuid4())
        line: dict[str, Any] = {"type": "user", "uuid": r, "parentUuid": u, "timestamp": _ts(t + 0.1), "sessionId": s.sid,
                                "cwd": str(self.project), "version": "2.1.197", "isSidechain": False,
                                "message": {"role": "user", "content": [{"tool_use_id": cid, "type": "tool_result", "content": "ok"}]}}
        if result is not None:
            line["toolUseResult"] = result
        s.lines.append(line)
        s.parent = r
        return cid

    def _codex_call(self, s: Session, patch: str) -> str:
        cid = f"call_{uuid.UUID(int=self.rng.getrandbits(128)).hex[:24]}"
        t = self.tick()
        s.lines.append({"timestamp": _ts(t), "type": "response_item", "payload": {
            "type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": cid}})
        s.lines.append({"timestamp": _ts(t + 0.1), "type": "response_item", "payload": {
            "type": "custom_tool_call_output", "call_id": cid, "output": [{"type": "output_text", "text": "Done!"}]}})
        return cid

    def _pi_call(self, s: Session, tool: str, args: dict[str, Any]) -> str:
        cid = f"toolu_{uuid.UUID(int=self.rng.getrandbits(128)).hex}"
        t = self.tick()
        mid, rid = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
        s.lines.append({"type": "message", "id": mid, "parentId": s.parent, "timestamp": _ts(t), "message": {
            "role": "assistant", "content": [{"type": "toolCall", "id": cid, "name": tool, "arguments": args}],
            "api": "anthropic-messages", "provider": "mock", "model": "claude-mock-4", "stopReason": "toolUse",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
            "timestamp": int(t * 1000)}})
        s.lines.append({"type": "message", "id": rid, "parentId": mid, "timestamp": _ts(t + 0.1), "message": {
            "role": "toolResult", "toolCallId": cid, "toolName": tool, "content": [{"type": "text", "text": "ok"}],
            "isError": False, "timestamp": int(t * 1000) + 100}})
        s.parent = rid
        return cid

    @staticmethod
    def _patch_hunks(old: list[str], new: list[str]) -> list[dict[str, Any]]:
        out = []
        for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
            lines: list[str] = []
            for tag, a1, a2, b1, b2 in group:
                if tag == "equal":
                    lines += [" " + x for x in old[a1:a2]]
                else:
                    lines += ["-" + x for x in old[a1:a2]] + ["+" + x for x in new[b1:b2]]
            a0, b0 = group[0][1], group[0][3]
            out.append({"oldStart": a0 + 1, "oldLines": group[-1][2] - a0, "newStart": b0 + 1,
                        "newLines": group[-1][4] - b0, "lines": lines})
        return out

    def create(self, s: Session, name: str, k: int) -> None:
        lines = self.block(k)
        text = "".join(x + "\n" for x in lines)
        if s.agent == "claude-code":
            cid = self._claude_call(s, "Write", {"file_path": self.path(name), "content": text},
                                    {"type": "create", "filePath": self.path(name), "content": text,
                                     "structuredPatch": [], "originalFile": None})
        elif s.agent == "codex":
            cid = self._codex_call(s, f"*** Begin Patch\n*** Add File: {name}\n" + "".join("+" + x + "\n" for x in lines) + "*** End Patch")
        else:
            cid = self._pi_call(s, "write", {"path": self.path(name), "content": text})
        self.files[name] = [(x, (s.agent, s.sid, cid)) for x in lines]

    def edit(self, s: Session, name: str, *, move_to: str | None = None) -> None:
        cur = self.files[name]
        texts = [x for x, _ in cur]
        # a stretch of 1-4 lines whose text is unique in the file (as edit tools demand)
        for _ in range(50):
            a = self.rng.randrange(len(texts))
            b = min(len(texts), a + self.rng.randint(1, 4))
            old = "\n".join(texts[a:b])
            if old.strip() and "\n".join(texts).count(old) == 1:
                break
        else:
            return
        keep = [x for x in texts[a:b] if self.rng.random() < 0.4]
        new_lines = self.block(self.rng.randint(0, 3)) + keep + self.block(self.rng.randint(1, 3))
        after = texts[:a] + new_lines + texts[b:]
        origin_new = self.changed(cur[a:b], new_lines, (s.agent, s.sid, "?"))
        if s.agent == "claude-code":
            inp = {"file_path": self.path(name), "old_string": old, "new_string": "\n".join(new_lines), "replace_all": False}
            result = {"filePath": self.path(name), "oldString": old, "newString": inp["new_string"],
                      "originalFile": "".join(x + "\n" for x in texts),
                      "structuredPatch": self._patch_hunks(texts, after), "userModified": False, "replaceAll": False}
            cid = self._claude_call(s, "Edit", inp, result)
        elif s.agent == "codex":
            lo, hi = max(0, a - 3), min(len(texts), b + 3)
            body = [" " + x for x in texts[lo:a]] + ["-" + x for x in texts[a:b]] + ["+" + x for x in new_lines]
            body += [" " + x for x in texts[b:hi]]
            head = f"*** Update File: {name}\n" + (f"*** Move to: {move_to}\n" if move_to else "")
            cid = self._codex_call(s, "*** Begin Patch\n" + head + "@@\n" + "\n".join(body) + "\n*** End Patch")
        else:
            cid = self._pi_call(s, "edit", {"path": self.path(name), "edits": [{"oldText": old, "newText": "\n".join(new_lines)}]})
        origin_new = [(x, (s.agent, s.sid, cid) if o[2] == "?" else o) for x, o in origin_new]
        self.files[name] = cur[:a] + origin_new + cur[b:]
        if move_to:
            self.files[move_to] = self.files.pop(name)

    def shell_move(self, s: Session, old: str, new: str) -> None:
        self._claude_call(s, "Bash", {"command": f"mv {old} {new}", "description": "rename"}, None)
        self.files[new] = self.files.pop(old)

    # -- by hand --------------------------------------------------------------------------
    def hand(self, name: str) -> None:
        cur = self.files[name]
        for _ in range(self.rng.randint(1, 3)):
            i = self.rng.randrange(len(cur) + 1)
            what = self.rng.random()
            self.words += 1
            if what < 0.4 or i == len(cur):
                cur.insert(i, (f"    # hand-written {self.words}", HAND))
            elif what < 0.7:
                cur[i] = (cur[i][0] + f"  # tweaked {self.words}", HAND)
            elif len(cur) > 5:
                del cur[i]

    def reformat(self, name: str) -> None:
        """Single quotes become double ones, as a formatter would (the changed lines are the
        formatter's: no recorded session wrote them)."""
        self.files[name] = [((x.replace("'", '"'), HAND) if "'" in x else (x, o)) for x, o in self.files[name]]

    # -- output ---------------------------------------------------------------------------
    def save(self) -> dict[str, Path]:
        roots = {"claude-code": self.base / "claude" / "projects", "codex": self.base / "codex" / "sessions",
                 "pi": self.base / "pi" / "sessions"}
        slug = str(self.project).replace("/", "-")
        for s in self.sessions:
            if s.agent == "claude-code":
                path = roots["claude-code"] / slug / f"{s.sid}.jsonl"
            elif s.agent == "codex":
                stamp = datetime.fromtimestamp(T0, UTC).strftime("%Y-%m-%dT%H-%M-%S")
                path = roots["codex"] / "2026" / "03" / "01" / f"rollout-{stamp}-{s.sid}.jsonl"
            else:
                path = roots["pi"] / f"-{slug}-" / f"2026-03-01T09-00-00-000Z_{s.sid}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in s.lines))
        self.write_disk()
        return roots


def build(base: Path, seed: int = 27, rounds: int = 12) -> Repo:
    """The project, the agents' session files and the truth about every line."""
    b = Builder(base, seed)
    agents = ["claude-code", "codex", "pi"]
    sessions = {a: b.session(a) for a in agents}
    names = ["app.py", "util.py", "notes.py"]
    for name, agent in zip(names, agents, strict=True):
        b.prompt(sessions[agent], f"Create {name} with a few steps.")
        b.create(sessions[agent], name, 30)
    for r in range(rounds):
        for agent in agents:
            s = sessions[agent]
            b.prompt(s, f"Round {r}: improve the code of {', '.join(sorted(b.files))}.")
            for name in sorted(b.files):
                for _ in range(b.rng.randint(1, 3)):
                    b.edit(s, name)
            if b.rng.random() < 0.6:
                b.hand(b.rng.choice(sorted(b.files)))
        if r == 3:
            b.prompt(sessions["codex"], "Rename util.py to helpers.py.")
            b.edit(sessions["codex"], "util.py", move_to="helpers.py")
        if r == 5:
            b.prompt(sessions["claude-code"], "Rename notes.py to journal.py.")
            b.shell_move(sessions["claude-code"], "notes.py", "journal.py")
        if r == 7:
            b.reformat("app.py")
        if r == 8:  # a new session of each agent from here on
            sessions = {a: b.session(a) for a in agents}
    roots = b.save()
    repo = Repo(project=b.project, roots=roots, truth=b.files)
    for lines in b.files.values():
        for _, origin in lines:
            if origin == HAND:
                repo.hand_lines += 1
            else:
                repo.agent_lines += 1
    return repo


@dataclass
class Score:
    agent_lines: int = 0
    agent_right: int = 0
    hand_lines: int = 0
    hand_as_agent: int = 0
    wrong: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.agent_right / self.agent_lines if self.agent_lines else 1.0


def score(repo: Repo, data_dir: Path) -> Score:
    """Index the agents' files, blame every final file, compare with the truth."""
    from agtaild.config import Config, RootSpec
    from agtaild.provenance.blamefile import blame_doc, read_text
    from agtaild.query.service import Service

    roots = [RootSpec(agent, str(path)) for agent, path in repo.roots.items()]
    svc = Service(Config(data_dir=str(data_dir), roots=roots, archive=False))
    out = Score()
    try:
        report = svc.update_index()
        assert not report.get("errors"), report.get("errors")
        calls: dict[tuple[str, str, int], str] = {}
        for s in svc.call("sessions.list", {"limit": 100})["sessions"]:
            page = svc.call("events.list", {"agent": s["agent"], "id": s["id"], "limit": 10_000})
            for ev in page["events"]:
                if ev.get("tool_use_id"):
                    calls[(s["agent"], s["id"], ev["seq"])] = ev["tool_use_id"]
        for name, lines in sorted(repo.truth.items()):
            path = str(repo.project / name)
            history = svc.call("files.history", {"path": path, "replay": True})
            doc = blame_doc(history, read_text(path))
            for got, (text, origin) in zip(doc["lines"], lines, strict=True):
                assert got["text"] == text
                rec = doc["records"][str(got["record"])] if got["record"] is not None else None
                said = None if rec is None else (rec["session"]["agent"], rec["session"]["id"],
                                                 calls.get((rec["session"]["agent"], rec["session"]["id"], rec["seq"])))
                if origin == HAND:
                    out.hand_lines += 1
                    if said is not None:
                        out.hand_as_agent += 1
                        out.wrong.append(f"{name}:{got['line']} hand-written, said {said}: {text!r}")
                else:
                    out.agent_lines += 1
                    if said == origin:
                        out.agent_right += 1
                    else:
                        out.wrong.append(f"{name}:{got['line']} by {origin}, said {said}: {text!r}")
    finally:
        svc.close()
    return out
