#!/usr/bin/env bash
# Record CodeBuddy Code sessions (`codebuddy -p`, headless) against the stub model.
# Usage: run_codebuddy.sh CODEBUDDY_BIN   (the CLI binary that PyPI's `codebuddy-agent-sdk`
# ships as codebuddy_agent_sdk/bin/codebuddy-headless; a custom model in ~/.codebuddy/models.json
# needs no login)
source "$(dirname "$0")/common.sh"
rec_isolate "$@"
C="$1"
VERSION="$("$C" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1)"
rec_setup "codebuddy-$VERSION"
stub_start
mkdir -p "$HOME/.codebuddy"
cat > "$HOME/.codebuddy/models.json" <<JSON
{"models": [{"id": "stub-model", "name": "Stub", "vendor": "OpenAI", "apiKey": "dummy",
             "url": "$BASE/v1/chat/completions", "maxInputTokens": 128000, "maxOutputTokens": 8000,
             "supportsToolCall": true, "supportsImages": false}],
 "availableModels": ["stub-model"]}
JSON
cd "$DEMO"
P=(-p --model stub-model -y)
run_to out.log 120 "$C" "${P[@]}" "[[S:codebuddy/basic]] Look around, make notes.txt, edit it, and try a failing command."
run_to out.log 120 "$C" "${P[@]}" --continue "[[S:codebuddy/continue]] What does notes.txt say now?"
run_to out.log 60 "$C" "${P[@]}" "[[S:codebuddy/apierror]] This request gets HTTP 400."
run_to out.log 180 "$C" "${P[@]}" "[[S:codebuddy/subagent]] Ask a subagent to list the files."
run_signal out.log slow 3 INT "$C" "${P[@]}" "[[S:codebuddy/slow]] Tell me a long story (interrupted with SIGINT)."
run_signal out.log killtool 3 KILL "$C" "${P[@]}" "[[S:codebuddy/killtool]] Run a long command (killed with SIGKILL)."
stub_stop
keep "$HOME/.codebuddy" "$REPO/tests/corpus/real/codebuddy-$VERSION"
echo "recorded into tests/corpus/real/codebuddy-$VERSION"
