"""agtail: every AI coding agent session on your machines, in one index."""

__version__ = "0.2.0"
