"""`agtail import chatgpt|claude-ai|gemini FILE.zip`: hand-made exports (tests/corpus/<agent>/
synthetic-agtail, built from the documented schemas) through the CLI in-process, re-imports,
and hostile zips (a bomb, member names that climb out, bad JSON, the wrong service)."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agtaild import cli
from agtaild.adapters import get_adapter
from agtaild.adapters.kit.branch_marks import branch_marks, tree_order
from agtaild.store.chat_import import file_name
from tests.chat_exports import SAMPLES, sample_zip, zip_dir


def run(capsys: pytest.CaptureFixture[str], data: Path, *argv: str) -> tuple[int, Any, str]:
    code = cli.main(["--no-daemon", "--data-dir", str(data), "--only-roots", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else out), err


def files_under(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("service", sorted(SAMPLES))
def test_import_lists_searches_shows_and_never_resumes(service: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    agent, folder = SAMPLES[service]
    data = tmp_path / "data"
    code, rep, err = run(capsys, data, "--json", "import", service, str(sample_zip(service, tmp_path)))
    assert code == 0, err
    assert (rep["agent"], rep["collection"], rep["new"], rep["updated"]) == (agent, service, 2, 0)
    stored = data / "imported" / service / agent
    assert files_under(stored) == files_under(folder / "store")  # one file per conversation, as committed
    code, listed, err = run(capsys, data, "list", "--json", "--agent", agent)
    assert code == 0, err
    rows = listed["sessions"]
    assert len(rows) == 2
    assert all(r["imported"] and r["collection"] == service and not r["resumable"] for r in rows)
    words = {"chatgpt": "itemgetter", "claude-ai": "not-a-date", "gemini": "windowsill"}[service]
    code, found, err = run(capsys, data, "search", words, "--json")
    assert code == 0, err
    (sid,) = {h["session"]["id"] for h in found["hits"]}
    hit = found["hits"][0]
    assert sid == hit["session"]["id"]
    ref = f"{agent}:{hit['session']['id']}"
    code, shown, err = run(capsys, data, "show", ref, "--json")
    assert code == 0, err
    assert any(words in (e.get("text") or "") for e in shown["events"])
    code, _, err = run(capsys, data, "resume", ref, "--print")
    assert code == 3
    assert "data export" in err and "nothing on this machine resumes it" in err
    code, stats, err = run(capsys, data, "stats", "--by", "hour", "--json", "--agent", agent)
    assert code == 0, err
    assert stats["totals"]["events"] > len(shown["events"])  # both conversations' events are counted


def test_reimport_is_idempotent_and_a_newer_export_updates_and_keeps(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    data = tmp_path / "data"
    export = sample_zip("chatgpt", tmp_path)
    assert run(capsys, data, "import", "chatgpt", str(export), "--collection", "mine")[0] == 0
    stored = data / "imported" / "mine" / "chatgpt"
    before = {p.name: p.stat().st_ino for p in stored.iterdir()}
    code, rep, _ = run(capsys, data, "--json", "import", "chatgpt", str(export), "--collection", "mine")
    assert code == 0 and (rep["new"], rep["updated"], rep["unchanged"]) == (0, 0, 2)
    assert {p.name: p.stat().st_ino for p in stored.iterdir()} == before
    # the service changed one title and no longer has the other conversation
    convs = json.loads((SAMPLES["chatgpt"][1] / "export" / "conversations.json").read_text())
    convs[0]["title"] = "Sorting lists, renamed"
    newer = tmp_path / "newer"
    (newer).mkdir()
    (newer / "conversations.json").write_text(json.dumps(convs[:1]))
    code, rep, _ = run(capsys, data, "--json", "import", "chatgpt", str(zip_dir(newer, tmp_path / "n.zip")),
                       "--collection", "mine")  # fmt: skip
    assert (rep["updated"], rep["unchanged"], rep["kept"], rep["new"]) == (1, 0, 1, 0)
    assert sorted(p.name for p in stored.iterdir()) == sorted(before)
    code, listed, _ = run(capsys, data, "list", "--json", "--agent", "chatgpt")
    assert sorted(r["title"] for r in listed["sessions"]) == ["Sorting lists, renamed", "Trip checklist"]
    code, rep, _ = run(
        capsys, data, "--json", "import", "chatgpt", str(export), "--collection", "mine", "--dry-run"
    )
    assert rep["updated"] == 1 and rep["dry_run"]
    assert "renamed" in (stored / file_name(convs[0]["id"])).read_text()  # a dry run writes nothing


def test_gemini_sessions_merged_by_a_later_export_replace_the_old_ones(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    data = tmp_path / "data"
    src = SAMPLES["gemini"][1] / "export"
    assert run(capsys, data, "import", "gemini", str(zip_dir(src, tmp_path / "a.zip")))[0] == 0
    stored = data / "imported" / "gemini" / "gemini-apps"
    assert len(list(stored.iterdir())) == 2
    member = Path("Takeout/My Activity/Gemini Apps/My Activity.json")
    entries = json.loads((src / member).read_text())
    later = tmp_path / "later"
    (later / member.parent).mkdir(parents=True)
    start = datetime(2026, 1, 9, 8, 20, tzinfo=UTC)
    bridges = [{"header": "Gemini Apps", "title": f"Prompted step {n}", "products": ["Gemini Apps"],
                "time": (start + timedelta(minutes=20 * n)).isoformat().replace("+00:00", "Z")}
               for n in range(94)]  # fmt: skip
    (later / member).write_text(json.dumps(entries + bridges))
    code, rep, err = run(capsys, data, "--json", "import", "gemini", str(zip_dir(later, tmp_path / "b.zip")))
    assert code == 0, err
    assert (rep["conversations"], rep["removed"], rep["kept"]) == (1, 1, 0)
    (only,) = stored.iterdir()
    assert len(json.loads(only.read_text())) == len(entries) + len(bridges)


def _bomb(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", b"[" + b" " * (40 << 20) + b"]")
    return path


def _climbing(path: Path) -> Path:
    conv = json.loads((SAMPLES["claude-ai"][1] / "store").iterdir().__next__().read_text())
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("../../../outside/conversations.json", json.dumps([conv]))
        zf.writestr("/abs/evil.json", "{}")
    return path


def _member(path: Path, name: str, data: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(name, data)
    return path


@pytest.mark.parametrize("case", ["bomb", "bad-json", "object", "not-a-zip", "truncated", "wrong-service", "no-member",
                                  "not-a-conversation", "takeout-html"])  # fmt: skip
def test_a_bad_export_is_refused_with_exit_2_and_writes_nothing(case: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    service = "gemini" if case == "takeout-html" else "chatgpt"
    zpath = tmp_path / "x.zip"
    if case == "bomb":
        _bomb(zpath)
    elif case == "bad-json":
        _member(zpath, "conversations.json", b'[{"id": "a", "mapping": {')
    elif case == "object":
        _member(zpath, "conversations.json", b'{"id": "a", "mapping": {}}')
    elif case == "not-a-zip":
        zpath.write_bytes(b"this is not a zip file at all")
    elif case == "truncated":
        whole = sample_zip("chatgpt", tmp_path).read_bytes()
        zpath.write_bytes(whole[: len(whole) // 2])
    elif case == "wrong-service":
        zpath = sample_zip("gemini", tmp_path)
    elif case == "no-member":
        _member(zpath, "readme.txt", b"hello")
    elif case == "not-a-conversation":
        _member(zpath, "conversations.json", b'[{"uuid": "x", "chat_messages": []}]')
    else:
        _member(zpath, "Takeout/My Activity/Gemini Apps/My Activity.html", b"<html></html>")
    data = tmp_path / "data"
    code, _, err = run(capsys, data, "import", service, str(zpath))
    assert code == 2, err
    assert err.strip()
    assert not (data / "imported").exists() or not any((data / "imported").rglob("*.json"))


def test_member_names_are_never_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "work" / "data"
    code, rep, err = run(capsys, data, "--json", "import", "claude-ai", str(_climbing(tmp_path / "c.zip")))
    assert code == 0, err
    assert rep["new"] == 1
    assert not (tmp_path / "outside").exists() and not Path("/abs/evil.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.zip", "work"]
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["data"]
    written = [p for p in (data / "imported").rglob("*") if p.is_file()]
    assert [p.parent for p in written] == [data / "imported" / "claude-ai" / "claude-ai"], written


def test_unsafe_ids_get_safe_distinct_file_names() -> None:
    names = {file_name(i) for i in ("../x", "..", "a/b", "a_b", ".agtail-partial", "x" * 400, "ü")}
    assert len(names) == 7
    assert all("/" not in n and not n.startswith(".") and len(n) < 200 for n in names)
    assert file_name("6770a1b2-0000-8000-9000-00000000c0a1") == "6770a1b2-0000-8000-9000-00000000c0a1.json"


def test_a_ten_thousand_message_conversation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": ["n0"]}}
    for i in range(10_000):
        role = "user" if i % 2 == 0 else "assistant"
        mapping[f"n{i}"] = {
            "id": f"n{i}", "parent": "root" if i == 0 else f"n{i - 1}", "children": [f"n{i + 1}"] if i < 9_999 else [],
            "message": {"id": f"n{i}", "author": {"role": role}, "create_time": 1767000000 + i, "recipient": "all",
                        "content": {"content_type": "text", "parts": [f"message number {i} word{i}"]}, "metadata": {}},
        }  # fmt: skip
    conv = {
        "id": "long-one",
        "title": "Long",
        "create_time": 1767000000,
        "mapping": mapping,
        "current_node": "n9999",
    }
    src = tmp_path / "src"
    src.mkdir()
    (src / "conversations.json").write_text(json.dumps([conv]))
    data = tmp_path / "data"
    assert run(capsys, data, "import", "chatgpt", str(zip_dir(src, tmp_path / "long.zip")))[0] == 0
    code, found, err = run(capsys, data, "search", "word9998", "--json")
    assert code == 0, err
    assert found["hits"][0]["session"]["id"] == "long-one"
    adapter = get_adapter("chatgpt")
    (unit,) = adapter.discover(data / "imported" / "chatgpt" / "chatgpt")
    result = adapter.read(unit, None, now=2e9)
    assert len(result.events) == 10_000 and result.session.messages == 10_000
    assert result.session.accounting.lines == 10_001 and "forks" not in result.session.extra


def test_branch_marks_follow_the_active_chain() -> None:
    nodes = [("r", None), ("a", "r"), ("b", "r"), ("a1", "a"), ("b1", "b"), ("b2", "b"), ("b2x", "b2")]
    marks, forks = branch_marks(nodes, "b2x")
    assert "r" not in marks
    assert marks["a"] == ("inactive", "r", 1, 2) and marks["a1"] == ("inactive", "r", 1, 2)
    assert marks["b"] == ("active", "r", 2, 2)
    assert marks["b1"] == ("inactive", "b", 1, 2) and marks["b2x"] == ("active", "b", 2, 2)
    assert [(f["fork"], f["active"], f["on_active_chain"]) for f in forks] == [("r", 2, True), ("b", 2, True)]
    assert tree_order(nodes) == ["r", "a", "a1", "b", "b1", "b2", "b2x"]
    assert branch_marks([("x", None), ("y", "x")], "y") == ({}, [])
    looped = tree_order([("p", "q"), ("q", "p")])  # a loop: nothing is lost, nothing repeats
    assert sorted(looped) == ["p", "q"]


def test_export_zip_caps_what_a_member_inflates_to(tmp_path: Path) -> None:
    from agtaild.adapters.kit.export_zip import ExportError, ExportZip

    zpath = _member(tmp_path / "m.zip", "conversations.json", json.dumps(["x" * 5000]).encode())
    with ExportZip(str(zpath), max_member_bytes=4096) as export:
        assert export.find(lambda p: p.name == "conversations.json") == ["conversations.json"]
        with pytest.raises(ExportError, match="inflates past 4096 bytes"):
            export.read("conversations.json")
    with ExportZip(str(zpath)) as export:
        assert export.read_json("conversations.json") == ["x" * 5000]
