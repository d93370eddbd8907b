# Sourced by the shell drivers of the editor tests (editors/nvim/tests/run.sh,
# editors/nvim/tests/acp_codecompanion/run.sh, editors/acp/test/emacs/run.sh):
# kin's scripted mock model started and stopped one way.

# start_mockmodel LABEL BIN RULES DIR starts the mock model BIN with the
# rules file RULES on a free loopback port, its output in DIR/mock.out and
# DIR/mock.err, waits for the address it writes to DIR/mock-url, sets
# MOCK_PID and exports OPENAI_BASE_URL. A model that exits or does not start
# ends the script (exit 1), saying so under LABEL.
start_mockmodel() {
  local label=$1 bin=$2 rules=$3 dir=$4
  "$bin" -rules "$rules" -addr 127.0.0.1:0 -port-file "$dir/mock-url" \
    >"$dir/mock.out" 2>"$dir/mock.err" </dev/null &
  MOCK_PID=$!
  for _ in $(seq 1 200); do
    [ -s "$dir/mock-url" ] && break
    if ! kill -0 "$MOCK_PID" 2>/dev/null; then
      echo "$label: the mock model exited:" >&2
      cat "$dir/mock.err" >&2
      exit 1
    fi
    sleep 0.05
  done
  [ -s "$dir/mock-url" ] || { echo "$label: the mock model did not start" >&2; exit 1; }
  OPENAI_BASE_URL="$(cat "$dir/mock-url")"
  export OPENAI_BASE_URL
}

# stop_mockmodel stops what start_mockmodel started (for an EXIT trap).
stop_mockmodel() {
  if [ -n "${MOCK_PID:-}" ]; then
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
  fi
}
