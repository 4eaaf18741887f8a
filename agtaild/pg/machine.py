"""A machine's name on the team database: chosen once, kept in the data dir.

Every row a machine pushes carries its name (agtaild.pg.push), and the team server answers
``resume.command`` only for the machine the caller runs on (agtaild.pg.server).
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

from agtaild.errors import AgtailError, UsageError

#: What a machine name may be: letters, digits, '.', '_' or '-', a letter or digit first.
MACHINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def machine_name(data_dir: Path, override: str | None) -> str:
    """This machine's stable name: --machine, else the one stored in the data dir, else the
    host name (stored on first use, so renaming the host does not split its history)."""
    if override is not None:
        if not MACHINE.fullmatch(override):
            raise UsageError(f"--machine {override!r}: use letters, digits, '.', '_' or '-' (at most 63)")
        return override
    stored = data_dir / "machine"
    try:
        name = stored.read_text().strip()
        if MACHINE.fullmatch(name):
            return name
    except FileNotFoundError:
        pass
    except OSError as err:
        raise AgtailError(f"cannot read {stored}: {err.strerror}") from None
    name = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname().split(".")[0])[:63].strip("-._") or "machine"
    if not MACHINE.fullmatch(name):
        name = "machine-" + name
    data_dir.mkdir(parents=True, exist_ok=True)
    stored.write_text(name + "\n")
    return name
