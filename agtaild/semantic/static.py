"""The local static model: a model2vec-style directory, loaded with numpy and tokenizers alone.

A static model is a table of one vector per token (distilled offline from a sentence
transformer: bench/distill_static.py); a text's vector is the mean of its tokens' rows,
normalised. No network, no torch, thousands of texts a second on two cores.

The directory:

    tokenizer.json        the Hugging Face tokenizers file
    model.safetensors     "embeddings": I8 [vocab, dimension], "scales": F32 [vocab] (row ≈ scale × int8)
                          (a float F32/F16 "embeddings" alone is read too)
    agtail-model.json     {"name": …, "dimension": N, "files": {"tokenizer.json": sha256, …}}

``verify`` checks every file named against its sha256, the dimension and one smoke embedding:
a directory that is incomplete or tampered with is refused with the reason.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agtaild.semantic.embedders import EmbedError, need_numpy

MANIFEST = "agtail-model.json"
REQUIRED = ("tokenizer.json", "model.safetensors")
MAX_TOKENS = 512
_DTYPES = {"I8": "int8", "F32": "float32", "F16": "float16", "I64": "int64"}


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_safetensors(path: Path) -> dict[str, Any]:
    """The tensors of a safetensors file (its format: an 8-byte header length, a JSON header, data)."""
    np = need_numpy()
    raw = path.read_bytes()
    if len(raw) < 8:
        raise EmbedError(f"{path.name} is not a safetensors file (too short)")
    (size,) = struct.unpack("<Q", raw[:8])
    try:
        header = json.loads(raw[8 : 8 + size])
    except ValueError:
        raise EmbedError(f"{path.name} is not a safetensors file (bad header)") from None
    base = 8 + size
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info.get("dtype"))
        if dtype is None:
            raise EmbedError(f"{path.name}: tensor {name} has dtype {info.get('dtype')}, not one of {', '.join(_DTYPES)}")
        try:
            start, end = info["data_offsets"]
            arr = np.frombuffer(raw[base + start : base + end], dtype=dtype)
            out[name] = arr.reshape(info["shape"])
        except (KeyError, TypeError, ValueError):
            raise EmbedError(f"{path.name}: tensor {name} does not fit its header (truncated or damaged)") from None
    return out


def write_safetensors(path: Path, tensors: dict[str, Any]) -> None:
    """Write numpy arrays as a safetensors file (the layout ``read_safetensors`` reads)."""
    names = {"int8": "I8", "float32": "F32", "float16": "F16"}
    header: dict[str, Any] = {}
    blobs: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        arr = tensors[name]
        data = arr.tobytes(order="C")
        header[name] = {"dtype": names[str(arr.dtype)], "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def write_manifest(directory: Path, name: str, dimension: int, extra: dict[str, Any] | None = None) -> None:
    """``agtail-model.json`` naming every other file of ``directory`` with its sha256."""
    files = {p.name: sha256_of(p) for p in sorted(directory.iterdir()) if p.is_file() and p.name != MANIFEST}
    doc = {"name": name, "dimension": dimension, "files": files, **(extra or {})}
    (directory / MANIFEST).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")


class StaticModel:
    def __init__(self, directory: Path, tokenizer: Any, table: Any, name: str) -> None:
        self.directory = directory
        self.tokenizer = tokenizer
        self.table = table  # float32 [vocab, dimension]
        self.dimension = int(table.shape[1])
        self.model_id = f"static:{name}/{self.dimension}"

    @classmethod
    def load(cls, directory: Path, *, check_digests: bool = False) -> StaticModel:
        np = need_numpy()
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise EmbedError("the local model needs tokenizers: pip install 'agtaild[semantic]'") from None
        manifest = read_manifest(directory)
        if check_digests:
            check_files(directory, manifest)
        try:
            tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        except Exception as exc:
            raise EmbedError(f"{directory}/tokenizer.json cannot be read: {exc}") from None
        tensors = read_safetensors(directory / "model.safetensors")
        if "embeddings" not in tensors:
            raise EmbedError(f"{directory}/model.safetensors has no 'embeddings' tensor")
        table = tensors["embeddings"].astype(np.float32)
        if table.ndim != 2:
            raise EmbedError(f"{directory}/model.safetensors: 'embeddings' is not a matrix")
        if "scales" in tensors:
            table = table * tensors["scales"].astype(np.float32).reshape(-1, 1)
        if int(manifest.get("dimension") or 0) != table.shape[1]:
            raise EmbedError(f"{directory}: the manifest says dimension {manifest.get('dimension')}, the table has {table.shape[1]}")
        # the digest of the table names the model exactly: the store rebuilds when it changes
        name = f"{manifest.get('name') or directory.name}@{sha256_of(directory / 'model.safetensors')[:12]}"
        return cls(directory, tokenizer, table, name)

    def embed(self, texts: Sequence[str]) -> Any:
        np = need_numpy()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        vocab = len(self.table)
        for row, enc in enumerate(encodings):
            ids = [i for i in enc.ids[:MAX_TOKENS] if 0 <= i < vocab]
            if ids:
                out[row] = self.table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        empty = norms[:, 0] == 0
        out[empty, 0] = 1.0  # a text of no known token: a fixed vector, never a zero one
        norms[empty] = 1.0
        return out / norms


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    if not directory.is_dir():
        raise EmbedError(f"{directory} is not a model directory (not a directory)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EmbedError(f"{directory} has no {MANIFEST}") from None
    except (OSError, ValueError) as exc:
        raise EmbedError(f"{path} cannot be read: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        raise EmbedError(f"{path}: expected an object with 'files'")
    return doc


def check_files(directory: Path, manifest: dict[str, Any]) -> None:
    files = manifest["files"]
    for name in REQUIRED:
        if name not in files:
            raise EmbedError(f"{MANIFEST} names no {name}")
    for name, digest in files.items():
        if "/" in name or name.startswith("."):
            raise EmbedError(f"{MANIFEST}: {name!r} is not a file name")
        path = directory / name
        if not path.is_file():
            raise EmbedError(f"{directory} is incomplete: {name} is missing")
        if sha256_of(path) != digest:
            raise EmbedError(f"{name} does not match its sha256 in {MANIFEST} (changed or damaged)")


def verify(directory: Path) -> StaticModel:
    """The model of ``directory``, every file checked and one smoke embedding made."""
    np = need_numpy()
    model = StaticModel.load(directory, check_digests=True)
    vec = model.embed(["a smoke test of the embedding model"])
    if vec.shape != (1, model.dimension) or not np.isfinite(vec).all():
        raise EmbedError(f"{directory}: the smoke embedding is not a finite vector of dimension {model.dimension}")
    return model
