"""`agtail embeddings` and `search --mode semantic|hybrid` from the command line, in-process and
through a real daemon (its background embedder, /health, and a failing endpoint)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from tests.daemon_proc import DaemonProc, copy_claude, wait_until
from tests.pty_run import AGTAIL
from tests.semantic_fakes import FakeEndpoint
from tests.test_cli_startup import AGTAIL as IMPORTTIME
from tests.test_cli_startup import heavy, imported


@pytest.fixture
def endpoint() -> Any:
    server = FakeEndpoint()
    yield server
    server.stop()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_embeddings_in_process(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path, endpoint: FakeEndpoint
) -> None:
    data = tmp_path / "data"
    roots = [
        "--data-dir",
        str(data),
        "--no-daemon",
        "--only-roots",
        "--root",
        f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}",
    ]
    code, out, _ = run(capsys, *roots, "embeddings", "status")
    assert code == 0 and out.startswith("search by meaning: off")
    code, _, err = run(capsys, *roots, "embeddings", "build")
    assert code == 3 and "off" in err
    (data / "semantic.json").write_text(
        json.dumps({"backend": "openai", "url": endpoint.url, "model": "fake"})
    )
    code, _, err = run(capsys, *roots, "search", "the")
    assert code == 0 and "agtail: search by meaning covers 0% of the index: full-text ranking" in err
    code, out, _ = run(capsys, *roots, "embeddings", "build")
    assert code == 0 and "(100%)" in out and "backend openai" in out
    code, out, _ = run(capsys, *roots, "--json", "search", "--mode", "semantic", "--limit", "3", "tests")
    doc = json.loads(out)
    assert code == 0 and len(doc["hits"]) == 3 and all(h["found_by"] == ["semantic"] for h in doc["hits"])
    code, out, err = run(capsys, *roots, "search", "--mode", "hybrid", "--limit", "5", "test")
    assert code == 0 and "[full-text" in out and "note" not in err
    endpoint.behaviour = "error500"
    code, out, err = run(capsys, *roots, "search", "test")  # the default is hybrid now; it falls back
    assert code == 0 and out and "semantic ranking unavailable" in err
    code, out, _ = run(capsys, *roots, "embeddings", "status")
    assert code == 0 and "100%" in out  # status asks no endpoint


def vectors_of_events(health: dict[str, Any]) -> bool:
    """The vectors cover an index that has events: "ready" is also true of an empty index, as
    the daemon's one is for a moment before its first update stores the sessions."""
    return bool(health["embeddings"].get("events"))


def test_the_daemon_embeds_in_the_background(tmp_path: Path, endpoint: FakeEndpoint) -> None:
    base = tmp_path
    roots = {"claude-code": copy_claude(base / "claude")}
    d = DaemonProc(base, roots, extra=["--no-archive"])
    d.data_dir.mkdir(parents=True)
    (d.data_dir / "semantic.json").write_text(
        json.dumps({"backend": "openai", "url": endpoint.url, "model": "fake", "timeout": 1})
    )
    try:
        d.start()
        health = wait_until(
            lambda: (h := d.unix().health()).get("embeddings", {}).get("ready") and vectors_of_events(h) and h,
            60,
            "the vectors",
        )
        emb = health["embeddings"]
        assert emb["coverage"] == 1 and emb["healthy"] and emb["events"] > 0
        client = d.unix()
        doc = client.call("search", {"q": "test", "limit": 5})
        assert doc["mode"] == "hybrid" and doc["hits"] and all(h["found_by"] for h in doc["hits"])
        rest = d.tcp().get("/embeddings")
        assert rest["ready"] and rest["model"].startswith("openai:fake@")
        # the CLI through the daemon
        cmd = [*AGTAIL, "--data-dir", str(d.data_dir), "embeddings", "build", "--wait"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert "(100%)" in proc.stdout
        # A search by meaning through the daemon: the daemon embeds the query; the CLI process
        # imports none of numpy, tokenizers or the semantic package (nor the usual heavy ones).
        for mode in ("hybrid", "semantic"):
            probe = [
                *IMPORTTIME,
                "--data-dir",
                str(d.data_dir),
                "search",
                "--mode",
                mode,
                "--limit",
                "3",
                "test",
            ]
            proc = subprocess.run(probe, capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, proc.stderr[-3000:]
            assert (
                f"[{'full-text+' if mode == 'hybrid' else ''}semantic]" in proc.stdout
                or "[semantic]" in proc.stdout
            )
            modules = imported(proc.stderr)
            assert "agtail_client" in modules  # it did ask the daemon
            assert heavy(modules) == []
            assert (
                sorted(
                    m
                    for m in modules
                    if m.split(".")[0] in ("numpy", "tokenizers") or m.startswith("agtaild.semantic")
                )
                == []
            )
        endpoint.behaviour = "error500"
        words = client.call("search", {"q": "test", "mode": "words", "limit": 5})
        assert words["hits"]  # lexical search: unaffected
        with pytest.raises(Exception, match="HTTP 500"):
            client.call("search", {"q": "test", "mode": "semantic"})
        emb = d.unix().health()["embeddings"]
        assert emb["state"] == "error" and "HTTP 500" in emb["error"] and not emb["healthy"]
        fallback = client.call("search", {"q": "test", "limit": 5})
        assert fallback["hits"] and "failing" in fallback["note"]
    finally:
        d.cleanup()


@pytest.mark.slow
@pytest.mark.parametrize(
    "behaviour,why",
    [
        ("hang", "did not answer within 1"),
        ("error500", "HTTP 500"),
        ("wrong_dimension", "dimension 63, expected 64"),
        ("nan", "NaN"),
        ("stopped", "unreachable"),
    ],
)
def test_a_bad_endpoint_through_the_daemon(
    tmp_path: Path, endpoint: FakeEndpoint, behaviour: str, why: str
) -> None:
    """Each way an endpoint goes bad: the daemon's lexical search answers as before, a hybrid
    search falls back to it with a note, only an explicit semantic search gets the error, and
    /health, doctor and (after the embedder's next try) the backoff say what is wrong."""
    from agtaild.cli.doctor_semantic import semantic_check
    from agtaild.config import Config

    roots = {"claude-code": copy_claude(tmp_path / "claude")}
    d = DaemonProc(tmp_path, roots, extra=["--no-archive", "--debounce", "0.05"])
    d.data_dir.mkdir(parents=True)
    (d.data_dir / "semantic.json").write_text(
        json.dumps({"backend": "openai", "url": endpoint.url, "model": "fake", "dimension": 64, "timeout": 1})
    )
    try:
        d.start()
        wait_until(
            lambda: (h := d.unix().health()).get("embeddings", {}).get("ready") and vectors_of_events(h), 60, "the vectors"
        )
        client = d.unix()
        before = client.call("search", {"q": "hello", "mode": "words", "limit": 10})
        assert before["hits"]
        if behaviour == "stopped":
            endpoint.stop()
        else:
            endpoint.behaviour = behaviour
        with pytest.raises(Exception, match=why):
            client.call("search", {"q": "hello", "mode": "semantic"})
        assert client.call("search", {"q": "hello", "mode": "words", "limit": 10}) == before
        hybrid = client.call("search", {"q": "hello", "mode": "hybrid", "limit": 10})
        assert hybrid["hits"] and "semantic ranking unavailable" in hybrid["note"] and why in hybrid["note"]
        emb = d.unix().health()["embeddings"]
        assert emb["state"] == "error" and why in emb["error"] and not emb["healthy"] and not emb["ready"]
        check = semantic_check(Config(data_dir=str(d.data_dir), roots=[], archive=False))
        assert check["status"] == "warn" and why in check["message"], check
        # A new session: the daemon's embedder tries the endpoint, fails, and backs off.
        session = next(Path(roots["claude-code"]).rglob("*.jsonl"))
        (session.parent / "0000aaaa-new-session.jsonl").write_bytes(session.read_bytes())
        emb = wait_until(
            lambda: (e := d.unix().health()["embeddings"]).get("retry_in") and e, 60, "the backoff"
        )
        assert 0 < emb["retry_in"] <= 30 and why in emb["error"]
        assert client.call("search", {"q": "hello", "mode": "words", "limit": 10})["hits"]
    finally:
        d.cleanup()
