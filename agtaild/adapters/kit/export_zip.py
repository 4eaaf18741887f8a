"""Reading a chat service's data-export zip without trusting it.

An export (ChatGPT's "Export data", Claude.ai's "Export data", Google Takeout) is a zip a user
downloaded; its member names and sizes are whatever the file says. :class:`ExportZip` reads
only members an adapter asks for by name, through :mod:`zipfile`, never extracting anything:
no member name is ever used as a file path. Every read is bounded twice: by the bytes it
may produce (:data:`MAX_MEMBER_BYTES`, and :data:`MAX_TOTAL_BYTES` for all reads of one zip,
counted while inflating, whatever the header claims)
and by the ratio of those bytes to the member's compressed size (:data:`MAX_RATIO`), which
stops a zip bomb after its first megabytes. A zip that is not one, a member that does not
inflate, or a read over a cap raises :class:`ExportError`.

The member an adapter wants is found with :meth:`find` (by its last path component, as the
services name their files), so a zip made from the unpacked folder (one more folder level)
reads as the original does.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

import msgspec

from agtaild.errors import UsageError

#: The most one member may inflate to (a 10-year ChatGPT history is a few hundred MB).
MAX_MEMBER_BYTES = 2 << 30
#: Inflated bytes per compressed byte allowed past the first :data:`RATIO_GRACE` bytes
#: (JSON compresses 5–20×; a zip bomb 1000× and more).
MAX_RATIO = 200
RATIO_GRACE = 8 << 20
#: The most all reads of one zip may inflate to together.
MAX_TOTAL_BYTES = 4 << 30
#: The most members a zip may list (a Takeout with photos lists thousands; a bomb millions).
MAX_MEMBERS = 200_000
_CHUNK = 1 << 20


class ExportError(UsageError):
    """The file is not a readable export of the service named (exit 2; nothing is written)."""


class ExportZip:
    """One export zip, open for bounded reads of named members."""

    def __init__(
        self, path: str, *, max_member_bytes: int = MAX_MEMBER_BYTES, max_ratio: int = MAX_RATIO
    ) -> None:
        self.path = path
        self.max_member_bytes = max_member_bytes
        self.max_ratio = max_ratio
        try:
            self._zip = zipfile.ZipFile(path)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
            raise ExportError(f"{path} is not a readable zip file ({exc})") from exc
        if len(infos) > MAX_MEMBERS:
            self._zip.close()
            raise ExportError(f"{path} lists {len(infos)} members, more than {MAX_MEMBERS}: not an export")
        self._infos = [i for i in infos if not i.is_dir()]
        self._total = 0

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> ExportZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def names(self) -> list[str]:
        return [i.filename for i in self._infos]

    def find(self, wanted: Callable[[PurePosixPath], bool]) -> list[str]:
        """The member names whose path (split on ``/``) ``wanted`` accepts, in zip order."""
        return [i.filename for i in self._infos if wanted(PurePosixPath(i.filename.replace("\\", "/")))]

    def read(self, name: str) -> bytes:
        """One member's bytes, inflated under the caps (:class:`ExportError` past them)."""
        info = self._zip.getinfo(name)
        limit = min(self.max_member_bytes, MAX_TOTAL_BYTES - self._total)
        out = bytearray()
        try:
            with self._zip.open(info) as fh:
                while True:
                    chunk = fh.read(_CHUNK)
                    if not chunk:
                        break
                    out += chunk
                    if len(out) > limit:
                        raise ExportError(f"{self.path}: member {name!r} inflates past {limit} bytes")
                    if len(out) > RATIO_GRACE and len(out) > self.max_ratio * max(info.compress_size, 1):
                        raise ExportError(
                            f"{self.path}: member {name!r} inflates more than {self.max_ratio}× its "
                            "compressed size (a zip bomb?)"
                        )
        except ExportError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
            raise ExportError(f"{self.path}: member {name!r} does not inflate ({exc})") from exc
        self._total += len(out)
        return bytes(out)

    def read_json(self, name: str) -> Any:
        """One member decoded as JSON (:class:`ExportError` when it is not JSON)."""
        data = self.read(name)
        try:
            return msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise ExportError(f"{self.path}: {name} is not valid JSON ({exc})") from exc
