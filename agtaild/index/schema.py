"""Connections, the schema as named migrations, and the rebuild-on-version-change rule.

Two kinds of change, two mechanisms (the habit of simonw/llm):

* The *shape* of the database evolves through plain named functions appended to
  ``MIGRATIONS``; each one runs once and is recorded in the ``_migrations`` table.
* The *meaning* of derived rows (what text is searchable, how a row is prepared) is versioned
  by ``INDEX_VERSION``. The index is a disposable derivative of the native files, so a
  mismatch drops everything and the next update rebuilds it from the files.

Tables: ``files`` (one row per session unit: fingerprint + the adapter's continuation state),
``sessions``, ``events`` (the FTS tables are keyed on ``events.id``, an explicit INTEGER
PRIMARY KEY, which VACUUM never renumbers), ``usage`` (one row per API response; ``counted``
marks the one copy of each response that stats count), ``usage_rollup`` (the counted usage
summed per session, day and model, kept current by the writer: stats read a few thousand rows
instead of every response), ``usage_daily`` (the same summed over sessions: stats by day, model
or agent read a table that grows with the calendar, not with the sessions), ``usage_totals``
(the same over all days), ``places``, ``place_usage`` and ``session_tokens`` (the rollup summed
per place and per session, kept by triggers: agtaild.index.places), ``edits`` (every recorded
file change: agtaild.index.edits) and ``meta``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from agtaild.index.codec import event_layout
from agtaild.index.edits import m013_edits
from agtaild.index.storage import immediate
from agtaild.index.totals import m005_totals
from agtaild.index.usage import m010_usage_session_time

#: Bump when prepared rows change meaning (text extraction, tokenizer, stored JSON shape).
#: (A change of the Event fields rebuilds the index by itself: see agtaild.index.codec.)
#: 8: Codex exec output without its wrapper (extra.metadata), apply_patch new files numbered and
#: hunk sections, Aider's SEARCH/REPLACE edits, tool categories (extra.tool_category, events.tool_category).
#: 9: the edits table (agtaild.index.edits), filled from every stored event: a rebuild fills it.
INDEX_VERSION = 9  # 7: extra.edit on edit tools, Claude branch marks (and the parser state behind them)

#: unicode61 over every word; emoji and other symbols (So) count as token characters so an
#: emoji can be searched for. Words in other scripts are also kept, whole, in ``events_cjk``.
WORD_TOKENIZER = "unicode61 remove_diacritics 2 categories 'L* N* Co So'"

#: The page size of a new index. 16 KiB pages: tool results span fewer overflow pages and
#: full-text segments fewer leaves (measured: the writer's CPU for a cold index of the 200 MB
#: corpus fell by ~12% against 4 KiB; 32 KiB was no better). Only a new, empty file takes it.
PAGE_SIZE = 16384
#: The page cache of each connection, in KiB (``PRAGMA cache_size = -N``). SQLite turns it into
#: a number of pages at the page size it knows when the pragma runs and does not recount it when
#: a new file's page size is set afterwards: a new index's connection, sized at the default
#: 4 KiB pages, kept four times as much (64 MB of 16 KiB pages, measured: most of the writer's
#: heap during a cold index). :func:`migrate` sets it again after the page size.
CACHE_KIB = 16000
#: FTS5's in-memory term buffer per table (see m002_fts_bulk).
FTS_HASH_BYTES = 16 << 20

Migration = Callable[[sqlite3.Connection], None]


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Run several statements inside the caller's transaction (``executescript`` would commit)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement: {statement.strip()[:80]}")


def m001_initial(db: sqlite3.Connection) -> None:
    run_script(
        db,
        f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,      -- the unit's stable key (file, or db#id)
            agent TEXT NOT NULL,
            root TEXT NOT NULL,             -- the root it was found under
            kind TEXT NOT NULL,             -- native | imported | archive
            collection TEXT,
            rel TEXT NOT NULL,              -- path relative to its root (archive de-duplication)
            dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,   -- the main file
            fingerprint BLOB NOT NULL,      -- every file of the unit: (path, dev, ino, size, mtime_ns)
            unit BLOB NOT NULL,             -- the Unit, msgpack (files, hints) for path-only updates
            state BLOB,                     -- the adapter's continuation; opaque
            read_at REAL NOT NULL,
            settled INTEGER NOT NULL        -- 0: read while the file may have been mid-write
        );
        CREATE INDEX files_agent_rel ON files(agent, rel);
        CREATE TABLE file_parts (           -- every native file of every unit: path -> unit
            path TEXT NOT NULL,
            file_id INTEGER NOT NULL,
            PRIMARY KEY (path, file_id)
        ) WITHOUT ROWID;
        CREATE INDEX file_parts_file ON file_parts(file_id);
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL UNIQUE,
            agent TEXT NOT NULL,
            sid TEXT NOT NULL,
            kind TEXT NOT NULL,
            collection TEXT,
            cwd TEXT,
            project TEXT,
            started REAL,
            activity REAL NOT NULL,         -- last activity (epoch): list order
            programmatic INTEGER NOT NULL,
            archived INTEGER NOT NULL,      -- kept by agtail's archive, or archived by the agent
            title TEXT,
            data BLOB NOT NULL              -- the Session, JSON
        );
        CREATE INDEX sessions_activity ON sessions(activity DESC, id DESC);
        CREATE INDEX sessions_agent_activity ON sessions(agent, activity DESC, id DESC);
        CREATE INDEX sessions_sid ON sessions(sid);
        CREATE INDEX sessions_cwd ON sessions(cwd);
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            epoch REAL,
            text TEXT,                      -- Event.text, stored once (the JSON has it null)
            tool_input TEXT,                -- searchable text of the tool input / hook
            tool_result TEXT,               -- searchable text of the result
            result_moved INTEGER NOT NULL,  -- 1: Event.result is tool_result (a string), not in data
            data BLOB NOT NULL              -- the Event, JSON, without what the columns hold
        );
        CREATE UNIQUE INDEX events_session_seq ON events(session_id, seq);
        CREATE VIRTUAL TABLE events_fts USING fts5(
            text, tool_input, tool_result,
            content='events', content_rowid='id',
            tokenize="{WORD_TOKENIZER}"
        );
        CREATE VIRTUAL TABLE events_cjk USING fts5(
            text, tool_input,
            tokenize='trigram'
        );
        CREATE TABLE usage (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL,
            agent TEXT NOT NULL,
            key TEXT NOT NULL,
            epoch REAL,
            day TEXT NOT NULL,              -- local calendar day of epoch (see meta 'tz'); '' unknown
            model TEXT,
            input INTEGER NOT NULL,
            output INTEGER NOT NULL,
            cache_read INTEGER NOT NULL,
            cache_write INTEGER NOT NULL,
            reasoning INTEGER NOT NULL,
            total INTEGER NOT NULL,
            long_ctx INTEGER NOT NULL,      -- 1: over the long-context threshold (priced higher)
            counted INTEGER NOT NULL DEFAULT 0
        );
        CREATE UNIQUE INDEX usage_session_key ON usage(session_id, key);
        CREATE INDEX usage_session_day ON usage(session_id, day);
        CREATE TABLE usage_rollup (         -- counted usage summed per session, day, model: stats
            session_id INTEGER NOT NULL,
            agent TEXT NOT NULL,
            day TEXT,
            model TEXT,
            long_ctx INTEGER NOT NULL,
            input INTEGER NOT NULL,
            output INTEGER NOT NULL,
            cache_read INTEGER NOT NULL,
            cache_write INTEGER NOT NULL,
            reasoning INTEGER NOT NULL
        );
        CREATE INDEX usage_rollup_session ON usage_rollup(session_id);
        CREATE INDEX usage_agent_key ON usage(agent, key);
        """,
    )


def m002_fts_bulk(db: sqlite3.Connection) -> None:
    """Full-text settings for big batches (stored in each table's ``_config``).

    ``hashsize``: FTS5 writes its in-memory terms out as a new segment whenever they exceed
    this (default 1 MB); the writer inserts about FTS_BATCH_CHARS characters per statement,
    so a bigger buffer writes fewer, larger segments. ``automerge``: merge segments 16 at a
    time instead of 4, so each posting is copied fewer times while the index grows (queries
    meet a few more segments). Measured on the 200 MB corpus: about 0.8 s less writer CPU.
    """
    for table in ("events_fts", "events_cjk"):
        db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', {FTS_HASH_BYTES})")
        db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 16)")


def m003_change_log(db: sqlite3.Connection) -> None:
    """A change number per session, for the consumers that follow the index (``agtail pg push``).

    Every write of a session row stamps it with the next number (``sessions.change``); a
    removed session leaves a row in ``removed`` with its number. A follower remembers the
    highest number it has seen and asks for what came after. ``meta.index_id`` names this
    index file: a rebuilt index starts numbering again, and the new id tells a follower so.
    """
    import uuid

    run_script(
        db,
        """
        ALTER TABLE sessions ADD COLUMN change INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX sessions_change ON sessions(change);
        CREATE TABLE removed (
            change INTEGER PRIMARY KEY,
            agent TEXT NOT NULL,
            sid TEXT NOT NULL,
            collection TEXT
        );
        """,
    )
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('index_id', ?)", (uuid.uuid4().hex,))


def m004_phrase(db: sqlite3.Connection) -> None:
    """Sessions by (agent, sid): a session's short id looks up its two neighbours among its
    agent's ids (agtaild.index.queries.short_id) for every session a search or a list shows.
    Without this index each lookup read and sorted all of the agent's sessions (measured:
    ~0.2 ms each at 1,335 sessions, 40 lookups for a page of 20 hits)."""
    db.execute("CREATE INDEX IF NOT EXISTS sessions_agent_sid ON sessions(agent, sid)")


def m006_stats(db: sqlite3.Connection) -> None:
    """``usage_daily``: the counted usage per (day, agent, model, long-context flag);
    ``usage_totals``: the same over all days (stats by model or agent without dates).

    Stats by day summed every ``usage_rollup`` row (one per session, day and model), so their
    time grew with the number of sessions (x11 from 200 MB to 2 GB). These tables are kept by
    difference with ``usage_rollup`` (agtaild.index.usage), in the same transaction; ``n`` is
    the number of rollup rows behind a row. ``model`` is '' for an unknown model. An existing
    index fills it from its rollup here, without a rebuild.
    """
    from agtaild.index.usage import rebuild_daily

    run_script(
        db,
        """
        CREATE TABLE usage_daily (
            day TEXT NOT NULL,
            agent TEXT NOT NULL,
            model TEXT NOT NULL,            -- '' unknown
            long_ctx INTEGER NOT NULL,
            n INTEGER NOT NULL,             -- usage_rollup rows summed here
            input INTEGER NOT NULL,
            output INTEGER NOT NULL,
            cache_read INTEGER NOT NULL,
            cache_write INTEGER NOT NULL,
            reasoning INTEGER NOT NULL,
            PRIMARY KEY (day, agent, model, long_ctx)
        ) WITHOUT ROWID;
        CREATE TABLE usage_totals (         -- the same over all days: stats by model or agent
            agent TEXT NOT NULL,
            model TEXT NOT NULL,
            long_ctx INTEGER NOT NULL,
            n INTEGER NOT NULL,
            input INTEGER NOT NULL,
            output INTEGER NOT NULL,
            cache_read INTEGER NOT NULL,
            cache_write INTEGER NOT NULL,
            reasoning INTEGER NOT NULL,
            PRIMARY KEY (agent, model, long_ctx)
        ) WITHOUT ROWID;
        -- The rows left empty by an update are found without reading the others.
        CREATE INDEX usage_daily_empty ON usage_daily(n) WHERE n = 0;
        CREATE INDEX usage_totals_empty ON usage_totals(n) WHERE n = 0;
        """,
    )
    rebuild_daily(db)


def m007_tools(db: sqlite3.Connection) -> None:
    """``events.tool`` / ``events.tool_failed`` for tool calls, and an index of the calls:
    ``stats --by tool`` decoded every tool call's stored event in Python (175 ms on the
    200 MB corpus, 1.1 s at 2 GB); now it is a GROUP BY over this index. An existing index
    gets the columns filled from its stored events here."""
    from agtaild.index.activity import tool_of

    db.execute("ALTER TABLE events ADD COLUMN tool TEXT")
    db.execute("ALTER TABLE events ADD COLUMN tool_failed INTEGER")
    rows = db.execute("SELECT id, data FROM events WHERE kind = 'tool_use'").fetchall()
    filled = []
    for event_id, data in rows:
        tool, failed = tool_of(data)
        filled.append((tool, int(failed), event_id))
    db.executemany("UPDATE events SET tool = ?, tool_failed = ? WHERE id = ?", filled)
    db.execute(
        "CREATE INDEX events_tools ON events(tool, tool_failed, session_id, epoch) WHERE kind = 'tool_use'"
    )


def m008_statsession(db: sqlite3.Connection) -> None:
    """``usage_rollup``'s index by session holds every column of the rollup, the model and the
    long-context flag first: stats by session read it in (session, model) order, with no sort
    and no look-up in the table (issue #13 figure 5: ~1 ms of a by=session request on the
    200 MB corpus). Its first column still serves the look-ups by session."""
    run_script(
        db,
        """
        DROP INDEX IF EXISTS usage_rollup_session;
        CREATE INDEX usage_rollup_session ON usage_rollup(
            session_id, model, long_ctx, day, agent, input, output, cache_read, cache_write, reasoning
        );
        """,
    )


def m009_appendcost(db: sqlite3.Connection) -> None:
    """An index holding every column the update compares (agtaild.index.update reads them for
    every stored unit, before every update): a scan of it reads 0.5 MB where the table's rows,
    with their adapter states, are 7.4 MB on the 200 MB corpus (1.8 instead of 4.8 ms for a
    fresh connection, 1.3 instead of 2.6 ms warm)."""
    db.execute(
        "CREATE INDEX files_check ON files(path, id, agent, root, kind, collection, fingerprint, settled, size)"
    )


def m010_tool_category(db: sqlite3.Connection) -> None:
    """``events.tool_category``: each tool call's kind (shell, read, edit, …: the one mapping of
    agtaild.adapters.kit.tool_categories, also kept as the event's ``extra.tool_category``), and
    an index of the calls holding it, so ``stats --by tool`` and ``--by tool-category`` group
    in SQL alone. An existing index gets the column filled from its stored events here."""
    from agtaild.adapters.kit.tool_categories import category_of
    from agtaild.index.codec import decode_event

    db.execute("ALTER TABLE events ADD COLUMN tool_category TEXT")
    filled = []
    for event_id, data in db.execute("SELECT id, data FROM events WHERE kind = 'tool_use'").fetchall():
        doc = decode_event(data)
        extra = doc.get("extra")
        has_edit = isinstance(extra, dict) and "edit" in extra
        filled.append((category_of(doc.get("tool"), doc.get("input"), has_edit=has_edit), event_id))
    db.executemany("UPDATE events SET tool_category = ? WHERE id = ?", filled)
    db.execute(
        "CREATE INDEX events_tool_categories ON events(tool_category, tool, tool_failed, session_id, epoch)"
        " WHERE kind = 'tool_use'"
    )


def m011_secret_findings(db: sqlite3.Connection) -> None:
    """Secrets found by the index pipeline (agtaild.index.findings)."""
    db.execute(
        "CREATE TABLE secret_findings (id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL,"
        " session_id INTEGER NOT NULL, seq INTEGER NOT NULL, field TEXT NOT NULL, rule TEXT NOT NULL,"
        ' start INTEGER NOT NULL, "end" INTEGER NOT NULL, fingerprint TEXT NOT NULL,'
        " confidence TEXT NOT NULL, tail TEXT NOT NULL, epoch REAL)"
    )
    db.execute("CREATE INDEX secret_findings_session ON secret_findings(session_id, seq)")
    db.execute("CREATE INDEX secret_findings_fingerprint ON secret_findings(fingerprint)")
    db.execute("CREATE TABLE secret_clean (digest BLOB PRIMARY KEY) WITHOUT ROWID")
    db.execute("CREATE TABLE secret_pending (event_id INTEGER PRIMARY KEY)")


def m012_event_quarters(db: sqlite3.Connection) -> None:
    """``event_quarters``: events per (session, quarter hour), kept by the writer, so that
    ``stats --by hour`` no longer scans every event (agtaild.index.quarters). An existing index
    gets it filled from its events here, without a rebuild."""
    from agtaild.index import quarters

    quarters.create(db)


def m014_rollup_day(db: sqlite3.Connection) -> None:
    """``usage_rollup`` by day: the sessions with usage on given days (stats by agent counts
    them) and the usage on no day (what a date bound leaves out, said as ``undated``) are found
    by the day instead of a scan of the whole rollup — today's total of ``usage.live``, which
    every status line asks for, read 30,000 rollup rows twice on the 2 GB corpus (~20 ms)."""
    db.execute("CREATE INDEX usage_rollup_day ON usage_rollup(day, agent, session_id)")


def m015_week(db: sqlite3.Connection) -> None:
    """``week_events`` / ``week_usage``: the activity per UTC quarter of the week and the
    zone's offset, over the whole history (agtaild.index.week), so that ``stats --by hour``
    reads a few thousand rows at any size; ``usage_quarters`` gains the session's agent, which
    they are summed by. An existing index gets them filled here, without a rebuild."""
    from agtaild.index import week

    columns = {row[1] for row in db.execute("PRAGMA table_info(usage_quarters)")}
    if "agent" not in columns:
        db.execute("ALTER TABLE usage_quarters ADD COLUMN agent TEXT NOT NULL DEFAULT ''")
        db.execute(
            "UPDATE usage_quarters SET agent = coalesce((SELECT s.agent FROM sessions s"
            " WHERE s.id = usage_quarters.session_id), '')"
        )
    week.create(db)


def m016_tool_totals(db: sqlite3.Connection) -> None:
    """``tool_totals``: tool calls per (agent, tool, category, failed), kept by the writer, so
    that ``stats --by tool`` without dates no longer groups every call ever made
    (agtaild.index.tool_totals). An existing index gets it filled here, without a rebuild."""
    from agtaild.index import tool_totals

    tool_totals.create(db)


def m017_rollup_agent(db: sqlite3.Connection) -> None:
    """``usage_rollup`` by (agent, session), covering: stats by agent count each agent's
    sessions with usage (``count(DISTINCT session_id)``) in one ordered walk, without two
    temporary B-trees (10 GB bench corpus, 151,120 rollup rows: 142 → 21 ms of CPU), and
    stats by session of one agent read its rows in (session, model) order from it alone, as
    m008's index serves them without an agent."""
    db.execute(
        "CREATE INDEX IF NOT EXISTS usage_rollup_agent ON usage_rollup("
        "agent, session_id, model, long_ctx, day, input, output, cache_read, cache_write, reasoning)"
    )


def m018_partial_tool_index(db: sqlite3.Connection) -> None:
    """``events_tool_categories`` over tool calls only (``kind = 'tool_use'``, as the queries
    that read it say: agtaild.index.activity, report): the other events, about 70% of them,
    no longer cost an index entry each when they are stored (measured: ≈ a sixth of the
    writer's CPU for the events rows of a cold index)."""
    db.execute("DROP INDEX IF EXISTS events_tool_categories")
    db.execute(
        "CREATE INDEX events_tool_categories ON events(tool_category, tool, tool_failed, session_id, epoch)"
        " WHERE kind = 'tool_use'"
    )


def m019_usage_session_sums(db: sqlite3.Connection) -> None:
    """An index that holds each session's usage sums in the order they are grouped: a session's
    own usage (agtaild.index.queries.session_usage, asked for every session a listing or a
    search hit shows) is read from the index alone, with no row fetched and no sort (the 20
    sessions of a page of hits: 3.8 → 1.5 ms of CPU at 2 GB for long sessions)."""
    db.execute(
        "CREATE INDEX IF NOT EXISTS usage_session_sums ON usage"
        "(session_id, model, long_ctx, input, output, cache_read, cache_write, reasoning)"
    )


def m020_places(db: sqlite3.Connection) -> None:
    """``places``, ``place_usage`` and ``session_tokens``: sums per place (agent, kind,
    collection, cwd, project) and per session, kept by triggers (agtaild.index.places), so
    that ``projects`` and ``stats --by project`` / ``--by agent`` / ``--by session`` (top N)
    read tables that grow with the places, not with the sessions. ``sessions_cwd`` becomes
    ``sessions_place``, the place's columns and the activity: the triggers find a place's
    latest activity by it, and ``projects --since`` groups the sessions from it alone. An
    existing index gets the tables filled here, without a rebuild."""
    from agtaild.index import places

    db.execute("DROP INDEX IF EXISTS sessions_cwd")
    db.execute(
        "CREATE INDEX IF NOT EXISTS sessions_place ON sessions(cwd, agent, kind, project, collection, activity)"
    )
    places.create(db)


MIGRATIONS: list[Migration] = [
    m001_initial,
    m002_fts_bulk,
    m003_change_log,
    m004_phrase,
    m005_totals,
    m006_stats,
    m007_tools,
    m008_statsession,
    m009_appendcost,
    m010_tool_category,
    m010_usage_session_time,
    m011_secret_findings,
    m012_event_quarters,
    m013_edits,
    m014_rollup_day,
    m015_week,
    m016_tool_totals,
    m017_rollup_agent,
    m018_partial_tool_index,
    m019_usage_session_sums,
    m020_places,
]


def connect(path: Path | str, *, readonly: bool = False, uri: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with our pragmas.

    ``check_same_thread`` is off so that ``Service.close`` can close every thread's
    connection; each connection is still only *used* by one thread (thread-local readers,
    and the single writer behind a lock). ``uri``: ``path`` is a ``file:`` URI (read-only
    opening of an index in a read-only data dir, see agtaild.index.storage).
    """
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30.0, uri=uri)
    db.execute("PRAGMA busy_timeout = 30000")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA temp_store = MEMORY")
    set_cache(db)
    db.execute("PRAGMA journal_size_limit = 67108864")  # a big update must not leave a huge WAL
    if readonly:
        db.execute("PRAGMA query_only = 1")
    return db


def set_cache(db: sqlite3.Connection, kib: int | None = None) -> None:
    """The connection's page cache: ``kib`` KiB (:data:`CACHE_KIB` by default), counted in pages
    of the database's page size as it is now (see CACHE_KIB)."""
    db.execute(f"PRAGMA cache_size = -{CACHE_KIB if kib is None else int(kib)}")


def _applied(db: sqlite3.Connection) -> set[str]:
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied REAL)")
    return {row[0] for row in db.execute("SELECT name FROM _migrations")}


def stored_version(db: sqlite3.Connection) -> int | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row and str(row[0]).isdigit() else None


def drop_everything(db: sqlite3.Connection) -> None:
    """Empty the database (virtual tables first: dropping them drops their shadow tables)."""
    rows = db.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
    virtual = [
        name for typ, name, sql in rows if typ == "table" and (sql or "").upper().startswith("CREATE VIRTUAL")
    ]
    for name in virtual:
        db.execute(f'DROP TABLE IF EXISTS "{name}"')
    rows = db.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
    for typ, name in rows:
        if typ in ("table", "view"):
            db.execute(f'DROP {typ.upper()} IF EXISTS "{name}"')


def stored_layout(db: sqlite3.Connection) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'event_layout'").fetchone()
    except sqlite3.OperationalError:
        return None
    return str(row[0]) if row else None


def current(db: sqlite3.Connection) -> bool:
    """Were the stored rows written in today's format (INDEX_VERSION, and the Event layout
    that agtaild.index.codec stores events by)?"""
    return stored_version(db) == INDEX_VERSION and stored_layout(db) == event_layout()


def up_to_date(db: sqlite3.Connection) -> bool:
    """Checked without a write transaction: opening the index for a query must not take the
    write lock (or wait for a writer)."""
    try:
        applied = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    except sqlite3.OperationalError:
        return False
    return current(db) and all(m.__name__ in applied for m in MIGRATIONS)


def migrate(db: sqlite3.Connection) -> bool:
    """Bring the schema up to date; returns True when the index was (re)created empty."""
    if db.execute("PRAGMA page_count").fetchone()[0] == 0:
        db.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # before WAL: only an empty file takes it
        set_cache(db)  # counted again in pages of the new size (see CACHE_KIB)
    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        db.execute("PRAGMA journal_mode = WAL")
    if up_to_date(db):
        return False
    with immediate(db):
        has_tables = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'files'"
        ).fetchone()[0]
        rebuilt = False
        if has_tables and not current(db):
            drop_everything(db)
            rebuilt = True
        done = _applied(db)
        for migration in MIGRATIONS:
            if migration.__name__ in done:
                continue
            migration(db)
            db.execute(
                "INSERT INTO _migrations (name, applied) VALUES (?, ?)", (migration.__name__, time.time())
            )
            rebuilt = rebuilt or migration is MIGRATIONS[0]
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('index_version', ?)", (str(INDEX_VERSION),)
        )
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('event_layout', ?)", (event_layout(),))
    return rebuilt
