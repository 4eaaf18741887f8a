"""`agtail doctor`, the agents part: agents found, their roots and sessions, and a warning when
one format version has a jump in unmapped (`unknown`) records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agtaild.cli import main
from agtaild.cli.doctor import run_doctor
from agtaild.cli.doctor_agents import jumps
from agtaild.config import load_config

QWEN = "real/qwen-0.15.10"
BASIC = "projects/-tmp-rt-qwen-home-src-demo-app/chats/71f3d6dc-4f49-4116-bbb0-74b6299299e8.jsonl"


def _index(tmp_path: Path, roots: list[str]) -> object:
    args = ["--json", "--no-daemon", "--data-dir", str(tmp_path / "data"), "--only-roots"]
    for r in roots:
        args += ["--root", r]
    assert main([*args, "index"]) == 0
    return load_config(data_dir=str(tmp_path / "data"), root_options=roots, only_roots=True)


def test_lists_agents_roots_sessions_and_versions(tmp_path: Path, corpus: Path, capsys) -> None:
    roots = [f"qwen={corpus / QWEN}", f"continue={corpus / 'real/continue-1.5.47'}"]
    config = _index(tmp_path, roots)
    capsys.readouterr()
    doc = run_doctor(config, env={"HOME": str(tmp_path)})
    agents = {a["agent"]: a for a in doc["agents"]}
    assert set(agents) == {"qwen", "continue"}
    qwen = agents["qwen"]
    assert qwen["roots"] == [str(corpus / QWEN)] and qwen["sessions"] == 3
    assert [(v["version"], v["sessions"], v["unknown"]) for v in qwen["formats"]] == [("0.15.10", 3, 0)]
    assert agents["continue"]["formats"][0]["version"] is None  # Continue records no version
    check = next(c for c in doc["checks"] if c["name"] == "agent qwen")
    assert check["status"] == "ok" and "3 sessions" in check["message"]


def test_a_version_with_many_unknown_records_is_flagged(tmp_path: Path, corpus: Path, capsys) -> None:
    root = tmp_path / "qwen"
    shutil.copytree(corpus / QWEN, root)
    # the same agent, a newer version that writes record types agtail does not know
    lines = []
    for n, raw in enumerate((corpus / QWEN / BASIC).read_text().splitlines()):
        rec = json.loads(raw)
        rec["version"] = "0.16.0"
        rec["sessionId"] = "new-format-session"
        if rec["type"] == "tool_result":
            rec["type"] = "tool_outcome"  # a renamed record type
        if n % 3 == 0 and rec["type"] == "system":
            rec["subtype"] = "context_snapshot"
        lines.append(json.dumps(rec))
    new = root / "projects" / "-x" / "chats" / "new-format-session.jsonl"
    new.parent.mkdir(parents=True)
    new.write_text("\n".join(lines) + "\n")
    config = _index(tmp_path, [f"qwen={root}"])
    capsys.readouterr()
    doc = run_doctor(config, env={"HOME": str(tmp_path)})
    versions = {v["version"]: v for v in next(a for a in doc["agents"] if a["agent"] == "qwen")["formats"]}
    assert versions["0.15.10"]["unknown_share"] == 0.0
    assert versions["0.16.0"]["unknown"] >= 8 and versions["0.16.0"]["unknown_share"] > 0.3
    check = next(c for c in doc["checks"] if c["name"] == "agent qwen")
    assert check["status"] == "warn" and "0.16.0" in check["message"] and "0.15.10" in check["message"]
    # the text output says it too
    args = ["--no-daemon", "--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"qwen={root}"]
    assert main([*args, "doctor"]) == 0
    assert "[WARN] agent qwen" in capsys.readouterr().out


def test_no_index_yet_and_the_jump_rule(tmp_path: Path, corpus: Path) -> None:
    config = load_config(
        data_dir=str(tmp_path / "data"), root_options=[f"qwen={corpus / QWEN}"], only_roots=True
    )
    doc = run_doctor(config, env={"HOME": str(tmp_path)})
    [qwen] = doc["agents"]
    assert qwen["sessions"] is None and qwen["formats"] == []
    assert next(c for c in doc["checks"] if c["name"] == "agent qwen")["status"] == "info"

    def v(name: str, events: int, unknown: int) -> dict:
        return {"version": name, "events": events, "unknown": unknown, "unknown_share": unknown / events}

    assert jumps([v("1", 100, 1), v("2", 100, 2)]) == []  # small and steady
    assert [j["version"] for j in jumps([v("1", 100, 1), v("2", 100, 20)])] == ["2"]
    assert [j["version"] for j in jumps([v("1", 100, 30)])] == ["1"]  # alone, but high
    # two versions both mostly unmapped: no jump between them, but each is high on its own
    assert [j["version"] for j in jumps([v("1", 100, 30), v("2", 100, 35)])] == ["1", "2"]
    assert jumps([v("1", 100, 8), v("2", 100, 9)]) == []  # similar and moderate: no jump
