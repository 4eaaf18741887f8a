"""A tiny deterministic embedder and a fake OpenAI-compatible embeddings endpoint, for the tests.

``HashEmbedder`` hashes each word's character trigrams (with the word's edges marked) into a
small vector: texts sharing word pieces ("authenticate" / "authentication") are near, texts
sharing nothing are far; no model, no randomness, the same vector on every machine.

``FakeEndpoint`` serves ``POST /v1/embeddings`` on 127.0.0.1 with that embedder, and can be told
to misbehave (hang, 500, wrong dimension, NaN) or be stopped (unreachable).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

# Importing this module skips the test module that does, where numpy (the semantic extra) is missing.
np = pytest.importorskip("numpy", reason="search by meaning needs numpy: pip install -e '.[dev]'")

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    def __init__(self, dimension: int = 64, name: str = "hash") -> None:
        self.dimension = dimension
        self.model_id = f"test:{name}/{dimension}"
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                marked = f"<{word}>"
                for i in range(len(marked) - 2):
                    h = hashlib.blake2b(marked[i : i + 3].encode(), digest_size=4).digest()
                    n = int.from_bytes(h, "little")
                    out[row, n % self.dimension] += 1.0 if (n >> 31) & 1 else -1.0
            norm = np.linalg.norm(out[row])
            if norm == 0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out


class FakeEndpoint:
    """``behaviour``: ok | hang | error500 | wrong_dimension | nan | garbage."""

    def __init__(self, dimension: int = 64) -> None:
        self.embedder = HashEmbedder(dimension)
        self.behaviour = "ok"
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                mode = outer.behaviour
                if mode == "hang":
                    outer.release.wait(10)
                    return
                if mode == "error500":
                    self._send(500, {"error": {"message": "the model crashed"}})
                    return
                if mode == "garbage":
                    self._send(200, {"nothing": True})
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vecs = outer.embedder.embed(texts).tolist()
                if mode == "wrong_dimension":
                    vecs = [v[:-1] for v in vecs]
                if mode == "nan":
                    vecs[0][0] = float("nan")
                data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)]
                self._send(200, {"object": "list", "data": data, "model": body["model"]}, allow_nan=mode == "nan")

            def _send(self, status: int, doc: Any, allow_nan: bool = False) -> None:
                raw = json.dumps(doc, allow_nan=allow_nan).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        time.sleep(0.05)
