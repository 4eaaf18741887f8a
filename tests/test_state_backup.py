"""`agtail state export` / `state import`: a JSON backup of the whole user state (labels,
marks, removals, rules, the secrets allowlist) that round-trips, and a bad or tampered backup
is refused whole (exit 2) with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.cli import main
from agtaild.userstate import allowlist, rules
from agtaild.userstate.store import Change, UserState

A = ("", "claude-code", "s1")
B = ("laptop", "codex", "s2")
FP = "ab" * 32


def cli(data: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["--no-daemon", "--data-dir", str(data), "--only-roots", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def filled(data: Path) -> UserState:
    st = UserState(data)
    st.apply(
        [
            Change(A, "label", "acme", key="client"),
            Change(A, "label", "x", key="gone"),
            Change(B, "star", "1"),
            Change(B, "hide", "1", who="agent"),
            Change(B, "title", "Ünïcode title ✓", who="agent"),
        ]
    )
    st.apply([Change(A, "label", None, key="gone")])  # a removal is kept
    rules.add(st, "cwd:~/work/acme/**", "client", "acme")
    allowlist.allow(st, FP, "revoked")
    return st


def test_a_backup_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    filled(tmp_path / "a").close()
    code, _out, _err = cli(tmp_path / "a", capsys, "state", "export", "--to", str(tmp_path / "backup.json"))
    assert code == 0 and (tmp_path / "backup.json").stat().st_mode & 0o077 == 0
    code, out, _ = cli(tmp_path / "b", capsys, "--json", "state", "import", str(tmp_path / "backup.json"))
    assert code == 0 and json.loads(out) == {
        "dry_run": False,
        "changes": 5,
        "rules": 1,
        "secret_allowlist": 1,
    }
    a, b = UserState(tmp_path / "a"), UserState(tmp_path / "b")
    assert b.dump() == a.dump()  # who and when kept, the removal too
    assert [(r["filter"], r["key"], r["value"]) for r in rules.listed(b)] == [
        ("cwd:~/work/acme/**", "client", "acme")
    ]
    assert allowlist.allowed(b)[FP]["reason"] == "revoked"
    # Importing the same backup again changes nothing, and a stdout export is the same document.
    code, out, _ = cli(tmp_path / "b", capsys, "--json", "state", "import", str(tmp_path / "backup.json"))
    assert json.loads(out) == {"dry_run": False, "changes": 0, "rules": 0, "secret_allowlist": 0}
    code, out, _ = cli(tmp_path / "b", capsys, "state", "export")
    again = json.loads(out)
    assert again["sha256"] == json.loads((tmp_path / "backup.json").read_text())["sha256"]


def test_a_newer_change_here_is_not_undone_by_an_older_backup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    st = filled(tmp_path / "a")
    cli(tmp_path / "a", capsys, "state", "export", "--to", str(tmp_path / "backup.json"))
    st.apply([Change(A, "label", "globex", key="client")])
    st.close()
    code, out, _ = cli(tmp_path / "a", capsys, "--json", "state", "import", str(tmp_path / "backup.json"))
    assert code == 0 and json.loads(out)["changes"] == 0
    assert UserState(tmp_path / "a").of([A])[A]["labels"] == {"client": "globex"}


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda d: d["labels"][0].__setitem__(4, "evil"), "does not match its sha256"),
        (lambda d: d.__setitem__("format", "something"), "not a backup"),
        (lambda d: d.__setitem__("version", 2), "version 2"),
    ],
)
def test_a_tampered_backup_is_refused_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit, says: str
) -> None:  # type: ignore[no-untyped-def]
    filled(tmp_path / "a").close()
    cli(tmp_path / "a", capsys, "state", "export", "--to", str(tmp_path / "backup.json"))
    doc = json.loads((tmp_path / "backup.json").read_text())
    edit(doc)
    (tmp_path / "backup.json").write_text(json.dumps(doc))
    code, _out, err = cli(tmp_path / "b", capsys, "state", "import", str(tmp_path / "backup.json"))
    assert code == 2 and says in err
    assert UserState(tmp_path / "b").dump() == {"version": 1, "labels": [], "marks": []}


def test_a_bad_row_refuses_everything_even_with_a_matching_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.userstate.backup import digest

    filled(tmp_path / "a").close()
    cli(tmp_path / "a", capsys, "state", "export", "--to", str(tmp_path / "backup.json"))
    for bad_row, table, says in (
        (["", "claude-code", "s9", "k", "v\x07", "user", 1.0], "labels", "control"),
        (["", "claude-code", "s9", "k", "v" * 10_000, "user", 1.0], "labels", "at most 256"),
        (["", "claude-code", "s9", "k", "v", "root", 1.0], "labels", "who made a change"),
        (["", "claude-code", "s9", "k", "v", "user", 4e12], "labels", "not after now"),
        (["", "claude-code", "s9", "pin", "1", "user", 1.0], "marks", "no mark"),
        (["not a filter", "k", "v", 1.0], "rules", "FIELD OP VALUE"),
    ):
        doc = json.loads((tmp_path / "backup.json").read_text())
        doc[table].append(bad_row)
        doc["sha256"] = digest(doc)
        (tmp_path / "bad.json").write_text(json.dumps(doc))
        code, _out, err = cli(tmp_path / "b", capsys, "state", "import", str(tmp_path / "bad.json"))
        assert code == 2 and says in err, (bad_row, err)
        assert UserState(tmp_path / "b").dump() == {"version": 1, "labels": [], "marks": []}
    code, _out, err = cli(tmp_path / "b", capsys, "state", "import", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err
    code, out, _ = cli(
        tmp_path / "b", capsys, "--json", "state", "import", "--dry-run", str(tmp_path / "backup.json")
    )
    assert code == 0 and json.loads(out)["changes"] == 5
    assert UserState(tmp_path / "b").dump()["labels"] == []  # a dry run writes nothing
