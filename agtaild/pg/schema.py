"""The team database on PostgreSQL: its tables, as named migrations (like the SQLite index).

Every row is labelled with the machine that pushed it; a session's key is (machine, agent,
session id, collection) — the collection is '' for a machine's own sessions — and an event's
key adds its ``seq``, so pushes are idempotent upserts and two machines never touch each
other's rows.

Documents (``doc``) are the exact Session/Event JSON, kept as text: ``jsonb`` rejects the
``\\u0000`` escape that transcripts can hold, and the server only hands the documents on.
The searchable columns have NUL removed (PostgreSQL text cannot hold it) and feed a
``tsvector`` (words, weighted: message text > tool input > tool output) and ``pg_trgm``
indexes (substrings, CJK).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The schema as named steps, each applied once and recorded in agtail_migrations.
Migration = Callable[[Any], None]

#: Characters of each column that go into the word index (a tsvector holds at most 1 MB).
TSV_CHARS = 100_000


def m001_initial(cur: Any) -> None:
    cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    cur.execute(
        """
        CREATE TABLE machines (
            machine text PRIMARY KEY,
            index_id text,                  -- the pushing index (a rebuilt index has a new id)
            cursor bigint NOT NULL DEFAULT 0, -- the last change number of that index pushed
            pushed_at timestamptz
        )"""
    )
    cur.execute(
        """
        CREATE TABLE sessions (
            id bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- for keyset pages (stable across upserts)
            machine text NOT NULL,
            agent text NOT NULL,
            sid text NOT NULL,
            collection text NOT NULL DEFAULT '',
            kind text NOT NULL,             -- native | imported | archive, on the pushing machine
            cwd text,
            project text,
            started double precision,
            activity double precision NOT NULL,
            programmatic boolean NOT NULL,
            archived boolean NOT NULL,
            title text,
            doc text NOT NULL,              -- the Session JSON (usage is summed from usage rows)
            index_id text NOT NULL,         -- the index this row came from
            last_event bigint NOT NULL DEFAULT 0, -- highest local event row id pushed
            pushed_at timestamptz NOT NULL DEFAULT now(), -- the team server's change feed
            PRIMARY KEY (machine, agent, sid, collection)
        )"""
    )
    cur.execute("CREATE INDEX sessions_activity ON sessions (activity DESC)")
    cur.execute("CREATE INDEX sessions_machine_index ON sessions (machine, index_id)")
    cur.execute("CREATE INDEX sessions_pushed ON sessions (pushed_at)")
    cur.execute("CREATE INDEX sessions_sid ON sessions (agent, sid text_pattern_ops)")
    cur.execute(
        f"""
        CREATE TABLE events (
            id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            machine text NOT NULL,
            agent text NOT NULL,
            sid text NOT NULL,
            collection text NOT NULL,
            seq integer NOT NULL,
            kind text NOT NULL,
            epoch double precision,
            text text,
            tool_input text,
            tool_result text,
            doc text NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('simple', left(coalesce(text, ''), {TSV_CHARS})), 'A') ||
                setweight(to_tsvector('simple', left(coalesce(tool_input, ''), {TSV_CHARS})), 'B') ||
                setweight(to_tsvector('simple', left(coalesce(tool_result, ''), {TSV_CHARS})), 'C')
            ) STORED,
            PRIMARY KEY (machine, agent, sid, collection, seq),
            FOREIGN KEY (machine, agent, sid, collection) REFERENCES sessions ON DELETE CASCADE
        )"""
    )
    cur.execute("CREATE INDEX events_tsv ON events USING gin (tsv)")
    cur.execute("CREATE INDEX events_text_trgm ON events USING gin (text gin_trgm_ops)")
    cur.execute("CREATE INDEX events_input_trgm ON events USING gin (tool_input gin_trgm_ops)")
    cur.execute(
        """
        CREATE TABLE usage (
            machine text NOT NULL,
            agent text NOT NULL,
            sid text NOT NULL,
            collection text NOT NULL,
            key text NOT NULL,
            epoch double precision,
            day text NOT NULL,
            model text,
            input bigint NOT NULL,
            output bigint NOT NULL,
            cache_read bigint NOT NULL,
            cache_write bigint NOT NULL,
            reasoning bigint NOT NULL,
            total bigint NOT NULL,
            long_ctx boolean NOT NULL,
            counted boolean NOT NULL,       -- the copy the pushing machine's stats count
            PRIMARY KEY (machine, agent, sid, collection, key),
            FOREIGN KEY (machine, agent, sid, collection) REFERENCES sessions ON DELETE CASCADE
        )"""
    )
    cur.execute("CREATE INDEX usage_day ON usage (day) WHERE counted")


def m002_reading(cur: Any) -> None:
    """What the viewer's reading features need: the project each session belongs to (its git
    root, found on the pushing machine, where the repository is), and ids in byte order for the
    shortest-unique-prefix lookups."""
    cur.execute("ALTER TABLE sessions ADD COLUMN project_root text")
    cur.execute("CREATE INDEX sessions_project_root ON sessions (project_root)")
    cur.execute('CREATE INDEX sessions_sid_bytes ON sessions (agent, sid COLLATE "C")')
    cur.execute("CREATE INDEX events_tool_use ON events (machine, agent, sid, collection) WHERE kind = 'tool_use'")


MIGRATIONS: list[Migration] = [m001_initial, m002_reading]

#: One lock id for "a migration is running" (pg_advisory_xact_lock), so two machines pushing
#: into a new database at once do not both create the tables.
_MIGRATION_LOCK = 0x61677461696C  # "agtail"


def migrate(conn: Any) -> None:
    """Bring the team database up to date (in one transaction, under an advisory lock)."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        cur.execute(
            "CREATE TABLE IF NOT EXISTS agtail_migrations (name text PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
        )
        cur.execute("SELECT name FROM agtail_migrations")
        done = {row[0] for row in cur.fetchall()}
        for migration in MIGRATIONS:
            if migration.__name__ not in done:
                migration(cur)
                cur.execute("INSERT INTO agtail_migrations (name) VALUES (%s)", (migration.__name__,))
