"""What the user configured for search by meaning: ``<data dir>/semantic.json``.

A file rather than flags, so the daemon and every command agree without passing options
around; absent means off (no engine is made, no note is shown). Bad content is a clear error
naming the file and the key, and it turns the feature off, never full-text search.

    {"backend": "static", "model_dir": "/path/to/model"}
    {"backend": "openai", "url": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text",
     "key_env": "OPENAI_API_KEY", "batch": 32, "timeout": 20}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agtaild.errors import UsageError

FILE_NAME = "semantic.json"
BACKENDS = ("off", "static", "openai")
_KEYS = {
    "backend", "model_dir", "url", "model", "key_env", "key_file", "dimension", "batch", "timeout",
    "texts_per_hour",
}


@dataclass(frozen=True)
class Settings:
    backend: str = "off"
    #: static: the model directory (default: <data dir>/models/static, where `install` puts one).
    model_dir: str | None = None
    #: openai: the endpoint's base URL (…/v1), the model name, where the key is.
    url: str | None = None
    model: str | None = None
    key_env: str | None = None
    key_file: str | None = None
    #: openai: the dimension the endpoint must answer (None: whatever its first answer has).
    dimension: int | None = None
    batch: int = 32
    timeout: float = 20.0
    #: The background embedder's budget: texts per hour (None: as fast as low priority allows).
    texts_per_hour: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return self.backend != "off"

    def key(self) -> str | None:
        """The endpoint's API key, from the environment variable or the file named."""
        if self.key_env:
            value = os.environ.get(self.key_env)
            if value:
                return value.strip()
        if self.key_file:
            try:
                return Path(self.key_file).expanduser().read_text(encoding="utf-8").strip() or None
            except OSError as exc:
                raise UsageError(f"{FILE_NAME}: key_file {self.key_file}: {exc.strerror or exc}") from None
        return None


def settings_path(data_dir: str | Path) -> Path:
    return Path(data_dir) / FILE_NAME


def load_settings(data_dir: str | Path) -> Settings:
    """The settings of ``data_dir``; ``Settings()`` (off) when there is no file."""
    path = settings_path(data_dir)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})") from None
    return parse_settings(doc, str(path))


def parse_settings(doc: Any, where: str = FILE_NAME) -> Settings:
    if not isinstance(doc, dict):
        raise UsageError(f"{where}: expected a JSON object")
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; keys: {', '.join(sorted(_KEYS))}")
    backend = doc.get("backend", "off")
    if backend not in BACKENDS:
        raise UsageError(f"{where}: backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    for name in ("model_dir", "url", "model", "key_env", "key_file"):
        if doc.get(name) is not None and not isinstance(doc[name], str):
            raise UsageError(f"{where}: {name} must be a string")
    for name, low, high in (("dimension", 1, 65536), ("batch", 1, 2048), ("texts_per_hour", 1, 10**9)):
        value = doc.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high):
            raise UsageError(f"{where}: {name} must be an integer from {low} to {high}")
    timeout = doc.get("timeout", 20.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0.1 <= timeout <= 600:
        raise UsageError(f"{where}: timeout must be a number of seconds from 0.1 to 600")
    if backend == "openai":
        if not doc.get("url") or not doc.get("model"):
            raise UsageError(f"{where}: the openai backend needs url and model")
        if not str(doc["url"]).startswith(("http://", "https://")):
            raise UsageError(f"{where}: url must start with http:// or https://")
    return Settings(
        backend=backend,
        model_dir=doc.get("model_dir"),
        url=doc.get("url"),
        model=doc.get("model"),
        key_env=doc.get("key_env"),
        key_file=doc.get("key_file"),
        dimension=doc.get("dimension"),
        batch=doc.get("batch") or 32,
        timeout=float(timeout),
        texts_per_hour=doc.get("texts_per_hour"),
    )
