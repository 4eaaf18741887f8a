"""`agtail embeddings`: search by meaning's vectors — their status, building them, installing a model.

``status`` says the backend, model, coverage and speed; ``build`` embeds what is not embedded
yet (in-process it runs now; a daemon's embedder is woken, and ``--wait`` follows it to the
end); ``install --from PATH`` checks a local model directory (files, sha256, dimension, a smoke
embedding) and copies it into the data dir (docs/semantic.md).
"""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "embeddings",
        parents=[common],
        help="search by meaning: the vectors' status, build them, install a local model",
        description="The vectors behind `search --mode semantic|hybrid` (docs/semantic.md).",
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    s = verbs.add_parser("status", parents=[common], help="backend, model, coverage, speed, health")
    s.set_defaults(func=cmd_status)
    b = verbs.add_parser("build", parents=[common], help="embed what is not embedded yet")
    b.add_argument("--wait", action="store_true", help="with a daemon: wait until every event is embedded")
    b.set_defaults(func=cmd_build)
    i = verbs.add_parser("install", parents=[common], help="check a static model directory and use it")
    i.add_argument("--from", dest="source", required=True, metavar="PATH", help="the model directory")
    i.set_defaults(func=cmd_install)
    p.set_defaults(func=cmd_status)


def describe(doc: dict[str, Any]) -> str:
    """One or two lines for a person."""
    if not doc.get("enabled"):
        return "search by meaning: off" + (f" ({doc['error']})" if doc.get("error") else " (docs/semantic.md)")
    parts = [f"backend {doc.get('backend')}", f"model {doc.get('model') or '?'}"]
    if doc.get("events") is not None:
        parts.append(f"{doc.get('events_embedded', 0)}/{doc['events']} events ({doc.get('coverage', 0):.0%})")
    if doc.get("chunks") is not None:
        parts.append(f"{doc['chunks']} vectors")
    if doc.get("rate"):
        parts.append(f"{doc['rate']:g} texts/s")
    line = "search by meaning: " + ", ".join(parts) + f"; {doc.get('state')}"
    if doc.get("error"):
        line += f"\n  error: {doc['error']}" + (f" (next try in {doc['retry_in']} s)" if doc.get("retry_in") is not None else "")
    return line


def _show(ctx: Any, doc: dict[str, Any]) -> int:
    if ctx.json:
        ctx.out_json(doc)
    else:
        print(describe(doc))
    return 1 if doc.get("error") else 0


def cmd_status(ctx: Any) -> int:
    from agtaild.cli.query import call_once

    return _show(ctx, call_once(ctx, "embeddings.status", {}))


def cmd_build(ctx: Any) -> int:
    import time

    from agtaild.cli.query import _local_service, open_backend

    backend = open_backend(ctx)
    try:
        doc = backend.call("embeddings.build", {})
        if _local_service(backend) is None and ctx.args.wait:
            while not doc.get("ready") and not doc.get("error"):
                ctx.err(f"agtail: embedding: {doc.get('coverage', 0):.0%} of {doc.get('events')} events")
                time.sleep(1.0)
                doc = backend.call("embeddings.status", {})
    finally:
        backend.close()
    return _show(ctx, doc)


def cmd_install(ctx: Any) -> int:
    import json
    import shutil
    from pathlib import Path

    from agtaild.semantic.backends import default_model_dir
    from agtaild.semantic.settings import settings_path
    from agtaild.semantic.static import read_manifest, verify

    source = Path(ctx.args.source).expanduser()
    model = verify(source)  # refused with the reason before anything is copied
    data_dir = Path(ctx.config.data_dir)
    target = default_model_dir(data_dir)
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in [*read_manifest(source)["files"], "agtail-model.json"]:
        shutil.copy2(source / name, staging / name)
    verify(staging)
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    path = settings_path(data_dir)
    if not path.exists():
        path.write_text(json.dumps({"backend": "static"}, indent=2) + "\n", encoding="utf-8")
        ctx.err(f"agtail: search by meaning on: {path}")
    print(f"installed {model.model_id} into {target}")
    return 0
