#!/usr/bin/env bash
# Record OpenClaw sessions (embedded agent, `openclaw agent --local`) against the stub model.
# Usage: run_openclaw.sh OPENCLAW_BIN NODE_BIN_DIR   (npm package `openclaw`; it needs Node >= 24)
source "$(dirname "$0")/common.sh"
rec_isolate "$@"
O="$1"
export PATH="$2:$PATH"
VERSION="$("$O" --version 2>/dev/null | grep -o '20[0-9.]*' | head -1)"
rec_setup "openclaw-$VERSION"
stub_start
mkdir -p "$HOME/.openclaw"
cat > "$HOME/.openclaw/openclaw.json" <<JSON
{
  "models": {"mode": "replace", "providers": {"stub": {
    "baseUrl": "$BASE/v1", "apiKey": "dummy", "api": "openai-completions",
    "models": [{"id": "stub-model", "name": "Stub", "reasoning": false, "input": ["text"],
                "contextWindow": 128000, "maxTokens": 8000}]}}},
  "agents": {"defaults": {"model": {"primary": "stub/stub-model"}, "workspace": "$DEMO"}}
}
JSON
cd "$DEMO"
A=(agent --local)
run_to out.log 240 "$O" "${A[@]}" --session-id basic -m "[[S:openclaw/basic]] Look around, make notes.txt, edit it, and try a failing command."
run_to out.log 240 "$O" "${A[@]}" --session-id basic -m "[[S:openclaw/continue]] What does notes.txt say now?"
run_to out.log 120 "$O" "${A[@]}" --session-id apierror -m "[[S:openclaw/apierror]] This request gets HTTP 400."
run_to out.log 240 "$O" "${A[@]}" --session-id subagent -m "[[S:openclaw/subagent]] Ask a subagent to list the files."
run_signal out.log slow 3 INT "$O" "${A[@]}" --session-id interrupted -m "[[S:openclaw/slow]] Tell me a long story (interrupted with SIGINT)."
run_signal out.log killtool 3 KILL "$O" "${A[@]}" --session-id killed -m "[[S:openclaw/killtool]] Run a long command (killed with SIGKILL)."
stub_stop
keep "$HOME/.openclaw" "$REPO/tests/corpus/real/openclaw-$VERSION"
echo "recorded into tests/corpus/real/openclaw-$VERSION"
