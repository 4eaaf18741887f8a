#!/usr/bin/env bash
# Record Hermes Agent sessions against the stub model.
# Usage: run_hermes.sh HERMES_BIN   (hermes-agent installed from PyPI into a throw-away venv)
source "$(dirname "$0")/common.sh"
rec_isolate "$@"
H="$1"
VERSION="$("$H" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1)"
rec_setup "hermes-$VERSION"
stub_start
mkdir -p "$HOME/.hermes"
cat > "$HOME/.hermes/config.yaml" <<YAML
model:
  provider: custom
  base_url: $BASE/v1
  default: stub-model
  api_key: dummy
YAML
export OPENAI_API_KEY=dummy HERMES_ACCEPT_HOOKS=1
cd "$DEMO"
Q=(chat -Q --yolo -q)
run_to out.log 120 "$H" "${Q[@]}" "[[S:hermes/basic]] Look around, make notes.txt, edit it, and try a failing command."
run_to out.log 120 "$H" chat -Q --yolo --continue -q "[[S:hermes/continue]] What does notes.txt say now?"
run_to out.log 60 "$H" "${Q[@]}" "[[S:hermes/apierror]] This request gets HTTP 400."
run_to out.log 180 "$H" "${Q[@]}" "[[S:hermes/subagent]] Ask a subagent to list the files."
run_to out.log 60 "$H" -z "[[S:hermes/text]] Just say hello (one-shot mode)."
run_signal out.log slow 3 INT "$H" "${Q[@]}" "[[S:hermes/slow]] Tell me a long story (interrupted with SIGINT)."
run_signal out.log killtool 3 KILL "$H" "${Q[@]}" "[[S:hermes/killtool]] Run a long command (killed with SIGKILL)."
stub_stop
keep "$HOME/.hermes" "$REPO/tests/corpus/real/hermes-$VERSION"
echo "recorded into tests/corpus/real/hermes-$VERSION"
