"""The Neovim plugin (clients/nvim), headless, against a real agtaild on temporary dirs.

Each test runs `nvim --headless -u NONE` with the plugin on its runtimepath and a Lua script
that drives the commands and writes what it saw as JSON; the plugin reaches the daemon through
the `agtail` CLI of this checkout (`--data-dir` of the test daemon). Skipped when nvim is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_proc import CLAUDE_REAL, DaemonProc, wait_until

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "clients" / "nvim"
NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (.ci/run installs Debian's neovim)")

SUB_PARENT = "claude-code:77734736-bfec-415b-bcc2-49975539e98b"
SUBAGENT = "claude-code:agent-abeadf394adf045da"
LIVE_SID = "5e1f0c2d-9a8b-4c7d-8e6f-0a1b2c3d4e5f"
IMPORTED_DIR = "-tmp-rt-claude-home-src-demo-app"
IMPORTED_SID = "c17426d0-3a0c-46ca-9b8c-d079169cd4a9"

#: Shared by every script: setup against the test daemon, a result table, and writing it out.
PRELUDE = """
local out = {}
local function finish()
  vim.fn.writefile({vim.json.encode(out)}, vim.env.AGTAIL_TEST_OUT)
  vim.cmd("qa!")
end
local function folds()
  local f = {}
  for l = 1, vim.api.nvim_buf_line_count(0) do
    f[l] = vim.fn.foldlevel(l) .. (vim.fn.foldclosed(l) ~= -1 and "c" or "")
  end
  return f
end
local function find_line(pattern)
  for l, text in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if text:find(pattern, 1, true) then return l, text end
  end
end
require("agtail").setup({ cmd = { vim.env.AGTAIL_BIN, "--data-dir", vim.env.AGTAIL_DATA } })
local ok, err = pcall(function()
"""
POSTLUDE = """
end)
if not ok then out.error = tostring(err) end
finish()
"""


def _line(**doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False) + "\n"


def live_session_lines(cwd: Path, *, extra: str = "") -> list[str]:
    """A Claude Code session in ``cwd`` (a real directory with notes.txt), newer than the corpus."""
    base = {"sessionId": LIVE_SID, "cwd": str(cwd), "version": "2.1.197", "isSidechain": False, "gitBranch": "main"}
    return [
        _line(type="user", uuid="u1", parentUuid=None, timestamp="2026-12-01T09:00:00.000Z",
              message={"role": "user", "content": "Read notes.txt and summarise it. [[live]]"}, **base),
        _line(type="assistant", uuid="a1", parentUuid="u1", timestamp="2026-12-01T09:00:01.000Z",
              message={"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                                    "input": {"file_path": str(cwd / "notes.txt")}}],
                       "usage": {"input_tokens": 10, "output_tokens": 5}}, **base),
        _line(type="user", uuid="u2", parentUuid="a1", timestamp="2026-12-01T09:00:02.000Z",
              message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                     "content": "line one\nline two\nline three"}]}, **base),
        _line(type="assistant", uuid="a2", parentUuid="u2", timestamp="2026-12-01T09:00:03.000Z",
              message={"id": "msg_2", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": [{"type": "text", "text": "notes.txt has three lines. " + extra}],
                       "usage": {"input_tokens": 12, "output_tokens": 7}}, **base),
    ]


class Env:
    """A daemon on a copy of the Claude corpus plus one live session, and a way to run nvim."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.projects = tmp / "projects"
        shutil.copytree(CLAUDE_REAL, self.projects)
        self.workdir = tmp / "work" / "live-app"
        self.workdir.mkdir(parents=True)
        (self.workdir / "notes.txt").write_text("line one\nline two\nline three\n")
        folder = self.projects / "-work-live-app"
        folder.mkdir()
        self.live = folder / f"{LIVE_SID}.jsonl"
        self.live.write_text("".join(live_session_lines(self.workdir)))
        self.bin = tmp / "bin"
        self.bin.mkdir()
        (tmp / "d").mkdir()
        self.daemon = DaemonProc(tmp / "d", {"claude-code": self.projects})
        # A copy of one session imported from another machine (the import store's layout).
        imported = self.daemon.data_dir / "imported" / "laptop" / "claude-code" / IMPORTED_DIR
        imported.mkdir(parents=True)
        shutil.copy2(CLAUDE_REAL / IMPORTED_DIR / f"{IMPORTED_SID}.jsonl", imported)

    def env(self, out: Path, values: dict[str, str]) -> dict[str, str]:
        return {
            **os.environ,
            **values,
            "AGTAIL_BIN": str(Path(sys.executable).parent / "agtail"),
            "AGTAIL_DATA": str(self.daemon.data_dir),
            "AGTAIL_TEST_OUT": str(out),
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(self.tmp / "home"),
        }

    def start(self, body: str, name: str = "run", **values: str) -> tuple[subprocess.Popen[bytes], Path]:
        """nvim running ``body`` (Lua; ``values`` reach it as environment variables)."""
        script = self.tmp / f"{name}.lua"
        script.write_text(PRELUDE + body + POSTLUDE)
        out = self.tmp / f"{name}.json"
        argv = [NVIM or "nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n",
                "--cmd", f"set rtp^={PLUGIN}", "--cmd", "runtime plugin/agtail.lua",
                "--cmd", "filetype plugin on | syntax on", "-c", f"luafile {script}"]
        proc = subprocess.Popen(argv, env=self.env(out, values), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(self.tmp))
        return proc, out

    def finish(self, proc: subprocess.Popen[bytes], out: Path, timeout: float = 90) -> dict[str, Any]:
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
            raise AssertionError(f"nvim did not finish: {stderr.decode()[-2000:]}") from None
        assert out.exists(), f"nvim wrote nothing (exit {proc.returncode}): {stderr.decode()[-2000:]}"
        doc: dict[str, Any] = json.loads(out.read_text())
        assert "error" not in doc, doc["error"]
        return doc

    def run(self, body: str, name: str = "run", **values: str) -> dict[str, Any]:
        proc, out = self.start(body, name, **values)
        return self.finish(proc, out)


@pytest.fixture
def nv(tmp_path: Path) -> Any:
    env = Env(tmp_path)
    env.daemon.start()
    try:
        yield env
    finally:
        env.daemon.cleanup()


def test_picker_items_and_a_transcript_with_folds(nv: Env) -> None:
    doc = nv.run("""
  local seen
  vim.ui.select = function(items, opts, on_choice)
    seen = vim.tbl_map(opts.format_item, items)
    for _, s in ipairs(items) do
      if s.agent .. ":" .. s.id == vim.env.PARENT then return on_choice(s) end
    end
  end
  vim.cmd("Agtail")
  out.items = seen
  out.name = vim.api.nvim_buf_get_name(0)
  out.ft = vim.bo.filetype
  out.modifiable = vim.bo.modifiable
  out.syntax = vim.b.current_syntax
  out.lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  out.folds = folds()
  local l = find_line("⚙ Agent")
  vim.api.nvim_win_set_cursor(0, { l, 0 })
  vim.cmd("normal \\r")
  out.subagent = vim.api.nvim_buf_get_name(0)
  out.sub_lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  -- The imported copy, by the name the picker would give it; it cannot be resumed.
  vim.ui.select = function(items, opts, on_choice)
    for _, s in ipairs(items) do
      if s.imported then return on_choice(s) end
    end
  end
  vim.cmd("Agtail")
  out.imported = vim.api.nvim_buf_get_name(0)
  out.imported_lines = vim.api.nvim_buf_get_lines(0, 0, 6, false)
  local messages = {}
  vim.notify = function(msg) table.insert(messages, msg) end
  vim.cmd("AgtailResume")
  out.resume_messages = messages
""", PARENT=SUB_PARENT)
    items = doc["items"]
    assert items[0].startswith("2026-12-01 09:00  claude-code  live-app ")
    assert any(i.endswith("Use a subagent to count the lines in hello.py. [[S:claude/sub]]") for i in items)
    assert len(items) == 9
    assert sum(1 for i in items if i.endswith("[[S:claude/tasks]]  [imported: laptop]")) == 1
    assert doc["name"] == f"agtail://{SUB_PARENT}"
    assert doc["ft"] == "agtail" and doc["modifiable"] is False and doc["syntax"] == "agtail"
    lines, levels = doc["lines"], doc["folds"]
    assert lines[0] == "# Use a subagent to count the lines in hello.py. [[S:claude/sub]]"
    assert lines[1].startswith(f"# {SUB_PARENT}  ·  demo-app  ·  /tmp/rt/claude/home/src/demo-app")
    user = lines.index("[0] user  2026-11-30 00:28")
    tool = next(i for i, t in enumerate(lines) if t.startswith("[2] ⚙ Agent  Count lines in hello.py"))
    assert lines[tool].endswith(f"→ {SUBAGENT}")
    assert lines[tool + 1].startswith("    in: {")
    assert "   out: hello.py has 6 lines (wc -l reports 6)." in lines
    assert lines[-3:] == ["[3] assistant  2026-11-30 00:28", "    The subagent reports that hello.py has 6 lines.", ""]
    # The header is outside every fold; a turn is an open fold of level 1; the tool call is
    # one closed line of level 2 (its input and output inside).
    assert set(levels[:user]) == {"0"}
    assert levels[user] == "1" and levels[user + 1] == "1"
    assert levels[tool] == "2c" and levels[tool + 1] == "2c"
    assert levels[-2] == "1"
    # <CR> on the tool line opened the subagent.
    assert doc["subagent"] == f"agtail://{SUBAGENT}"
    assert "    hello.py has 6 lines (wc -l reports 6)." in doc["sub_lines"]
    assert f"# [subagent of {SUB_PARENT}]" in doc["sub_lines"]
    assert doc["imported"] == f"agtail://@laptop/claude-code:{IMPORTED_SID}"
    assert "# [imported from collection laptop]" in doc["imported_lines"]
    assert len(doc["resume_messages"]) == 1
    assert doc["resume_messages"][0].startswith("agtail: this is the copy imported from collection laptop: ")


def test_search_fills_quickfix_and_a_jump_lands_on_the_event(nv: Env) -> None:
    doc = nv.run("""
  vim.cmd("AgtailSearch wc -l reports 6")
  out.qf = vim.tbl_map(function(i)
    return { name = vim.fn.bufname(i.bufnr), text = i.text, pattern = i.pattern }
  end, vim.fn.getqflist())
  out.title = vim.fn.getqflist({ title = 1 }).title
  vim.cmd("cfirst")
  out.jump = { vim.api.nvim_buf_get_name(0), vim.api.nvim_get_current_line(), vim.bo.filetype }
  vim.cmd("AgtailSearch no-such-words-anywhere-xyz")
  out.empty = #vim.fn.getqflist()
""")
    assert doc["title"] == "agtail search: wc -l reports 6"
    names = [e["name"] for e in doc["qf"]]
    assert f"agtail://{SUBAGENT}" in names and f"agtail://{SUB_PARENT}" in names
    first = doc["qf"][0]
    assert "«wc -l reports 6»" in first["text"]
    seq = first["pattern"].removeprefix("^\\V[").removesuffix("] ")
    assert doc["jump"][0] == first["name"]
    assert doc["jump"][1].startswith(f"[{seq}] ") and doc["jump"][2] == "agtail"
    assert doc["empty"] == 0


def test_gf_opens_a_path_from_the_sessions_directory(nv: Env) -> None:
    doc = nv.run("""
  vim.cmd("Agtail claude-code:" .. vim.env.SID)
  local l, text = find_line("⚙ Read")
  out.tool_line = text
  vim.api.nvim_win_set_cursor(0, { l, text:find("/", 1, true) - 1 })
  vim.cmd("normal gf")
  out.absolute = vim.api.nvim_buf_get_name(0)
  out.first = vim.api.nvim_get_current_line()
  vim.cmd("buffer agtail://claude-code:" .. vim.env.SID)
  l, text = find_line("notes.txt has three lines")
  vim.api.nvim_win_set_cursor(0, { l, text:find("notes", 1, true) - 1 })
  vim.cmd("normal gf")
  out.relative = vim.api.nvim_buf_get_name(0)
""", SID=LIVE_SID)
    notes = str(nv.workdir / "notes.txt")
    assert doc["tool_line"] == f"[1] ⚙ Read  {notes}"
    assert doc["absolute"] == notes and doc["first"] == "line one"
    assert doc["relative"] == notes


def test_follow_shows_an_event_appended_to_the_session_file(nv: Env) -> None:
    proc, out = nv.start("""
  vim.cmd("AgtailFollow")
  out.name = vim.api.nvim_buf_get_name(0)
  out.initial = vim.wait(30000, function() return find_line("notes.txt has three lines") ~= nil end, 50)
  vim.fn.writefile({"ready"}, vim.env.AGTAIL_TEST_OUT .. ".ready")
  out.arrived = vim.wait(60000, function() return find_line("a line written while following") ~= nil end, 50)
  out.lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  out.job = vim.b.agtail_follow_job
""", "follow")
    ready = Path(str(out) + ".ready")
    try:
        wait_until(ready.exists, 60, "the follow buffer")
    except TimeoutError:
        proc.kill()
        raise
    time.sleep(0.5)  # the stream is open; the write below is a new event for it
    with nv.live.open("a") as fh:
        fh.write(_line(type="assistant", uuid="a3", parentUuid="a2", timestamp="2026-12-01T09:05:00.000Z",
                       sessionId=LIVE_SID, cwd=str(nv.workdir), version="2.1.197", isSidechain=False,
                       message={"id": "msg_3", "role": "assistant", "model": "claude-sonnet-4-5",
                                "content": [{"type": "text", "text": "a line written while following"}],
                                "usage": {"input_tokens": 1, "output_tokens": 1}}))
    doc = nv.finish(proc, out)
    assert doc["name"] == f"agtail-follow://claude-code:{LIVE_SID}"
    assert doc["initial"] is True and doc["arrived"] is True, doc["lines"]
    # seq 1 is the Read call with its result merged in; seq 3 is the new message.
    assert doc["lines"][-3:] == ["[3] assistant  2026-12-01 09:05", "    a line written while following", ""]
    assert sum(1 for t in doc["lines"] if t.startswith("[2] ")) == 1  # nothing shown twice


def test_resume_runs_the_agents_command_in_a_terminal_in_its_cwd(nv: Env) -> None:
    record = nv.tmp / "claude-ran.txt"
    fake = nv.bin / "claude"
    fake.write_text(f'#!/bin/sh\n{{ pwd; printf "%s\\n" "$@"; }} > "{record}"\n')
    fake.chmod(0o755)
    doc = nv.run("""
  vim.cmd("Agtail claude-code:" .. vim.env.SID)
  vim.cmd("AgtailResume")
  out.resume = vim.b.agtail_resume
  out.buftype = vim.bo.buftype
  out.ran = vim.wait(20000, function() return vim.fn.filereadable(vim.env.RECORD) == 1 and #vim.fn.readfile(vim.env.RECORD) >= 2 end, 50)
  vim.cmd("stopinsert")
  local messages = {}
  vim.notify = function(msg) table.insert(messages, msg) end
  vim.cmd("AgtailResume claude-code:nope-not-a-session")
  vim.env.PATH = "/nonexistent"
  vim.cmd("AgtailResume claude-code:" .. vim.env.SID)
  out.messages = messages
  out.windows = #vim.api.nvim_list_wins()
""", SID=LIVE_SID, RECORD=str(record))
    assert doc["buftype"] == "terminal"
    assert doc["resume"]["cwd"] == str(nv.workdir)
    assert doc["resume"]["argv"] == ["claude", f"--resume={LIVE_SID}"]
    assert doc["ran"] is True
    ran = record.read_text().splitlines()
    assert ran[0] == str(nv.workdir) and ran[1:] == [f"--resume={LIVE_SID}"]
    assert doc["messages"][0] == "agtail: no claude-code session 'nope-not-a-session'"
    assert len(doc["messages"]) == 2 and doc["messages"][1].startswith("agtail: cannot start claude: ")
    assert doc["windows"] == 2  # the transcript and the first terminal; the failed one is gone


def test_stats_shows_usage_by_model(nv: Env) -> None:
    doc = nv.run("""
  vim.cmd("AgtailStats 2026-01-01")
  out.lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  out.name = vim.api.nvim_buf_get_name(0)
  vim.cmd("close")
  vim.cmd("AgtailStats")
  out.today = vim.api.nvim_buf_get_lines(0, 0, -1, false)
""")
    lines = doc["lines"]
    assert lines[0] == "agtail usage since 2026-01-01"
    assert lines[2].startswith("total: ") and "tokens, $" in lines[2]
    assert any(t.strip().startswith("claude-opus-4-8 ") for t in lines)
    assert any(t.strip().startswith("claude-sonnet-4-5 ") for t in lines)
    assert doc["name"] == "agtail-stats://2026-01-01"
    assert doc["today"][0].startswith("agtail usage since 20")


def test_errors_are_messages_not_crashes(nv: Env) -> None:
    doc = nv.run("""
  -- Unsaved changes are not lost: without 'hidden' the session opens in a split.
  vim.o.hidden = false
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "unsaved work" })
  vim.cmd("Agtail claude-code:" .. vim.env.SID)
  out.windows = #vim.api.nvim_list_wins()
  out.kept = vim.fn.getbufline(1, 1)
  local messages = {}
  vim.notify = function(msg, level) table.insert(messages, msg) end
  vim.cmd("Agtail claude-code:ffffffff-not-there")
  out.missing = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  require("agtail").setup({ cmd = { "/nonexistent/agtail" } })
  vim.cmd("AgtailStats")
  out.messages = messages
""", SID=LIVE_SID)
    assert doc["windows"] == 2 and doc["kept"] == ["unsaved work"]
    assert doc["missing"][0].startswith("# agtail: no claude-code session")
    assert any("cannot run /nonexistent/agtail" in m for m in doc["messages"])


def test_the_help_file_has_valid_unique_tags(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    proc = subprocess.run([NVIM or "nvim", "--headless", "-u", "NONE", "-i", "NONE", "-c", f"helptags {doc}", "-c", "qa!"],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0 and b"E154" not in proc.stderr, proc.stderr.decode()
    tags = {line.split("\t")[0] for line in (doc / "tags").read_text().splitlines()}
    assert {"agtail.txt", ":Agtail", ":AgtailSearch", ":AgtailFollow", ":AgtailResume", ":AgtailStats", ":AgtailLabel",
            ":AgtailUnlabel", ":AgtailStar", ":AgtailUnstar", ":AgtailHide", ":AgtailUnhide", ":AgtailTitle",
            ":AgtailBlame", ":AgtailHistory"} <= tags


def test_label_star_title_and_hide_from_a_transcript_buffer(nv: Env) -> None:
    doc = nv.run("""
  local messages = {}
  vim.notify = function(msg, level) table.insert(messages, msg) end
  vim.cmd("Agtail " .. vim.env.PARENT)
  vim.cmd("AgtailLabel client=acme wip")
  vim.cmd("AgtailStar")
  vim.cmd("AgtailTitle Counting lines")
  out.header = vim.api.nvim_buf_get_lines(0, 0, 5, false)
  vim.cmd("AgtailUnlabel wip")
  vim.cmd("AgtailHide")
  out.after = vim.api.nvim_buf_get_lines(0, 0, 5, false)
  vim.cmd("AgtailTitle")
  out.cleared = vim.api.nvim_buf_get_lines(0, 0, 1, false)
  vim.cmd("AgtailLabel bad\\\\ key")
  -- the picker shows the state too; outside a buffer a session is named first
  vim.cmd("enew")
  vim.cmd("AgtailUnhide " .. vim.env.PARENT)
  vim.cmd("AgtailStar")
  local seen
  vim.ui.select = function(items, opts, on_choice) seen = vim.tbl_map(opts.format_item, items) end
  vim.cmd("Agtail")
  out.items = seen
  out.messages = messages
""", PARENT=SUB_PARENT)
    assert doc["header"][0] == "# Counting lines"
    assert "# ★ starred  ·  labels: client=acme wip" in doc["header"]
    assert "# ★ starred  ·  labels: client=acme  ·  hidden" in doc["after"]
    assert doc["cleared"] == ["# Use a subagent to count the lines in hello.py. [[S:claude/sub]]"]
    messages = doc["messages"]
    assert f"agtail: {SUB_PARENT}: label client set, label wip set" in messages
    assert f"agtail: {SUB_PARENT}: star set" in messages and f"agtail: {SUB_PARENT}: hide set" in messages
    assert any("label key" in m for m in messages)  # the CLI's refusal, as a message
    assert any(m.endswith(":AgtailStar needs AGENT:ID outside a transcript buffer") for m in messages)
    row = next(i for i in doc["items"] if "[[S:claude/sub]]" in i and "count the lines" in i)
    assert row.endswith("[★ starred  ·  labels: client=acme]")
    listed = json.loads(subprocess.run([str(Path(sys.executable).parent / "agtail"), "--data-dir", str(nv.daemon.data_dir),
                                        "list", "--label", "client=acme", "--json"], capture_output=True, check=True,
                                       env=nv.env(nv.tmp / "x.json", {})).stdout)  # fmt: skip
    assert [s["id"] for s in listed["sessions"]] == [SUB_PARENT.split(":")[1]]


def _edit_session(cwd: Path) -> str:
    """A Claude Code session that writes app.py in ``cwd`` and then edits its second line."""
    base = {"sessionId": "7a7a7a7a-1111-4222-8333-444455556666", "cwd": str(cwd), "version": "2.1.197",
            "isSidechain": False}  # fmt: skip
    app = str(cwd / "app.py")
    first = "def main():\n    print('hello')\n\nmain()\n"
    lines = [
        _line(type="user", uuid="p1", parentUuid=None, timestamp="2026-12-01T10:00:00.000Z",
              message={"role": "user", "content": "Write app.py that greets. [[prov]]"}, **base),
        _line(type="assistant", uuid="w1", parentUuid="p1", timestamp="2026-12-01T10:00:01.000Z",
              message={"id": "msg_w", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": [{"type": "tool_use", "id": "toolu_w", "name": "Write",
                                    "input": {"file_path": app, "content": first}}],
                       "usage": {"input_tokens": 1, "output_tokens": 1}}, **base),
        _line(type="user", uuid="r1", parentUuid="w1", timestamp="2026-12-01T10:00:02.000Z",
              message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_w", "content": "ok"}]},
              **base),
        _line(type="user", uuid="p2", parentUuid="r1", timestamp="2026-12-01T10:01:00.000Z",
              message={"role": "user", "content": "Greet the world instead. [[prov2]]"}, **base),
        _line(type="assistant", uuid="e1", parentUuid="p2", timestamp="2026-12-01T10:01:01.000Z",
              message={"id": "msg_e", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": [{"type": "tool_use", "id": "toolu_e", "name": "Edit",
                                    "input": {"file_path": app, "old_string": "print('hello')",
                                              "new_string": "print('hello, world')"}}],
                       "usage": {"input_tokens": 1, "output_tokens": 1}}, **base),
        _line(type="user", uuid="r2", parentUuid="e1", timestamp="2026-12-01T10:01:02.000Z",
              message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_e", "content": "ok"}]},
              **base),
    ]  # fmt: skip
    return "".join(lines)


def test_blame_and_history_of_the_current_buffer(tmp_path: Path) -> None:
    env = Env(tmp_path)
    work = tmp_path / "work" / "prov-app"
    work.mkdir(parents=True)
    (work / "app.py").write_text("# by hand\ndef main():\n    print('hello, world')\n\nmain()\n")
    folder = env.projects / "-work-prov-app"
    folder.mkdir()
    (folder / "7a7a7a7a-1111-4222-8333-444455556666.jsonl").write_text(_edit_session(work))
    env.daemon.start()
    try:
        doc = env.run("""
  vim.cmd("edit " .. vim.fn.fnameescape(vim.env.APP))
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  local shown = require("agtail.provenance").blame()
  out.blame = shown.lines
  out.float = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(shown.win), 0, -1, false)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  out.hand = require("agtail.provenance").blame().lines
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  require("agtail.provenance").blame()
  vim.cmd("normal gs")
  out.opened = vim.api.nvim_buf_get_name(0)
  out.at = vim.api.nvim_get_current_line()
  vim.cmd("edit " .. vim.fn.fnameescape(vim.env.APP))
  vim.cmd("AgtailHistory")
  out.history = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  out.history_name = vim.api.nvim_buf_get_name(0)
  vim.cmd("normal G")
  vim.cmd("normal \\r")
  out.from_history = vim.api.nvim_buf_get_name(0)
  vim.cmd("enew")
  local messages = {}
  vim.notify = function(msg) table.insert(messages, msg) end
  require("agtail.provenance").blame()
  out.scratch = messages
""", name="prov", APP=str(work / "app.py"))
    finally:
        env.daemon.cleanup()
    assert doc["blame"][0] == "2026-12-01 10:01  claude-code:7a7a7a7a  #3  edit"
    assert doc["blame"][1] == "> Greet the world instead. [[prov2]]" and doc["float"] == doc["blame"]
    assert doc["hand"] == ["line 1: not from a recorded session"]
    assert doc["opened"] == "agtail://claude-code:7a7a7a7a-1111-4222-8333-444455556666"
    assert "[3]" in doc["at"]  # the cursor on the Edit event
    history = doc["history"]
    assert doc["history_name"].startswith("agtail-history://") and history[0] == doc["blame"][0]
    assert history[1] == "> Greet the world instead. [[prov2]]"
    assert any("#1  create" in x for x in history) and "  +def main():" in history
    assert doc["from_history"].startswith("agtail://claude-code:7a7a7a7a")
    assert doc["scratch"] == ["agtail: :AgtailBlame works on a file's buffer"]
