"""Writes the hand-made Codebuff chats (tests/corpus/PROVENANCE.md): python make_samples.py PROJECTS_DIR."""

import json
import os
import sys

base = sys.argv[1]


def chat(project, chat_id, messages, run_state=None, raw=None):
    d = os.path.join(base, project, "chats", chat_id)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "chat-messages.json"), "w") as fh:
        fh.write(raw if raw is not None else json.dumps(messages, indent=2))
    if run_state is not None:
        with open(os.path.join(d, "run-state.json"), "w") as fh:
            fh.write(json.dumps(run_state, indent=2))


ROOT = "/home/dev/src/demo-app"
s1 = [
    {
        "id": "msg-u1",
        "variant": "user",
        "content": "Rename the greeting in src/hello.ts to 'Hello, gamma' and run the tests",
        "timestamp": "2026-11-30T09:15:02.300Z",
        "blocks": [
            {
                "type": "text",
                "content": "Rename the greeting in src/hello.ts to 'Hello, gamma' and run the tests",
            }
        ],
    },
    {
        "id": "msg-a1",
        "variant": "ai",
        "content": "",
        "timestamp": "2026-11-30T09:15:09.812Z",
        "isComplete": True,
        "credits": 3.25,
        "completionTime": "7s",
        "metadata": {
            "model": "anthropic/claude-sonnet-4.5",
            "usage": {
                "inputTokens": 1200,
                "outputTokens": 340,
                "cacheReadInputTokens": 5400,
                "cacheCreationInputTokens": 800,
            },
        },
        "blocks": [
            {
                "type": "text",
                "content": "The greeting lives in src/hello.ts; I will look for its callers first.",
                "textType": "reasoning",
                "thinkingId": "think-1",
                "status": "complete",
            },
            {
                "type": "agent",
                "agentId": "agent-fp-1",
                "agentName": "File Picker",
                "agentType": "file-picker",
                "content": "src/hello.ts\nsrc/hello.test.ts",
                "status": "complete",
                "initialPrompt": "Find the files that define or test the greeting",
                "spawnToolCallId": "call-spawn-1",
                "spawnIndex": 0,
                "blocks": [
                    {
                        "type": "tool",
                        "toolCallId": "call-fp-find",
                        "toolName": "find_files",
                        "input": {"prompt": "greeting"},
                        "output": '[{"type":"json","value":{"files":["src/hello.ts","src/hello.test.ts"]}}]',
                    },
                    {"type": "text", "content": "Two files define and test the greeting."},
                ],
            },
            {
                "type": "tool",
                "toolCallId": "call-read-1",
                "toolName": "read_files",
                "input": {"paths": ["src/hello.ts"]},
                "output": '[{"type":"json","value":[{"path":"src/hello.ts","content":"export const greeting = \'Hello, beta\'\\n"}]}]',
            },
            {
                "type": "tool",
                "toolCallId": "call-edit-1",
                "toolName": "str_replace",
                "input": {
                    "path": "src/hello.ts",
                    "replacements": [
                        {
                            "old": "export const greeting = 'Hello, beta'\n",
                            "new": "export const greeting = 'Hello, gamma'\n",
                            "allowMultiple": False,
                        }
                    ],
                },
                "output": '[{"type":"json","value":{"file":"src/hello.ts","message":"Updated file","unifiedDiff":"@@ -1 +1 @@\\n-export const greeting = \'Hello, beta\'\\n+export const greeting = \'Hello, gamma\'\\n"}}]',
            },
            {
                "type": "tool",
                "toolCallId": "call-write-1",
                "toolName": "write_file",
                "input": {
                    "path": "NOTES.md",
                    "instructions": "Create release notes",
                    "content": "# Notes\n\nThe greeting is now gamma.\n",
                },
                "output": '[{"type":"json","value":{"file":"NOTES.md","message":"Created new file"}}]',
            },
            {
                "type": "tool",
                "toolCallId": "call-term-1",
                "toolName": "run_terminal_command",
                "input": {"command": "npm test", "process_type": "SYNC"},
                "output": '[{"type":"json","value":{"command":"npm test","startingCwd":"/home/dev/src/demo-app","stdout":"1 failing\\n","stderr":"AssertionError: expected \'Hello, beta\'\\n","exitCode":1}}]',
            },
            {"type": "text", "content": "The test still expects the old greeting; I will update it."},
        ],
    },
    {
        "id": "msg-u2",
        "variant": "user",
        "content": "Yes, fix the test too",
        "timestamp": "2026-11-30T09:16:30.000Z",
    },
    {
        "id": "msg-a2",
        "variant": "ai",
        "content": "",
        "timestamp": "2026-11-30T09:16:41.020Z",
        "credits": 1.5,
        "metadata": {
            "codebuff": {
                "usage": {
                    "prompt_tokens": 2600,
                    "completion_tokens": 210,
                    "prompt_tokens_details": {"cached_tokens": 2000},
                    "model": "anthropic/claude-sonnet-4.5",
                }
            }
        },
        "blocks": [
            {
                "type": "tool",
                "toolCallId": "call-term-2",
                "toolName": "run_terminal_command",
                "input": {"command": "npm test", "process_type": "SYNC"},
                "output": '[{"type":"json","value":{"command":"npm test","stdout":"2 passing\\n","stderr":"","exitCode":0}}]',
            },
            {"type": "mode-divider", "mode": "PLAN"},
            {"type": "text", "content": "Both tests pass with the gamma greeting."},
        ],
    },
]
rs1 = {
    "sessionState": {
        "fileContext": {
            "projectRoot": ROOT,
            "cwd": ROOT,
            "fileTree": [],
            "fileTokenScores": {},
            "knowledgeFiles": {},
            "gitChanges": {"status": "", "diff": "", "diffCached": "", "lastCommitMessages": ""},
            "changesSinceLastChat": {},
            "shellConfigFiles": {},
            "systemInfo": {
                "platform": "linux",
                "shell": "bash",
                "nodeVersion": "v22.11.0",
                "arch": "x64",
                "homedir": "/home/dev",
                "cpus": 8,
            },
        },
        "mainAgentState": {
            "agentId": "main-agent",
            "agentType": "base2",
            "agentContext": {},
            "subagents": [],
            "stepsRemaining": 19,
            "creditsUsed": 4.75,
            "messageHistory": [
                {"role": "user", "content": [{"type": "text", "text": "Yes, fix the test too"}]},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool-call",
                            "toolCallId": "call-term-2",
                            "toolName": "run_terminal_command",
                            "input": {"command": "npm test"},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "content": {
                        "type": "tool-result",
                        "toolCallId": "call-term-2",
                        "toolName": "run_terminal_command",
                        "output": [{"type": "json", "value": {"exitCode": 0}}],
                    },
                },
            ],
        },
    },
    "output": {"type": "lastMessage", "value": "Both tests pass with the gamma greeting."},
}
chat("demo-app", "2026-11-30T09-15-02.114Z", s1, rs1)

s2 = [
    {
        "id": "msg-b1",
        "variant": "user",
        "content": "Start the dev server in server/ and tell me the port",
        "timestamp": "2026-11-30T11:02:41.000Z",
    },
    {
        "id": "msg-b2",
        "variant": "ai",
        "content": "",
        "timestamp": "2026-11-30T11:02:55.400Z",
        "credits": 0.8,
        "metadata": {
            "bashCwd": "/home/dev/src/demo-app/server",
            "runState": {
                "sessionState": {
                    "mainAgentState": {
                        "messageHistory": [
                            {"role": "user", "content": "Start the dev server"},
                            {
                                "role": "assistant",
                                "content": "ok",
                                "providerOptions": {
                                    "codebuff": {
                                        "model": "openai/gpt-5.1",
                                        "usage": {"inputTokens": 900, "outputTokens": 120},
                                    }
                                },
                            },
                        ]
                    }
                }
            },
        },
        "blocks": [
            {
                "type": "tool",
                "toolCallId": "call-srv-1",
                "toolName": "run_terminal_command",
                "input": {"command": "npm run dev", "process_type": "BACKGROUND"},
                "output": '[{"type":"json","value":{"command":"npm run dev","errorMessage":"Command timed out after 30 seconds"}}]',
            },
            {
                "type": "ask-user",
                "toolCallId": "call-ask-1",
                "questions": [
                    {
                        "question": "Which port should the server use?",
                        "options": [{"label": "3000"}, {"label": "8080"}],
                    }
                ],
                "answers": [{"questionIndex": 0, "selectedOption": "8080"}],
            },
        ],
    },
    {
        "id": "msg-b3",
        "variant": "error",
        "content": "Request failed: the model provider returned 529 (overloaded)",
        "timestamp": "2026-11-30T11:03:10.000Z",
    },
]
chat("demo-app", "2026-11-30T11-02-40.500Z", s2)

s3_full = json.dumps(
    [
        {
            "id": "msg-c1",
            "variant": "user",
            "content": "Summarise the README",
            "timestamp": "2026-12-01T08:00:01.000Z",
        },
        {
            "id": "msg-c2",
            "variant": "ai",
            "content": "The README describes a small greeting library.",
            "timestamp": "2026-12-01T08:00:04.000Z",
        },
    ],
    indent=2,
)
chat("demo-app", "2026-12-01T08-00-00.000Z", None, raw=s3_full[: len(s3_full) * 2 // 3])

s4 = [
    {
        "id": "msg-d1",
        "role": "user",
        "content": "What does gamma mean in this notebook?",
        "createdAt": "2026-12-01T19:30:00.000Z",
    },
    "a stray string where a message belongs",
    {"id": "msg-d2", "variant": "announcement", "content": "A message kind this reader does not know"},
    {
        "id": "msg-d3",
        "role": "assistant",
        "content": "Gamma is the third letter of the Greek alphabet; here it names the third test fixture.",
        "createdAt": "2026-12-01T19:30:06.000Z",
        "metadata": {"model": "x-ai/grok-4", "usage": {"input_tokens": 300, "output_tokens": 45}},
        "userError": "Out of credits: the reply was cut short",
    },
]
chat("scratch", "2026-12-01T19-29-58.000Z", s4)
