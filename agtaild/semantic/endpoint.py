"""An OpenAI-compatible ``/v1/embeddings`` client: Ollama, llama.cpp's server, LM Studio, vLLM, a hosted API.

Standard library only (urllib): batches of ``settings.batch`` texts, a timeout per request,
a few retries with exponential backoff for what may pass (timeouts, refused connections, 429
and 5xx); an answer of the wrong shape, dimension or with NaNs is an error at once. The key
comes from an environment variable or a file and is sent only as a bearer token.
Texts reach this client masked (agtaild.semantic.texts): no secret is sent to an endpoint.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from agtaild.semantic.embedders import EmbedError, checked, need_numpy
from agtaild.semantic.settings import Settings

#: Tries per batch, and the first wait between them (doubled each time).
TRIES = 3
FIRST_WAIT = 0.5


class EndpointEmbedder:
    def __init__(self, settings: Settings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        assert settings.url and settings.model
        base = settings.url.rstrip("/")
        self.url = base if base.endswith("/embeddings") else base + "/embeddings"
        self.model = settings.model
        self.batch = settings.batch
        self.timeout = settings.timeout
        self._key = settings.key()
        self._sleep = sleep
        self.dimension = settings.dimension or 0
        self.model_id = f"openai:{self.model}@{base}"
        if self.dimension:
            self.model_id += f"/{self.dimension}"

    def probe(self) -> None:
        """Learn the dimension from one small request when the settings did not give it."""
        if not self.dimension:
            self.embed(["dimension probe"])

    def embed_query(self, texts: Sequence[str]) -> Any:
        """A search's query: one try (a search does not wait out a backoff)."""
        return self.embed(texts, tries=1)

    def embed(self, texts: Sequence[str], *, tries: int = TRIES) -> Any:
        np = need_numpy()
        parts = []
        for start in range(0, len(texts), self.batch):
            parts.append(self._batch(list(texts[start : start + self.batch]), tries))
        if not parts:
            return np.zeros((0, self.dimension or 1), dtype=np.float32)
        return np.concatenate(parts)

    def _batch(self, texts: list[str], tries: int) -> Any:
        wait = FIRST_WAIT
        for attempt in range(tries):
            try:
                return self._request(texts)
            except _Passing as exc:
                if attempt == tries - 1:
                    raise EmbedError(str(exc)) from None
                self._sleep(wait)
                wait *= 2
        raise AssertionError("unreachable")

    def _request(self, texts: list[str]) -> Any:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        where = f"the embeddings endpoint {self.url}"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read(256 * 1024 * 1024)
        except urllib.error.HTTPError as exc:
            if exc.code == 429 or exc.code >= 500:
                raise _Passing(f"{where} answered HTTP {exc.code}") from None
            raise EmbedError(f"{where} answered HTTP {exc.code}: {_reason(exc)}") from None
        except TimeoutError:
            raise _Passing(f"{where} did not answer within {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise _Passing(f"{where} did not answer within {self.timeout:g} s") from None
            raise _Passing(f"{where} is unreachable: {reason}") from None
        except OSError as exc:
            raise _Passing(f"{where} failed: {exc}") from None
        try:
            doc = json.loads(raw)
            rows = sorted(doc["data"], key=lambda d: d.get("index", 0))
            vectors = [row["embedding"] for row in rows]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EmbedError(f"{where} answered something that is not an embeddings response") from None
        arr = checked(vectors, len(texts), self.dimension or None, where)
        if not self.dimension:
            self.dimension = int(arr.shape[1])
            self.model_id += f"/{self.dimension}"
        return arr


class _Passing(Exception):
    """A failure that may pass: tried again after a wait."""


def _reason(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(2000).decode("utf-8", "replace")
    except OSError:
        return exc.reason or ""
    try:
        doc = json.loads(text)
        err = doc.get("error")
        return str(err.get("message") if isinstance(err, dict) else err or text)[:300]
    except ValueError:
        return text[:300]
