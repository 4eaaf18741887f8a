"""Builds orgs/: hand-made Plandex server plan folders (no real sample could be recorded: the
Plandex server is a Go program with a PostgreSQL database that does not install from npm or
PyPI here). Layout from plandex-ai/plandex 2.2.1 (commit 9017ba3) app/server/db/fs.go; files as
the server writes them: conversation/<id>.json = ConvoMessage and descriptions/<id>.json =
ConvoMessageDescription through json.Marshal, results/<id>.json = PlanFileResult through
json.MarshalIndent (app/server/db/convo_helpers.go, plan_helpers.go, result_helpers.go,
data_models.go): Go's field order, Go's escaping of <, > and &, times in RFC 3339 with
nanoseconds. Run: python3 build_plandex_samples.py (rewrites orgs/)."""

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).parent / "orgs"
shutil.rmtree(ROOT, ignore_errors=True)
ORG = "3c1e9a4f-0b7d-4e2a-9f61-5a8c2d7b1e90"
USER = "u-7f3a"


def go_json(value, indent=None):
    text = json.dumps(
        value, ensure_ascii=False, indent=indent, separators=(",", ": ") if indent else (",", ":")
    )
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def flags(**on):
    names = ["didMakePlan", "didRemoveTasks", "didMakeDebuggingPlan", "didLoadContext", "CurrentStage", "isChat", "didWriteCode",
             "didCompleteTask", "didCompletePlan", "hasUnfinishedSubtasks", "isApplyDebug", "isUserDebug", "hasError"]  # fmt: skip
    out = {}
    for name in names:
        out[name] = (
            {"TellStage": on.get("stage", "planning"), "PlanningPhase": on.get("phase", "tasks")}
            if name == "CurrentStage"
            else bool(on.get(name))
        )
    return out


def message(plan, mid, role, num, text, tokens, ts, stopped=False, subtask=None, added=None, **flag_on):
    doc = {"id": mid, "orgId": ORG, "planId": plan, "userId": USER, "role": role, "tokens": tokens, "num": num, "message": text,
           "stopped": stopped}  # fmt: skip
    if subtask:
        doc["subtask"] = subtask
    if added:
        doc["addedSubtasks"] = added
    doc["flags"] = flags(**flag_on)
    doc["createdAt"] = ts
    write(plan, "conversation", mid, go_json(doc))


def description(plan, did, mid, commit, ops, ts, error=""):
    doc = {"id": did, "orgId": ORG, "planId": plan, "convoMessageId": mid, "summarizedToMessageId": "", "wroteFiles": True,
           "commitMsg": commit, "operations": ops, "error": error, "didBuild": True, "buildPathsInvalidated": None,
           "createdAt": ts, "updatedAt": ts}  # fmt: skip
    write(plan, "descriptions", did, go_json(doc))


def result(plan, rid, mid, path, ts, content="", replacements=(), removed=False, failed=False, error=""):
    doc = {"id": rid, "typeVersion": 1, "replaceWithLineNums": False, "orgId": ORG, "planId": plan, "convoMessageId": mid,
           "planBuildId": "build-1", "path": path}  # fmt: skip
    if content:
        doc["content"] = content
    doc.update({"replacements": [dict(r) for r in replacements], "removedFile": removed, "anyFailed": failed, "error": error,
                "syntaxErrors": None, "createdAt": ts, "updatedAt": ts})  # fmt: skip
    write(plan, "results", rid, go_json(doc, indent=2))


def write(plan, folder, name, text):
    path = ROOT / ORG / "plans" / plan / folder / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def replacement(rid, old, new, summary, failed=False):
    return {
        "id": rid,
        "old": old,
        "summary": summary,
        "entireFile": False,
        "new": new,
        "failed": failed,
        "streamedChange": None,
    }


A, B = "9d2f6b1a-4c3e-4f5a-8b7c-1e2d3f4a5b6c", "a7e8f9b0-1c2d-4e3f-9a5b-6c7d8e9f0a1b"
M1, M2, M3, M4 = ("0b1a2c3d-0001-4000-8000-000000000001", "0b1a2c3d-0002-4000-8000-000000000002",
                  "0b1a2c3d-0003-4000-8000-000000000003", "0b1a2c3d-0004-4000-8000-000000000004")  # fmt: skip
message(
    A,
    M1,
    "user",
    1,
    "Add a /health route to server.go that returns ok & a test",
    14,
    "2025-07-10T09:00:00.123456789Z",
)
message(A, M2, "assistant", 2, "### Plan\n\n1. Add the <health> handler to `server.go`\n2. Add `health_test.go`\n\nI'll start with the handler.",
        850, "2025-07-10T09:00:21.5Z", didMakePlan=True, didWriteCode=True, stage="implementation",
        subtask={"title": "Add the health handler", "description": "In server.go", "usesFiles": ["server.go"], "isFinished": True, "numTries": 1},
        added=[{"title": "Add the health handler", "description": "In server.go", "usesFiles": ["server.go"], "isFinished": False, "numTries": 0}])  # fmt: skip
description(A, "d-0001", M2, "Added /health route and its test",
            [{"Type": "file", "Path": "server.go", "Destination": "", "Content": "func health(w http.ResponseWriter, r *http.Request) {\\n}",
              "Description": "", "ReplyBefore": "", "NumTokens": 40},
             {"Type": "file", "Path": "health_test.go", "Destination": "", "Content": "package main", "Description": "", "ReplyBefore": "", "NumTokens": 12}],
            "2025-07-10T09:00:22Z")  # fmt: skip
result(A, "r-0001", M2, "server.go", "2025-07-10T09:00:25Z",
       replacements=[replacement("rp-1", '\thttp.HandleFunc("/", index)', '\thttp.HandleFunc("/", index)\n\thttp.HandleFunc("/health", health)', "route /health")])  # fmt: skip
result(A, "r-0002", M2, "health_test.go", "2025-07-10T09:00:26Z",
       content='package main\n\nimport "testing"\n\nfunc TestHealth(t *testing.T) {}\n')  # fmt: skip
result(A, "r-0003", M2, "README.md", "2025-07-10T09:00:27Z", failed=True,
       replacements=[replacement("rp-2", "## Routes", "## Routes\n\n- /health", "document the route", failed=True)])  # fmt: skip
message(A, M3, "user", 3, "Now remove the old index handler", 9, "2025-07-10T09:05:00Z")
message(
    A,
    M4,
    "assistant",
    4,
    "Removing `index` from server.go and",
    6,
    "2025-07-10T09:05:04.25Z",
    stopped=True,
    stage="implementation",
)

N1, N2, N3 = (
    "1c2d3e4f-0001-4000-8000-00000000000a",
    "1c2d3e4f-0002-4000-8000-00000000000b",
    "1c2d3e4f-0003-4000-8000-00000000000c",
)
message(B, N1, "user", 1, "Delete the legacy/ folder", 7, "2025-07-11T14:00:00Z")
message(
    B,
    N2,
    "assistant",
    2,
    "Removing legacy/util.go.",
    120,
    "2025-07-11T14:00:09Z",
    didWriteCode=True,
    stage="implementation",
)
result(B, "r-0101", N2, "legacy/util.go", "2025-07-11T14:00:10Z", removed=True)
message(
    B,
    N3,
    "assistant",
    3,
    "The model returned an error: context length exceeded.",
    11,
    "2025-07-11T14:00:30Z",
    hasError=True,
)
write(
    B,
    "conversation",
    "1c2d3e4f-0004-4000-8000-00000000000d",
    '{"id":"1c2d3e4f-0004-4000-8000-00000000000d","orgId":"' + ORG + '","role":"us',
)  # cut short
# Beside the plans: a project's map cache, not a plan.
(ROOT / ORG / "projects" / "p-1" / "map_cache").mkdir(parents=True)
(ROOT / ORG / "projects" / "p-1" / "map_cache" / "index.json").write_text("{}", encoding="utf-8")
