"""The Embedder interface, its error, and the checks every backend's answer passes.

An embedder turns texts into unit vectors of one fixed dimension. ``model_id`` names the
model exactly (backend, model, dimension, and for a local model its digest): the vector store
keeps it, and vectors made by another model are thrown away rather than compared.
Every failure of a backend is an :class:`EmbedError` with one sentence for /health and doctor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from agtaild.errors import Refused


class EmbedError(Refused):
    """A backend could not embed (unreachable, timed out, a bad answer, a broken model)."""


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> Any:
        """A float32 array (len(texts) × dimension) of unit rows, finite."""
        ...


def need_numpy() -> Any:
    """numpy, or a clear error naming the extra that brings it."""
    try:
        import numpy
    except ImportError:
        raise EmbedError("search by meaning needs numpy: pip install 'agtaild[semantic]'") from None
    return numpy


def checked(vectors: Any, count: int, dimension: int | None, source: str) -> Any:
    """``vectors`` as unit float32 rows, or an EmbedError saying what is wrong with them."""
    np = need_numpy()
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError):
        raise EmbedError(f"{source} answered something that is not a list of vectors") from None
    if arr.ndim != 2 or arr.shape[0] != count:
        raise EmbedError(f"{source} answered {arr.shape[0] if arr.ndim else 0} vectors for {count} texts")
    if dimension is not None and arr.shape[1] != dimension:
        raise EmbedError(f"{source} answered vectors of dimension {arr.shape[1]}, expected {dimension}")
    if arr.shape[1] == 0:
        raise EmbedError(f"{source} answered empty vectors")
    if not np.isfinite(arr).all():
        raise EmbedError(f"{source} answered vectors with NaN or infinite values")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if (norms == 0).any():
        raise EmbedError(f"{source} answered a zero vector")
    return arr / norms
