"""Writes the hand-made Junie sessions (tests/corpus/PROVENANCE.md): python make_samples.py SESSIONS_DIR."""

import json
import os
import sys

base = sys.argv[1]
MAIN = {"kind": "MainAgent", "id": "main", "name": "main", "type": "LINEAR"}
SUB = {"kind": "CustomAgent", "id": "android-qa-agent-1", "name": "android-qa-agent", "type": "LINEAR"}
TASK = "task-261130-101502-hm01"
T0 = 1796033702000  # 2026-11-30T10:15:02Z


def a2ux(ms, agent_event, state="IN_PROGRESS", agent=MAIN, **top):
    return {
        "kind": "SessionA2uxEvent",
        "event": {"state": state, "agentEvent": {**agent_event, "agent": agent}},
        "taskId": TASK,
        "timestampMs": T0 + ms,
        **top,
    }


def usage(ms, model, inp, out, cache_read=0, cache_write=0, cost=0.001):
    return a2ux(
        ms,
        {
            "kind": "LlmResponseMetadataEvent",
            "modelUsage": [
                {
                    "model": model,
                    "provider": "openai",
                    "cost": cost,
                    "inputTokens": inp,
                    "cacheInputTokens": cache_read,
                    "cacheCreateTokens": cache_write,
                    "outputTokens": out,
                    "reasoningTokens": 0,
                    "time": 812,
                }
            ],
        },
    )


session = "session-261130-101500-hm01"
lines = [
    {
        "kind": "UserPromptEvent",
        "requestId": "prompt-261130-101502-aa01",
        "prompt": "Run the unit tests and fix the gamma parser",
        "presentablePrompt": "Run the unit tests and fix the gamma parser",
        "timestampMs": T0,
    },
    {"kind": "TaskStartedEvent", "taskId": TASK, "timestampMs": T0 + 20},
    a2ux(40, {"kind": "AgentCurrentStatusUpdatedEvent"}),
    a2ux(60, {"kind": "EnvironmentVariablesUpdatedEvent", "env": []}),
    usage(900, "gpt-5.6-luna", 1800, 120, cache_write=9000, cost=0.0041),
    usage(900, "gpt-5.6-luna", 1800, 120, cache_write=9000, cost=0.0041),  # the same usage line written again
    {"kind": "SessionTitleSetEvent", "name": "Fix the gamma parser", "timestampMs": T0 + 950},
    a2ux(
        1000,
        {
            "kind": "AgentThoughtBlockUpdatedEvent",
            "stepId": "step-think-1",
            "text": "I will run the tests first to see which gamma case fails.",
        },
    ),
    a2ux(
        1100,
        {
            "kind": "TerminalBlockUpdatedEvent",
            "stepId": "step-term-1",
            "status": "IN_PROGRESS",
            "command": "./gradlew test",
        },
    ),
    a2ux(
        4100,
        {
            "kind": "TerminalBlockUpdatedEvent",
            "stepId": "step-term-1",
            "status": "FAILED",
            "command": "./gradlew test",
            "output": "GammaParserTest > parsesNegative FAILED\n    expected: -3 but was: 3",
            "outputLinesCount": 2,
            "details": "One test failed: the parser drops the minus sign.",
        },
    ),
    a2ux(
        4200,
        {
            "kind": "AgentStateUpdatedEvent",
            "blob": json.dumps({"lastAgentState": {"issue": "parser", "steps": 2}}),
        },
    ),
    a2ux(
        4300,
        {
            "kind": "CustomAgentBlockUpdatedEvent",
            "stepId": "step-agent-1",
            "name": "android-qa-agent",
            "status": "STARTED",
        },
    ),
    a2ux(
        4400,
        {
            "kind": "McpBlockUpdatedEvent",
            "stepId": "step-mcp-1",
            "toolName": "idea/search_in_files_by_text",
            "input": '\n{\n    "searchText": "parseGamma"\n}',
            "status": "IN_PROGRESS",
            "details": '\n{\n    "searchText": "parseGamma"\n}',
        },
        agent=SUB,
    ),
    a2ux(
        4700,
        {
            "kind": "McpBlockUpdatedEvent",
            "stepId": "step-mcp-1",
            "toolName": "idea/search_in_files_by_text",
            "input": '\n{\n    "searchText": "parseGamma"\n}',
            "status": "COMPLETED",
            "details": "Found parseGamma in src/main/kotlin/Gamma.kt",
        },
        agent=SUB,
    ),
    usage(4800, "gpt-4.1-mini-2025-04-14", 640, 40, cost=0.0003),
    a2ux(
        4900,
        {
            "kind": "CustomAgentBlockUpdatedEvent",
            "stepId": "step-agent-1",
            "name": "android-qa-agent",
            "status": "FINISHED",
            "details": "The sign is lost in parseGamma's digit loop.",
        },
    ),
    a2ux(
        5000,
        {
            "kind": "FileChangesBlockUpdatedEvent",
            "stepId": "step-edit-1",
            "status": "IN_PROGRESS",
            "changes": [
                {
                    "beforeContent": {
                        "kind": "TextFileContent",
                        "text": "fun parseGamma(s: String) = s.trimStart('-').toInt()\n",
                    },
                    "afterContent": {
                        "kind": "TextFileContent",
                        "text": "fun parseGamma(s: String) = s.toInt()\n",
                    },
                    "beforeRelativePath": "src/main/kotlin/Gamma.kt",
                    "afterRelativePath": "src/main/kotlin/Gamma.kt",
                }
            ],
        },
    ),
    '{"kind": "SessionA2uxEvent", "event": {"state": "IN_PROG',  # a line cut short mid-record
    a2ux(
        5300,
        {
            "kind": "FileChangesBlockUpdatedEvent",
            "stepId": "step-edit-1",
            "status": "COMPLETED",
            "changes": [
                {
                    "beforeContent": {
                        "kind": "TextFileContent",
                        "text": "fun parseGamma(s: String) = s.trimStart('-').toInt()\n",
                    },
                    "afterContent": {
                        "kind": "TextFileContent",
                        "text": "fun parseGamma(s: String) = s.toInt()\n",
                    },
                    "beforeRelativePath": "src/main/kotlin/Gamma.kt",
                    "afterRelativePath": "src/main/kotlin/Gamma.kt",
                }
            ],
            "details": "parseGamma keeps the sign now.",
        },
    ),
    a2ux(
        5400,
        {
            "kind": "ChoiceRequestUpdatedEvent",
            "stepId": "step-choice-1",
            "title": "Also add a regression test?",
            "choiceRequest": {
                "id": "choice-1",
                "options": [
                    {"id": "Yes", "description": "Add the test"},
                    {"id": "No", "description": "Skip it"},
                ],
            },
            "status": "IN_PROGRESS",
        },
        state="INPUT_REQUIRED",
    ),
    {"kind": "UserResponseEvent", "prompt": "Add the test", "isChoice": True, "timestampMs": T0 + 9000},
    a2ux(
        9100,
        {
            "kind": "AgentFailureEvent",
            "message": "Junie: Unable to connect to LLM service",
            "errorCode": "ConnectionFailed",
        },
    ),
    {
        "kind": "UserPromptEvent",
        "requestId": "prompt-261130-101612-bb02",
        "prompt": "Try again and add the regression test",
        "timestampMs": T0 + 70000,
    },
    usage(71000, "gpt-5.6-luna", 3, 260, cache_read=10800, cache_write=420, cost=0.0011),
    a2ux(
        71200,
        {
            "kind": "ResultBlockUpdatedEvent",
            "stepId": "step-result-1",
            "cancelled": False,
            "result": "Fixed parseGamma so negative gamma values keep their sign.",
            "title": "Gamma parser fix",
            "errorCode": "Submit",
        },
        completion={"startedAtMs": T0, "endedAtMs": T0 + 71200, "taskCostUsd": 0.0055},
    ),
    {"kind": "TaskState", "state": "COMPLETED", "timestampMs": T0 + 71300},
    {
        "kind": "QuotaWarningEvent",
        "text": "A top-level kind this reader does not know",
        "timestampMs": T0 + 71400,
    },
    {"kind": "CancelAgentEvent", "timestampMs": T0 + 72000},
]
folder = os.path.join(base, session)
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "events.jsonl"), "w") as fh:
    for line in lines:
        fh.write(
            (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False, separators=(",", ":")))
            + "\n"
        )
    fh.write(
        json.dumps(a2ux(73000, {"kind": "AgentCurrentStatusUpdatedEvent"}), separators=(",", ":"))[:60]
    )  # torn last line
with open(os.path.join(base, "index.jsonl"), "w") as fh:
    fh.write(
        json.dumps(
            {
                "sessionId": session,
                "createdAt": T0,
                "updatedAt": T0 + 72000,
                "projectDir": "/home/dev/src/gamma-lib",
                "taskName": "Fix the gamma parser",
            },
            separators=(",", ":"),
        )
        + "\n"
    )
