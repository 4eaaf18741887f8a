"""The archive: every native file agtail has read, kept compressed after the agent deletes it.

The flow is one-way: the index's hook (``hook``) hands each unit's native files to the
archiver (``archiver``), which stores them in the blob store (``blobs``: zstd frames and the
catalog). A big first index pins files instead (``pins``) and a finisher process
(``finish``) archives them later, reading them back through ``pinned`` (which the view uses
too) and noting what it could not store as read in ``losses``; a mirror process (``mirror_proc``) copies what cannot be
pinned. ``view`` lays the archived copies out as session roots for discovery, ``catchup``
archives what a previous run missed, ``ends`` keeps the boundary digests an append is checked
against, and ``lock`` is the one-writer-at-a-time file lock.

Layer rule: nothing in this package imports upward (no module imports one that imports it);
the finisher and the mirror process use the archiver's public functions.
"""
