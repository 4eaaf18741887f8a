"""doctor's check of search by meaning: the settings, the model or endpoint answering, the coverage.

The endpoint (or model) is asked once, with the query path (one try, the configured timeout):
a hang, a 500, a wrong dimension or NaNs is the check's message, never a failed doctor run.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def semantic_check(config: Any) -> dict[str, str]:
    from agtaild.errors import AgtailError
    from agtaild.semantic.settings import settings_path

    name = "search by meaning"
    path = settings_path(config.data_dir)
    if not path.exists():
        return {"name": name, "status": "info", "message": f"off (no {path.name}; docs/semantic.md)"}
    from agtaild.semantic.engine import Engine

    engine = Engine(config.data_dir, Path(config.index_path))
    try:
        status = engine.status()
        if status.get("state") == "off":
            return {"name": name, "status": "info", "message": f"off ({path})"}
        if status.get("error"):
            return {"name": name, "status": "warn", "message": status["error"]}
        try:
            engine.query_vector("doctor: a smoke test of the embedding model")
            model = engine.embedder().model_id
        except AgtailError as exc:
            return {"name": name, "status": "warn",
                    "message": f"{status['backend']}: {exc} (full-text search is unaffected)"}
        coverage = f"{status.get('events_embedded', 0)} of {status.get('events', 0)} events embedded"
        if status.get("model") and status["model"] != model:
            return {"name": name, "status": "warn", "message": f"{model} answers; the vectors are another model's ({coverage}): "
                    "they are rebuilt by the next build"}
        return {"name": name, "status": "ok", "message": f"{status['backend']} {model}: {coverage}"}
    finally:
        engine.close()
