"""The archive's two hooks on an index update, imported only when they are first needed.

The read-only commands never pay for importing the archive and the sync machinery: the
after-read hook loads the archive when the first unit is read, the before-discovery hook only
when an update scans an archive root that exists (agtaild.store.archive.hook).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from agtaild.config import Config


class _ArchiveHook:
    """The archive mirror (agtaild.store.archive.archiver), imported when the first unit is read:
    the read-only commands never pay for importing the sync machinery. The Updater calls
    ``begin`` with the bytes it will read (a big update mirrors in a process of its own) and
    ``flush`` when its reads are done (the archived copies are made durable together)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.hook: Any = None

    def _load(self) -> Any:
        if self.hook is None:
            from agtaild.store.archive.hook import after_read_hook

            self.hook = after_read_hook(self.config)
        return self.hook

    def begin(self, nbytes: int) -> None:
        self._load().begin(nbytes)

    def __call__(self, adapter: Any, unit: Any, root: Any) -> None:
        self._load()(adapter, unit, root)

    def flush(self) -> None:
        if self.hook is not None:
            self.hook.flush()


def archive_hook(config: Config) -> Callable[..., None]:
    return _ArchiveHook(config)


def archive_view_hook(config: Config) -> Callable[..., None]:
    """The archive's before-discovery step (agtaild.store.archive.archiver), imported only when an
    update scans an archive root that exists."""

    def prepare(
        roots: list[Any],
        errors: list[dict[str, str]],
        present: Collection[str] | None = None,
        unreadable: Collection[str] = (),
    ) -> None:
        if not any(r.kind == "archive" for r in roots) or not config.archive_dir.is_dir():
            return
        from agtaild.store.archive.hook import before_discovery_hook

        before_discovery_hook(config)(roots, errors, present, unreadable=unreadable)

    return prepare
