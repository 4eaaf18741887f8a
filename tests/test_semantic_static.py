"""The local static model: its layout read with numpy + tokenizers, verified at install (files,
sha256, dimension, a smoke embedding), and — only where a real model is installed — end to end.

The model the tests build is tiny: a word-level tokenizer of a few words and a random int8 table."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from agtaild.semantic.embedders import EmbedError
from agtaild.semantic.static import MANIFEST, StaticModel, verify, write_manifest, write_safetensors
from tests.index_toy import toy_registry

__all__ = ["toy_registry"]

np = pytest.importorskip("numpy")
tokenizers = pytest.importorskip("tokenizers")

WORDS = ["[UNK]", "login", "test", "flaky", "auth", "fixture", "chart", "axis", "deploy", "release"]


def tiny_model(directory: Path, dimension: int = 16) -> Path:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    directory.mkdir(parents=True)
    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.save(str(directory / "tokenizer.json"))
    rng = np.random.default_rng(3)
    table = rng.integers(-127, 128, size=(len(WORDS), dimension)).astype(np.int8)
    scales = np.full(len(WORDS), 0.01, dtype=np.float32)
    write_safetensors(directory / "model.safetensors", {"embeddings": table, "scales": scales})
    write_manifest(directory, "tiny", dimension)
    return directory


def test_embeds_as_the_mean_of_its_tokens(tmp_path: Path) -> None:
    model = StaticModel.load(tiny_model(tmp_path / "m"), check_digests=True)
    assert model.dimension == 16 and model.model_id.startswith("static:tiny@")
    vecs = model.embed(["login test", "test login", "chart axis", "", "zzz qqq"])
    assert vecs.shape == (5, 16) and np.allclose(np.linalg.norm(vecs, axis=1), 1)
    assert np.allclose(vecs[0], vecs[1])  # a bag of tokens
    expected = model.table[[1, 2]].mean(axis=0)
    assert np.allclose(vecs[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert np.isfinite(vecs).all()


@pytest.mark.parametrize("damage", ["missing", "tampered", "dimension", "truncated", "no_manifest", "not_a_dir"])
def test_a_damaged_model_is_refused_with_the_reason(tmp_path: Path, damage: str) -> None:
    d = tiny_model(tmp_path / "m")
    if damage == "missing":
        (d / "tokenizer.json").unlink()
        why = "tokenizer.json is missing"
    elif damage == "tampered":
        raw = bytearray((d / "model.safetensors").read_bytes())
        raw[-1] ^= 1
        (d / "model.safetensors").write_bytes(bytes(raw))
        why = "does not match its sha256"
    elif damage == "dimension":
        doc = json.loads((d / MANIFEST).read_text())
        doc["dimension"] = 256
        (d / MANIFEST).write_text(json.dumps(doc))
        why = "dimension 256"
    elif damage == "truncated":
        (d / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes()[:100])
        write_manifest(d, "tiny", 16)
        why = "does not fit its header|bad header"
    elif damage == "no_manifest":
        (d / MANIFEST).unlink()
        why = "has no agtail-model.json"
    else:
        d = d / "model.safetensors"
        why = "not a directory"
    with pytest.raises(EmbedError, match=why):
        verify(d)


def test_install_checks_copies_and_turns_it_on(capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus: Path) -> None:
    source = tiny_model(tmp_path / "m")
    data = tmp_path / "data"
    roots = ["--data-dir", str(data), "--no-daemon", "--only-roots",
             "--root", f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}"]
    bad = tmp_path / "bad"
    shutil.copytree(source, bad)
    (bad / "tokenizer.json").write_text("{}")
    assert main([*roots, "embeddings", "install", "--from", str(bad)]) == 3
    assert "does not match its sha256" in capsys.readouterr().err
    assert not (data / "semantic.json").exists()
    assert main([*roots, "embeddings", "install", "--from", str(source)]) == 0
    out, err = capsys.readouterr()
    assert "installed static:tiny@" in out and "search by meaning on" in err
    assert json.loads((data / "semantic.json").read_text()) == {"backend": "static"}
    assert sorted(p.name for p in (data / "models" / "static").iterdir()) == [MANIFEST, "model.safetensors", "tokenizer.json"]
    assert main([*roots, "embeddings", "build"]) == 0
    assert "(100%)" in capsys.readouterr().out
    assert main([*roots, "--json", "search", "--mode", "semantic", "login test"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"]


def _real_model() -> Path | None:
    given = os.environ.get("AGTAIL_STATIC_MODEL")
    if given:
        return Path(given)
    shipped = Path(__file__).resolve().parent.parent / "models" / "minilm-l6-static"
    return shipped if (shipped / MANIFEST).exists() else None


def test_the_real_local_model_end_to_end(tmp_path: Path, toy_registry: Any) -> None:
    model_dir = _real_model()
    if model_dir is None:
        pytest.skip("no static model (models/minilm-l6-static is not in this checkout; AGTAIL_STATIC_MODEL names another)")
    from agtaild.query.service import Service
    from tests.index_toy import toy_config, toy_line, write_session

    root = tmp_path / "root"
    texts = {"login": "I retried the auth fixture and found a race in conftest",
             "chart": "render the plot with a logarithmic y axis",
             "deploy": "ship the new release to the production servers"}
    for sid, text in texts.items():
        write_session(root / f"{sid}.jsonl", [toy_line(t="meta", id=sid, cwd="/p"),
                                              toy_line(t="msg", role="user", text=text, ts="2024-01-01T00:00:00Z")])
    cfg = toy_config(tmp_path, root)
    svc = Service(cfg)
    svc.update_index()
    Path(cfg.data_dir, "semantic.json").write_text(json.dumps({"backend": "static", "model_dir": str(model_dir)}))
    try:
        verify(model_dir)
        assert svc.call("embeddings.build", {})["ready"]
        hits = svc.call("search", {"q": "the session where we fixed the flaky login test", "mode": "semantic"})["hits"]
        assert hits[0]["session"]["id"] == "login"
        hits = svc.call("search", {"q": "deploying to prod", "mode": "semantic"})["hits"]
        assert hits[0]["session"]["id"] == "deploy"
    finally:
        svc.close()
