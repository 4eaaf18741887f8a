"""What each reader of the team server may read, as SQL: the row policies of the team server's
role and the views it reads events through (agtaild.pg.readers has the readers themselves).

Kept apart from agtaild.pg.readers so that the schema's migrations can create the views
without importing the administrator's commands."""

from __future__ import annotations

from typing import Any

TIERS = ("aggregate", "own", "project", "all")

_SETTING = "current_setting('agtail.reader', true)"
_OPERATOR = f"({_SETTING} = 'operator')"


def _reader(column: str) -> str:
    """One column of the asking reader's row: an uncorrelated subquery (computed once per
    statement), NULL for anyone who is not an active reader."""
    return f"(SELECT r.{column} FROM agtail_readers r WHERE r.token_hash = {_SETTING} AND r.revoked IS NULL)"


_TIER = _reader("tier")


def session_rule(row: str) -> str:
    """Whether the caller may read the content of the session row ``row`` (a table name or
    alias): the sessions policy, and the rule the events view applies (one definition)."""
    return (
        f"{_OPERATOR} OR {_TIER} = 'all'"
        f" OR ({_TIER} = 'own' AND {row}.machine = ANY({_reader('machines')}::text[]))"
        f" OR ({_TIER} = 'project' AND ({row}.project_root = ANY({_reader('projects')}::text[])"
        f" OR {row}.project = ANY({_reader('projects')}::text[])))"
        f" OR ({_TIER} = 'project' AND {row}.shared)"
    )


def _planned_as_likely(condition: str) -> str:
    """``condition`` in a form PostgreSQL's planner estimates at one row in two. Written out,
    the rule's OR of comparisons with values it cannot know at plan time (the caller's tier,
    computed once per statement) is estimated to keep about 1 % of the sessions — for most
    callers it keeps them all — and the planner then walks every session into its events
    instead of letting the word index find the few events that match (a rare word in 170 ms
    instead of 6 ms, 2,000 sessions). A CASE is estimated at one half, which plans both well."""
    return f"CASE WHEN {condition} THEN true ELSE false END"


#: Sessions whose content the caller may read.
SESSION_POLICY = _planned_as_likely(session_rule("sessions"))
#: The user's state of those sessions (labels, stars, titles, hides): the sessions' own rule,
#: through the sessions table (itself under its policy).
STATE_POLICY = (
    f"{_OPERATOR} OR {_TIER} = 'all' OR EXISTS (SELECT 1 FROM sessions s WHERE s.machine = session_state.machine"
    " AND s.agent = session_state.agent AND s.sid = session_state.sid AND s.collection = session_state.collection)"
)
#: Usage, the daily rollup and the machines: figures without text, for every reader.
AGGREGATE_POLICY = f"{_OPERATOR} OR {_TIER} IS NOT NULL"

#: The team server's row policies. ``events`` has none: the server cannot read that table at
#: all, only :data:`EVENTS_VIEW` (see :func:`create_events_view`).
POLICIES = {
    "sessions": SESSION_POLICY,
    "session_state": STATE_POLICY,
    "usage": AGGREGATE_POLICY,
    "usage_daily": AGGREGATE_POLICY,
    "machines": AGGREGATE_POLICY,
}

#: The events of the sessions the caller may read: right for every caller.
EVENTS_VIEW = "reader_events"
#: Every event, for a caller who reads everything (the operator, a reader of tier ``all``),
#: and none for anyone else: the view to read when the caller is taken to read everything.
ALL_EVENTS_VIEW = "reader_events_all"
EVENTS_VIEWS = (EVENTS_VIEW, ALL_EVENTS_VIEW)
#: The caller reads everything (the condition of ALL_EVENTS_VIEW).
READS_ALL = f"coalesce({_OPERATOR} OR {_TIER} = 'all', false)"


def create_events_view(cur: Any) -> None:
    """The two views the team server reads events through (it cannot read the table); both
    run as their owner, who is not under row-level security, so the rule is written into them:

    * ``reader_events``: the events of the sessions the caller may read, by the sessions rule
      (:func:`session_rule`) — for every caller.
    * ``reader_events_all``: every event when the caller reads everything, else none. Its
      condition holds no column, so PostgreSQL evaluates it once, before the scan, and plans
      the rest as if it were not there; with the sessions rule instead, its estimates of a
      rule it cannot evaluate at plan time led it to walk every session into its events (a
      phrase search over 10 machines went from 0.5 to 20 s). The team server reads this one
      for the operator and readers of tier ``all`` (agtaild.pg.service): a mistake there
      returns nothing, never more.

    Why not a row policy on ``events``: PostgreSQL evaluates a policy before any condition of
    the query that is not *leakproof* — ``@@`` on the tsvector and ``LIKE`` for the trigram
    indexes are not — so under a policy those indexes cannot drive a search and every event row
    is read (a rare word 9.6 → 276 ms, bench/RESULTS.md). In a plain view the search's
    conditions and the view's filter are planned together. What that gives up is only
    protection against SQL written to probe through errors or timing (a condition evaluated on
    a row the filter then drops); the team server's role can name any caller anyway, the
    operator included (docs/team.md, "What the team server's role can do"), so that is no
    boundary it had. Every query the server sends still returns only the events of sessions its
    caller may read, whatever the query forgets."""
    cur.execute(
        f"""CREATE OR REPLACE VIEW {EVENTS_VIEW} AS SELECT e.* FROM events e
        WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.machine = e.machine AND s.agent = e.agent
            AND s.sid = e.sid AND s.collection = e.collection AND ({session_rule("s")}))"""
    )
    cur.execute(f"CREATE OR REPLACE VIEW {ALL_EVENTS_VIEW} AS SELECT e.* FROM events e WHERE {READS_ALL}")
    for view in EVENTS_VIEWS:
        cur.execute(f"REVOKE ALL ON {view} FROM PUBLIC")


def reads_all(cur: Any, caller: str) -> bool:
    """Whether ``caller`` reads every session (PostgreSQL decides; the operator, or an active
    reader of tier ``all``)."""
    cur.execute(f"SELECT set_config('agtail.reader', %s, false), {READS_ALL}", (caller,))
    return bool(cur.fetchone()[1])


def create_table(cur: Any) -> None:
    cur.execute(
        """CREATE TABLE IF NOT EXISTS agtail_readers (
            name text PRIMARY KEY,
            tier text NOT NULL CHECK (tier IN ('aggregate', 'own', 'project', 'all')),
            machines text[] NOT NULL DEFAULT '{}',
            projects text[] NOT NULL DEFAULT '{}',
            token_hash text NOT NULL UNIQUE,   -- SHA-256 of the token; the token itself is nowhere
            created timestamptz NOT NULL DEFAULT now(),
            revoked timestamptz
        )"""
    )
    cur.execute("REVOKE ALL ON agtail_readers FROM PUBLIC")
