#!/usr/bin/env bash
# Record gptme sessions against the stub model.
# Usage: run_gptme.sh GPTME_BIN   (gptme installed from PyPI into a throw-away venv)
source "$(dirname "$0")/common.sh"
rec_isolate "$@"
G="$1"
VERSION="$("$G" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1)"
rec_setup "gptme-$VERSION"
stub_start
export OPENAI_BASE_URL="$BASE/v1" OPENAI_API_KEY=dummy GPTME_CHECK_UPDATE=false
cd "$DEMO"
M=(-n -m local/stub-model)
run_to out.log 120 "$G" "${M[@]}" --name basic "[[S:gptme/basic]] Look around, make notes.txt, edit it, and try a failing command."
run_to out.log 120 "$G" "${M[@]}" --name basic -r "[[S:gptme/continue]] What does notes.txt say now?"
run_to out.log 120 "$G" "${M[@]}" --tool-format markdown --name markdown "[[S:gptme/basic]] Same tour, markdown tool format."
run_to out.log 60 "$G" "${M[@]}" --name apierror "[[S:gptme/apierror]] This request gets HTTP 400."
run_to out.log 120 "$G" "${M[@]}" -t +subagent --name subagent "[[S:gptme/subagent]] Ask a subagent to list the files."
run_signal out.log slow 3 INT "$G" "${M[@]}" --name interrupted "[[S:gptme/slow]] Tell me a long story (interrupted with SIGINT)."
run_signal out.log killtool 3 KILL "$G" "${M[@]}" --name killed "[[S:gptme/killtool]] Run a long command (killed with SIGKILL)."
stub_stop
keep "$HOME/.local/share/gptme" "$REPO/tests/corpus/real/gptme-$VERSION"
echo "recorded into tests/corpus/real/gptme-$VERSION"
