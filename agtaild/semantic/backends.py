"""Opening the embedder the settings name (each backend imported only when named)."""

from __future__ import annotations

from pathlib import Path

from agtaild.semantic.embedders import Embedder, EmbedError
from agtaild.semantic.settings import Settings


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
