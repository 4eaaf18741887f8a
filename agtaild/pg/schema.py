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

from agtaild.errors import AgtailError

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
            pushed_at timestamptz NOT NULL DEFAULT now(), -- when (the feed: m007_change_feed)
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
    cur.execute(
        "CREATE INDEX events_tool_use ON events (machine, agent, sid, collection) WHERE kind = 'tool_use'"
    )


def m003_stats(cur: Any) -> None:
    """``usage_daily``: the counted usage per (machine, day, agent, model, long-context flag),
    so that stats by day, model, agent or machine read a table that grows with the calendar
    and the machines, not with every response (288 ms for 10 machines' history before).

    Kept by statement-level triggers on ``usage``, in the transaction of every change: rows
    inserted are added, rows deleted (a push replaces a session's usage; a removed session's
    rows go by cascade) taken away, an update does both. ``n`` counts the usage rows behind a
    row; a row down to 0 is dropped. ``model`` is '' for an unknown model.
    """
    cur.execute(
        """
        CREATE TABLE usage_daily (
            machine text NOT NULL,
            day text NOT NULL,
            agent text NOT NULL,
            model text NOT NULL,
            long_ctx boolean NOT NULL,
            n bigint NOT NULL,
            input bigint NOT NULL,
            output bigint NOT NULL,
            cache_read bigint NOT NULL,
            cache_write bigint NOT NULL,
            reasoning bigint NOT NULL,
            PRIMARY KEY (machine, day, agent, model, long_ctx)
        )"""
    )
    cur.execute("CREATE INDEX usage_daily_day ON usage_daily (day)")
    cur.execute("CREATE INDEX usage_daily_empty ON usage_daily (machine) WHERE n = 0")
    for name, rows, sign in (("add", "new_rows", 1), ("sub", "old_rows", -1)):
        cur.execute(
            f"""
            CREATE FUNCTION agtail_usage_daily_{name}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO usage_daily AS d
                SELECT machine, day, agent, coalesce(model, ''), long_ctx, {sign} * count(*),
                       {sign} * sum(input), {sign} * sum(output), {sign} * sum(cache_read),
                       {sign} * sum(cache_write), {sign} * sum(reasoning)
                FROM {rows} WHERE counted GROUP BY 1, 2, 3, 4, 5
                ON CONFLICT (machine, day, agent, model, long_ctx) DO UPDATE SET
                    n = d.n + excluded.n, input = d.input + excluded.input,
                    output = d.output + excluded.output, cache_read = d.cache_read + excluded.cache_read,
                    cache_write = d.cache_write + excluded.cache_write,
                    reasoning = d.reasoning + excluded.reasoning;
                DELETE FROM usage_daily WHERE n = 0;
                RETURN NULL;
            END $$"""
        )
    for event, name, ref in (
        ("INSERT", "add", "NEW TABLE AS new_rows"),
        ("DELETE", "sub", "OLD TABLE AS old_rows"),
        ("UPDATE", "sub", "OLD TABLE AS old_rows"),
        ("UPDATE", "add", "NEW TABLE AS new_rows"),
    ):
        cur.execute(
            f"CREATE TRIGGER usage_daily_{event.lower()}_{name} AFTER {event} ON usage REFERENCING {ref}"
            f" FOR EACH STATEMENT EXECUTE FUNCTION agtail_usage_daily_{name}()"
        )
    cur.execute(
        "INSERT INTO usage_daily SELECT machine, day, agent, coalesce(model, ''), long_ctx, count(*), sum(input),"
        " sum(output), sum(cache_read), sum(cache_write), sum(reasoning) FROM usage WHERE counted"
        " GROUP BY 1, 2, 3, 4, 5"
    )


def m004_shared(cur: Any) -> None:
    """``shared``: the user of the pushing machine labelled the session ``share=team``, which
    lets ``project`` readers read it whatever its project (agtaild.pg.readers)."""
    cur.execute("ALTER TABLE sessions ADD COLUMN shared boolean NOT NULL DEFAULT false")
    cur.execute("CREATE INDEX sessions_shared ON sessions (machine) WHERE shared")


def m005_session_state(cur: Any) -> None:
    """``session_state``: the labels, star, hide and title the user of the pushing machine gave
    each session (agtaild.pg.userstate), kept by every push."""
    cur.execute(
        """
        CREATE TABLE session_state (
            machine text NOT NULL,
            agent text NOT NULL,
            sid text NOT NULL,
            collection text NOT NULL,
            labels jsonb NOT NULL DEFAULT '{}',
            starred boolean NOT NULL DEFAULT false,
            hidden boolean NOT NULL DEFAULT false,
            title text,
            changed_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (machine, agent, sid, collection),
            FOREIGN KEY (machine, agent, sid, collection) REFERENCES sessions ON DELETE CASCADE
        )"""
    )
    cur.execute("CREATE INDEX session_state_labels ON session_state USING gin (labels)")
    cur.execute("CREATE INDEX session_state_hidden ON session_state (machine) WHERE hidden")



def m006_reader_events(cur: Any) -> None:
    """``reader_events``: the one way the team server reads events, filtered to the sessions
    its caller may read (agtaild.pg.reader_rules.create_events_view), and the readers' table the
    filter consults (empty until ``agtail pg add-reader``; a database without roles has no
    readers, and its team server asks as the operator)."""
    from agtaild.pg import reader_rules

    reader_rules.create_table(cur)
    reader_rules.create_events_view(cur)


def m007_change_feed(cur: Any) -> None:
    """``sessions.changed``: the transaction that last wrote the session (set by a trigger on
    every insert and update, whatever the statement says), for the team server's change feed.

    The feed reads the sessions written by transactions older than every one still running
    (``pg_snapshot_xmin``), and moves up to there: a push batch that started before another
    machine's and commits after it is announced when it commits, never skipped (``pushed_at``,
    a transaction's start time, could be older than a stamp the feed had already passed). No
    clock of any machine, nor the database's, decides the order."""
    cur.execute("ALTER TABLE sessions ADD COLUMN changed xid8 NOT NULL DEFAULT pg_current_xact_id()")
    cur.execute("CREATE INDEX sessions_changed ON sessions (changed, id)")
    cur.execute(
        """CREATE FUNCTION agtail_session_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.changed := pg_current_xact_id();
            RETURN NEW;
        END $$"""
    )
    cur.execute(
        "CREATE TRIGGER sessions_changed BEFORE INSERT OR UPDATE ON sessions"
        " FOR EACH ROW EXECUTE FUNCTION agtail_session_changed()"
    )


MIGRATIONS: list[Migration] = [
    m001_initial,
    m002_reading,
    m003_stats,
    m004_shared,
    m005_session_state,
    m006_reader_events,
    m007_change_feed,
]

#: One lock id for "a migration is running" (pg_advisory_xact_lock), so two machines pushing
#: into a new database at once do not both create the tables.
_MIGRATION_LOCK = 0x61677461696C  # "agtail"


def pending(conn: Any) -> list[str]:
    """The names of the migrations this database has not had yet (every one for a new database)."""
    with conn.cursor() as cur:
        cur.execute("SELECT to_regclass('agtail_migrations') IS NOT NULL")
        if not cur.fetchone()[0]:
            done: set[str] = set()
        else:
            cur.execute("SELECT name FROM agtail_migrations")
            done = {row[0] for row in cur.fetchall()}
    conn.commit()
    return [m.__name__ for m in MIGRATIONS if m.__name__ not in done]


def managed(conn: Any) -> bool:
    """Whether ``agtail pg init`` set this database up with roles (agtaild.pg.roles): then only
    its administrator migrates, never a pusher or the team server."""
    with conn.cursor() as cur:
        cur.execute("SELECT to_regclass('agtail_logins') IS NOT NULL")
        found = bool(cur.fetchone()[0])
    conn.commit()
    return found


def require_init(conn: Any) -> None:
    """Stop unless ``agtail pg init`` set this database up (the administrator's commands)."""
    if not managed(conn):
        from agtaild.errors import UsageError

        raise UsageError("this team database has no roles yet: run `agtail pg init ADMIN_URL` first")


def migrate(conn: Any, *, admin: bool = False) -> None:
    """Bring the team database up to date (in one transaction, under an advisory lock).

    A database under roles (``agtail pg init``) is migrated only by its administrator
    (``admin``, from ``agtail pg init``): a pusher or the team server that finds a migration
    missing stops with an error that says so, instead of trying (it has no right to, and must
    not have it)."""
    missing = pending(conn)
    if not missing:
        return
    if not admin and managed(conn):
        raise AgtailError(
            f"the team database needs schema migrations ({', '.join(missing)}) that only its administrator"
            " may run: ask them to run `agtail pg init ADMIN_URL` with this version of agtail"
        )
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
