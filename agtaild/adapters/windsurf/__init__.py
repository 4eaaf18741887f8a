"""Windsurf (Cascade): the trajectories under ``~/.codeium/windsurf/cascade``, listed without text.

Each Cascade conversation is ``<cascade id>.pb``, encrypted at rest: only the running
Windsurf language server can read it (it serves the trajectories to the editor over a local
Connect-RPC API). Module: adapter (roots, units, one listing event per trajectory).
"""

from agtaild.adapters.windsurf.adapter import WindsurfAdapter

__all__ = ["WindsurfAdapter"]
