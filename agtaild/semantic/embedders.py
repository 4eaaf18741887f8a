"""The Embedder interface, and opening the one the settings name.

An embedder turns texts into unit vectors of one fixed dimension. ``model_id`` names the
model exactly (backend, model, dimension, and for a local model its digest): the vector store
keeps it, and vectors made by another model are thrown away rather than compared.
Every failure of a backend is an :class:`EmbedError` with one sentence for /health and doctor.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from agtaild.errors import Refused
from agtaild.semantic.settings import Settings


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


def default_model_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / "models" / "static"


def open_embedder(settings: Settings, data_dir: str | Path) -> Embedder:
    """The configured embedder (an EmbedError when it cannot be had)."""
    if settings.backend == "openai":
        from agtaild.semantic.endpoint import EndpointEmbedder

        return EndpointEmbedder(settings)
    if settings.backend == "static":
        from agtaild.semantic.static import StaticModel

        return StaticModel.load(Path(settings.model_dir or default_model_dir(data_dir)).expanduser())
    raise EmbedError("search by meaning is off (no backend configured)")
