#!/usr/bin/env bash
# Record Open Interpreter conversations against the stub model.
# Usage: run_open_interpreter.sh INTERPRETER_BIN   (open-interpreter from PyPI in a throw-away venv)
source "$(dirname "$0")/common.sh"
rec_isolate "$@"
I="$1"
VERSION="$("$I" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1)"
rec_setup "open-interpreter-$VERSION"
stub_start
cd "$DEMO"
O=(-y --model openai/stub-model --api_base "$BASE/v1" --api_key dummy -dt --offline --plain)
say() { printf '%s\n' "$@" > "$REC/prompt.txt"; }
# one prompt on stdin (--stdin), with OpenAI function calling (-lsf) and without it (markdown)
say "[[S:oi/codebasic]] Look around, make notes.txt, edit it, and try a failing command."
run_in() { echo "+ $* < prompt.txt" >> "$REC/out.log"; timeout -k 5 "$1" "${@:2}" < "$REC/prompt.txt" >> "$REC/out.log" 2>&1 || echo "(exit $?)" >> "$REC/out.log"; }
run_in 120 "$I" "${O[@]}" -lsf --stdin
run_in 120 "$I" "${O[@]}" --stdin
# two user turns in one interactive run (the REPL reads them from stdin)
say "[[S:oi/text]] Hello there." "[[S:oi/continue]] What does notes.txt say now?"
run_in 120 "$I" "${O[@]}" -lsf
say "[[S:oi/apierror]] This request gets HTTP 400."
run_in 60 "$I" "${O[@]}" -lsf --stdin
echo "[[S:oi/slow]] Tell me a long story (interrupted with SIGINT)." > "$REC/prompt.slow"
echo "[[S:oi/killtool]] Run a long command (killed with SIGKILL)." > "$REC/prompt.kill"
run_signal out.log slow 3 INT bash -c "exec \"\$0\" \"\$@\" < '$REC/prompt.slow'" "$I" "${O[@]}" -lsf --stdin
run_signal out.log killtool 3 KILL bash -c "exec \"\$0\" \"\$@\" < '$REC/prompt.kill'" "$I" "${O[@]}" -lsf --stdin
stub_stop
keep "$HOME/.config/open-interpreter" "$REPO/tests/corpus/real/open-interpreter-$VERSION"
echo "recorded into tests/corpus/real/open-interpreter-$VERSION"
