# Shared setup for the recording drivers (sourced by run_<agent>.sh).
#
# Every driver runs inside its own network namespace (unshare -n) where only loopback exists,
# so the agent can reach the stub model on 127.0.0.1 and nothing else: no telemetry, no update
# checks, no real model. HOME is a throw-away folder; API keys are the literal "dummy".
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PORT="${PORT:-8765}"
BASE="http://127.0.0.1:$PORT"

# Re-run the calling script inside a fresh network namespace with only loopback up.
rec_isolate() {
  if [ -z "${REC_NETNS:-}" ]; then
    exec unshare -n env REC_NETNS=1 bash "$0" "$@"
  fi
  ip link set lo up
}

# rec_setup NAME: a fresh throw-away HOME under $REC_BASE/NAME with a small git project.
rec_setup() {
  REC="${REC_BASE:-/tmp/agtail-rec}/$1"
  rm -rf "$REC"
  mkdir -p "$REC/home/src/demo-app"
  export HOME="$REC/home" XDG_CONFIG_HOME="$REC/home/.config" XDG_DATA_HOME="$REC/home/.local/share"
  export XDG_STATE_HOME="$REC/home/.local/state" XDG_CACHE_HOME="$REC/home/.cache"
  export NO_COLOR=1 TERM=dumb DO_NOT_TRACK=1 CI=1
  DEMO="$HOME/src/demo-app"
  printf '# demo-app\n\nA tiny project for recordings.\n' > "$DEMO/README.md"
  printf 'def add(a, b):\n    return a + b\n' > "$DEMO/app.py"
  git -C "$DEMO" init -q
  git -C "$DEMO" -c user.email=rec@example.invalid -c user.name=rec add -A
  git -C "$DEMO" -c user.email=rec@example.invalid -c user.name=rec commit -qm init
}

# stub_start: the scripted model, logging each request to $REC/requests.jsonl.
stub_start() {
  python3 "$HERE/stubmodel.py" --port "$PORT" --log "$REC/requests.jsonl" > "$REC/stub.out" 2>&1 &
  STUB_PID=$!
  trap stub_stop EXIT  # a driver that dies half-way leaves no stub behind
  for _ in $(seq 50); do
    python3 - "$PORT" <<'PY' && return 0
import socket, sys
s = socket.socket()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
PY
    sleep 0.1
  done
  echo "stub did not start" >&2
  return 1
}

stub_stop() { kill "$STUB_PID" 2>/dev/null || true; wait "$STUB_PID" 2>/dev/null || true; }

# run_to LOG TIMEOUT CMD...: run an agent command, keeping its output; never fail the driver.
run_to() {
  local log="$1" t="$2"; shift 2
  echo "+ $*" >> "$REC/$log"
  timeout -k 5 "$t" "$@" >> "$REC/$log" 2>&1 < /dev/null || echo "(exit $?)" >> "$REC/$log"
}

# run_signal LOG SCENARIO AFTER SIGNAL CMD...: start a command; once the stub has seen a request
# for SCENARIO (or 120 s passed), wait AFTER seconds more and send SIGNAL to its process group.
run_signal() {
  local log="$1" scen="$2" after="$3" sig="$4"; shift 4
  echo "+ $* (then $sig ${after}s after the first '$scen' request)" >> "$REC/$log"
  setsid "$@" >> "$REC/$log" 2>&1 < /dev/null &
  local pid=$!
  for _ in $(seq 600); do
    grep -q "\"scenario\": \"$scen\"" "$REC/requests.jsonl" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  sleep "$after"
  kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid" 2>/dev/null || true
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || echo "(exit $?)" >> "$REC/$log"
}

# checkpoint_sqlite DIR: fold every WAL into its database so each store is one file.
checkpoint_sqlite() {
  find "$1" -name '*-wal' -o -name '*-shm' | while read -r f; do
    db="${f%-wal}"; db="${db%-shm}"
    [ -f "$db" ] && python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.execute('PRAGMA journal_mode=DELETE'); c.close()" "$db" || true
  done
  find "$1" \( -name '*-wal' -o -name '*-shm' \) -delete
}

# keep SRC DEST: copy the agent's own data folder into the repository's corpus.
keep() {
  rm -rf "$2"; mkdir -p "$(dirname "$2")"; cp -a "$1" "$2"
  checkpoint_sqlite "$2"
}
