#!/usr/bin/env bash
# Install the agent CLIs that tests/test_handoff_targets.py hands a session to, and Claude Code
# for tests/test_mcp_claude_cli.py, each in its own npm prefix under DIR (nothing global):
# DIR/claude-code, DIR/codex, DIR/gemini, DIR/opencode. The versions are
# those of the corpus recordings (tests/corpus/real/). Then run the test with
#   AGTAIL_HANDOFF_CLIS=DIR .venv/bin/python -m pytest -q tests/test_handoff_targets.py
set -euo pipefail
DIR="${1:?usage: install_handoff_targets.sh DIR}"
mkdir -p "$DIR"
npm install --prefix "$DIR/claude-code" --no-audit --no-fund @anthropic-ai/claude-code@2.1.197
npm install --prefix "$DIR/codex" --no-audit --no-fund @openai/codex@0.171.0
npm install --prefix "$DIR/gemini" --no-audit --no-fund @google/gemini-cli@0.61.0
npm install --prefix "$DIR/opencode" --no-audit --no-fund opencode-ai@1.18.33
