"""Builds .forge.db: a hand-made Forge database (no real sample could be recorded: Forge is a
Rust binary that does not install from npm or PyPI here). Schema from antinomyhq/forge
crates/forge_repo/src/database/migrations (commit 54cecac: create_conversations_table,
add_conversations_indexes, add_metrics_to_conversations; the workspace and indexing_auth
tables were created and dropped again); the context JSON as forge_repo's ContextRecord
serialises it (conversation_record.rs: externally tagged values, compact serde_json, fields in
declaration order, None fields left out); timestamps as diesel writes a chrono NaiveDateTime. Forge switches its database to WAL on
every connection; the sample keeps a rollback journal, as every sample store here does (the
store tests switch copies to WAL themselves).
Run: python3 build_forge_db.py (rewrites the file)."""

import json
import sqlite3
from pathlib import Path

DB = Path(__file__).parent / ".forge.db"
for suffix in ("", "-wal", "-shm"):
    Path(str(DB) + suffix).unlink(missing_ok=True)
conn = sqlite3.connect(DB)
conn.executescript(
    """
CREATE TABLE __diesel_schema_migrations (
       version VARCHAR(50) PRIMARY KEY NOT NULL,
       run_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE conversations (
    conversation_id TEXT PRIMARY KEY NOT NULL,
    title TEXT,
    workspace_id BIGINT NOT NULL,
    context TEXT,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP
, metrics TEXT);
CREATE INDEX idx_conversations_workspace_created ON conversations(workspace_id, created_at DESC);
CREATE INDEX idx_conversations_active_workspace_updated
ON conversations(workspace_id, updated_at DESC)
WHERE context IS NOT NULL;
"""
)
for version in ("20250912065405", "20250912065740", "20251016000000", "20251113054241", "20251115000000",
                "20251122061212", "20260216130933"):  # fmt: skip
    conn.execute(
        "INSERT INTO __diesel_schema_migrations (version, run_on) VALUES (?, '2026-11-30 09:00:00')",
        (version,),
    )


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)  # serde_json's compact form


def count(n, approx=False):
    return {"approx" if approx else "actual": n}


def usage(prompt, completion, cached, cost=None):
    doc = {"prompt_tokens": count(prompt), "completion_tokens": count(completion),
           "total_tokens": count(prompt + completion), "cached_tokens": count(cached)}  # fmt: skip
    if cost is not None:
        doc["cost"] = cost
    return doc


def text(role, content, **kw):
    return {"text": {"role": role, "content": content, **kw}}


def entry(value, use=None):
    return {"message": value, **({"usage": use} if use else {})}


def call(name, call_id, arguments):
    return {"name": name, "call_id": call_id, "arguments": arguments}


def result(name, call_id, *values, is_error=False):
    return {
        "tool": {"name": name, "call_id": call_id, "output": {"is_error": is_error, "values": list(values)}}
    }


def shell_output(command, code, stdout="", stderr=""):
    out = f'<shell_output\n  command="{command}"\n  shell="/bin/bash"\n  exit_code="{code}"\n>\n'
    if stdout:
        out += f'<stdout\n  total_lines="{stdout.count(chr(10)) + 1}"\n><![CDATA[{stdout}]]></stdout>\n'
    if stderr:
        out += f'<stderr\n  total_lines="{stderr.count(chr(10)) + 1}"\n><![CDATA[{stderr}]]></stderr>\n'
    return out + "</shell_output>"


SYSTEM = (
    "You are Forge, an expert software engineering assistant designed to help users with programming tasks."
)
CWD = "/home/dev/demo-app"
INFO = (f"<system_information>\n<operating_system>linux</operating_system>\n<current_working_directory>{CWD}"
        "</current_working_directory>\n<default_shell>/bin/bash</default_shell>\n<home_directory>/home/dev"
        "</home_directory>\n</system_information>")  # fmt: skip
MODEL = "claude-sonnet-4-5-20250929"
MAIN, CHILD, OLD, BROKEN, EMPTY = (
    "3f1c2a9e-7b4d-4c1e-9a55-0d2b6e8f1a01", "8c0e5d21-4f3a-4b7c-8e19-6a2d9c3b7e02",
    "b2d4f6a8-1c3e-4a5b-9d7f-2e4c6a8b0c03", "e5a7c9b1-3d5f-4e6a-8b0c-4d6f8a0c2e04",
    "0a9b8c7d-6e5f-4a3b-9c1d-5e7f9a1b3c05",
)  # fmt: skip
WORKSPACE = 7406158263459011742

main = {
    "conversation_id": MAIN,
    "messages": [
        entry(text("System", SYSTEM)),
        entry(text("System", INFO)),
        entry(
            text(
                "User",
                "<task>Fix the greeting in hello.py and run the tests</task>\n<system_date>2026-11-30</system_date>",
                raw_content={"Text": "Fix the greeting in hello.py and run the tests"},
                model=MODEL,
            )
        ),
        entry(
            text(
                "User",
                '<file_content\n  path="/home/dev/demo-app/hello.py"\n  total_lines="2"\n><![CDATA[1:def greet():\n2:    return "helo"]]>\n</file_content>',
                model=MODEL,
                droppable=True,
            )
        ),
        entry(
            text(
                "Assistant",
                "I'll look at the file first.",
                tool_calls=[call("read", "toolu_01READ", {"file_path": "/home/dev/demo-app/hello.py"})],
                model=MODEL,
                reasoning_details=[
                    {
                        "text": "The user wants the typo fixed; read hello.py.",
                        "signature": "sig-1",
                        "type_of": "reasoning.text",
                    }
                ],
            ),
            usage(1200, 40, 0),
        ),
        entry(
            result(
                "read",
                "toolu_01READ",
                {
                    "text": '<file_content\n  path="/home/dev/demo-app/hello.py"\n  total_lines="2"\n><![CDATA[1:def greet():\n2:    return "helo"]]>\n</file_content>'
                },
            )
        ),
        entry(
            text(
                "Assistant",
                "The greeting has a typo; fixing it.",
                tool_calls=[
                    call(
                        "patch",
                        "toolu_02PATCH",
                        {
                            "file_path": "/home/dev/demo-app/hello.py",
                            "old_string": '    return "helo"',
                            "new_string": '    return "hello"',
                        },
                    )
                ],
                model=MODEL,
            ),
            usage(1400, 60, 1100, 0.0021),
        ),
        entry(
            result(
                "patch",
                "toolu_02PATCH",
                {
                    "text": '<file_diff\n  path="/home/dev/demo-app/hello.py"\n  total_lines="2"\n><![CDATA[1 1 | def greet():\n2   |-    return "helo"\n  2 |+    return "hello"]]>\n</file_diff>'
                },
            )
        ),
        entry(
            text(
                "Assistant",
                "",
                tool_calls=[call("shell", "toolu_03SHELL", {"command": "python -m pytest -q", "cwd": CWD})],
                model=MODEL,
            ),
            usage(1600, 30, 1300),
        ),
        entry(
            result(
                "shell",
                "toolu_03SHELL",
                {
                    "text": shell_output(
                        "python -m pytest -q", 127, stderr="/usr/bin/python: No module named pytest"
                    )
                },
            )
        ),
        entry(
            text(
                "Assistant",
                "pytest is missing; I'll run the module directly and add a test file.",
                tool_calls=[
                    call(
                        "shell",
                        "toolu_04SHELL",
                        {"command": "python -c 'import hello; print(hello.greet())'", "cwd": CWD},
                    ),
                    call(
                        "write",
                        "toolu_05WRITE",
                        {
                            "file_path": "/home/dev/demo-app/test_hello.py",
                            "content": 'import hello\n\n\ndef test_greet():\n    assert hello.greet() == "hello"\n',
                        },
                    ),
                ],
                model=MODEL,
            ),
            usage(1800, 120, 1500),
        ),
        entry(
            result(
                "shell",
                "toolu_04SHELL",
                {"text": shell_output("python -c 'import hello; print(hello.greet())'", 0, stdout="hello")},
            )
        ),
        entry(
            result(
                "write",
                "toolu_05WRITE",
                {"text": '<file_created path="/home/dev/demo-app/test_hello.py" total_lines="5" />'},
            )
        ),
        entry(
            text(
                "Assistant",
                "Fixed. Let me have the sage agent review the change.",
                tool_calls=[call("sage", "toolu_06SAGE", {"tasks": ["Review hello.py for other typos"]})],
                model=MODEL,
            ),
            usage(2000, 50, 1700),
        ),
        entry(
            result(
                "sage",
                "toolu_06SAGE",
                {
                    "aI": {
                        "value": '<task_completed task="Review hello.py for other typos">\n<output>No other typos found.</output>\n</task_completed>',
                        "conversation_id": CHILD,
                    }
                },
            )
        ),
        entry(
            text(
                "Assistant",
                "Done: the greeting now says hello, and the sage agent found no other typos.",
                model=MODEL,
            ),
            usage(2100, 25, 1900),
        ),
        entry(
            text(
                "User",
                "<feedback>Thanks! Also remove the old notes.txt</feedback>\n<system_date>2026-11-30</system_date>",
                raw_content={"Text": "Thanks! Also remove the old notes.txt"},
                model=MODEL,
            )
        ),
        entry(
            text(
                "Assistant",
                "",
                tool_calls=[call("remove", "toolu_07RM", {"path": "/home/dev/demo-app/notes.txt"})],
                model=MODEL,
            ),
            usage(2200, 20, 2000),
        ),
        entry(
            result("remove", "toolu_07RM", {"text": '<file_removed path="/home/dev/demo-app/notes.txt" />'})
        ),
        entry(text("Assistant", "Removed notes.txt.", model=MODEL), usage(2250, 8, 2100)),
        42,  # a record of no known shape: kept raw
    ],
    "tools": [{"name": "read", "description": "Reads a file.", "input_schema": {"type": "object"}}],
    "max_tokens": 20480,
    "top_p": 0.8,
    "top_k": 30,
    "reasoning": {"enabled": True},
}
child = {
    "conversation_id": CHILD,
    "initiator": "agent",
    "messages": [
        entry(text("System", "You are Sage, a research agent."), None),
        entry(text("System", INFO)),
        entry(
            text(
                "User",
                "<task>Review hello.py for other typos</task>\n<system_date>2026-11-30</system_date>",
                raw_content={"Text": "Review hello.py for other typos"},
                model=MODEL,
            )
        ),
        entry(
            text(
                "Assistant",
                "",
                tool_calls=[call("fs_search", "toolu_11GREP", {"pattern": "helo", "path": CWD})],
                model=MODEL,
            ),
            usage(900, 30, 0),
        ),
        entry(result("fs_search", "toolu_11GREP", "empty")),
        entry(text("Assistant", "No other typos found.", model=MODEL), usage(1000, 10, 800)),
    ],
}
# An older row: bare values (no {"message", "usage"} wrapper), TokenCount as "Actual", one
# usage for the whole context, patch arguments of the time (path/search/content/operation),
# a compaction's summary frame, and a last call whose result never came.
old = {
    "conversation_id": OLD,
    "messages": [
        text("System", SYSTEM),
        text("System", INFO.replace(CWD, "/home/dev/old-app")),
        text(
            "User",
            "Use the following summary frames as the authoritative reference for all coding suggestions and decisions. Do not re-explain or revisit it unless I ask. Additional summary frames will be added as the conversation progresses.\n\n## Summary\n\n### 1. User\n\n````\nRename the config loader\n````\n",
            raw_content={"Text": "Rename the config loader"},
        ),
        text(
            "User",
            "<task>Now append a log line to app.py</task>\n<system_date>2026-10-01</system_date>",
            raw_content={"Text": "Now append a log line to app.py"},
            model="gpt-5",
        ),
        text(
            "Assistant",
            "Appending it.",
            tool_calls=[
                call(
                    "patch",
                    "call_a1",
                    {
                        "path": "/home/dev/old-app/app.py",
                        "search": "main()",
                        "content": "\nlog('started')",
                        "operation": "append",
                    },
                )
            ],
            model="gpt-5",
        ),
        result(
            "patch",
            "call_a1",
            {
                "text": "<tool_call_error>\n<cause><![CDATA[Could not find match for search text: 'main()'.]]></cause>\n</tool_call_error>"
            },
            is_error=True,
        ),
        text(
            "Assistant",
            "Retrying with the full line.",
            tool_calls=[call("shell", "call_a2", {"command": "grep -n main app.py"})],
            model="gpt-5",
        ),
    ],
    "usage": {
        "prompt_tokens": {"Actual": 5000},
        "completion_tokens": {"Actual": 300},
        "total_tokens": {"Actual": 5300},
        "cached_tokens": {"Actual": 4000},
        "cost": None,
    },
}
rows = [
    (
        MAIN,
        "Fix the greeting",
        WORKSPACE,
        dumps(main),
        "2026-11-30 10:00:00.120000",
        "2026-11-30 10:04:10.500000",
        dumps(
            {
                "started_at": "2026-11-30T10:00:00.120000Z",
                "files_changed": {
                    "/home/dev/demo-app/hello.py": {"lines_added": 1, "lines_removed": 1, "tool": "patch"},
                    "/home/dev/demo-app/test_hello.py": {
                        "lines_added": 5,
                        "lines_removed": 0,
                        "tool": "write",
                    },
                },
                "files_accessed": ["/home/dev/demo-app/hello.py"],
            }
        ),
    ),
    (
        CHILD,
        "Review hello.py for other typos",
        WORKSPACE,
        dumps(child),
        "2026-11-30 10:03:00.000000",
        "2026-11-30 10:03:20.000000",
        dumps({"started_at": "2026-11-30T10:03:00Z", "files_changed": {}}),
    ),
    (OLD, None, 1205523189412765201, dumps(old), "2026-10-01 08:00:00", "2026-10-01 08:10:00", None),
    # A context cut short (a torn write): the row is kept, its context counted as one bad record.
    (BROKEN, "Torn", WORKSPACE, dumps(main)[:700], "2026-11-30 11:00:00", "2026-11-30 11:00:05", None),
    # A conversation Forge created but never ran: no context, not listed (as Forge lists them).
    (
        EMPTY,
        None,
        WORKSPACE,
        None,
        "2026-11-30 12:00:00",
        None,
        dumps({"started_at": None, "files_changed": {}}),
    ),
]
conn.executemany("INSERT INTO conversations (conversation_id, title, workspace_id, context, created_at, updated_at, metrics)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?)", rows)  # fmt: skip
conn.commit()
conn.close()
