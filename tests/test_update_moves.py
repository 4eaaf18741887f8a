"""An update's changes name each session once: moved between two units is "updated"."""

from __future__ import annotations

from agtaild.index.update import fold_moves


def test_a_session_removed_at_one_path_and_added_at_another_is_updated_there() -> None:
    changed = [
        {"agent": "opencode", "id": "s1", "path": "/data/archive/opencode/opencode.db#s1", "action": "removed", "collection": None},
        {"agent": "opencode", "id": "s2", "path": "/roots/opencode.db#s2", "action": "removed", "collection": None},
        {"agent": "opencode", "id": "s1", "path": "/roots/opencode.db#s1", "action": "added", "collection": None},
        {"agent": "claude-code", "id": "s3", "path": "/roots/a.jsonl", "action": "added", "collection": None},
    ]
    assert fold_moves(changed) == [
        {"agent": "opencode", "id": "s2", "path": "/roots/opencode.db#s2", "action": "removed"},
        {"agent": "opencode", "id": "s1", "path": "/roots/opencode.db#s1", "action": "updated",
         "from": "/data/archive/opencode/opencode.db#s1"},
        {"agent": "claude-code", "id": "s3", "path": "/roots/a.jsonl", "action": "added"},
    ]


def test_the_same_id_in_another_collection_is_not_a_move() -> None:
    changed = [
        {"agent": "codex", "id": "s1", "path": "/roots/s1.jsonl", "action": "removed", "collection": None},
        {"agent": "codex", "id": "s1", "path": "/data/imports/laptop/codex/s1.jsonl", "action": "added", "collection": "laptop"},
    ]
    assert [c["action"] for c in fold_moves(changed)] == ["removed", "added"]
