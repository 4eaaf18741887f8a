"""Helpers for the chat-service import tests: export zips made from the hand-made samples
in tests/corpus/<agent>/synthetic-agtail/export (docs/adapters.md, "Chat services")."""

from __future__ import annotations

import zipfile
from pathlib import Path
from types import SimpleNamespace

CORPUS = Path(__file__).resolve().parent / "corpus"
#: service on the command line → (agent id, sample folder)
SAMPLES = {
    "chatgpt": ("chatgpt", CORPUS / "chatgpt" / "synthetic-agtail"),
    "claude-ai": ("claude-ai", CORPUS / "claude-ai" / "synthetic-agtail"),
    "gemini": ("gemini-apps", CORPUS / "gemini-apps" / "synthetic-agtail"),
}


def zip_dir(src: Path, dst: Path) -> Path:
    """``src``'s files as a zip at ``dst``, named relative to ``src`` (as the services ship them)."""
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in src.rglob("*") if p.is_file()):
            zf.write(path, path.relative_to(src).as_posix())
    return dst


def sample_zip(service: str, tmp: Path) -> Path:
    return zip_dir(SAMPLES[service][1] / "export", tmp / f"{service}-export.zip")


def store_config(data_dir: Path) -> SimpleNamespace:
    """What agtaild.store.chat_import needs of a config."""
    return SimpleNamespace(data_dir=str(data_dir), import_dir=data_dir / "imported")


if __name__ == "__main__":  # regenerate the stored samples: python -m tests.chat_exports
    import shutil
    import tempfile

    from agtaild.store.chat_import import import_export

    with tempfile.TemporaryDirectory() as tmp:
        for service, (agent, folder) in SAMPLES.items():
            cfg = store_config(Path(tmp) / "data")
            import_export(cfg, service, str(sample_zip(service, Path(tmp))), "samples")
            shutil.rmtree(folder / "store", ignore_errors=True)
            shutil.copytree(Path(tmp) / "data" / "imported" / "samples" / agent, folder / "store")
            print(f"wrote {folder / 'store'}")
