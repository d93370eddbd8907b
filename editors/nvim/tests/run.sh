#!/usr/bin/env bash
# Runs kin.nvim's tests in a real Neovim >= 0.10 against the real `kin serve` and the scripted
# mock model. Usage: editors/nvim/tests/run.sh [tests/x_spec.lua ...]
#   KIN_TEST_NVIM   the nvim to use (default: $KIN_NVIM_DIR/bin/nvim, installed if missing)
#   KIN_TEST_FILTER run only the cases whose "file name" contains this text
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PLUGIN="$(dirname "$HERE")"
REPO="$(cd "$PLUGIN/../.." && pwd)"

NVIM="${KIN_TEST_NVIM:-${KIN_NVIM_DIR:-/opt/kin-nvim}/bin/nvim}"
if ! "$NVIM" --version 2>/dev/null | head -n1 | grep -Eq '^NVIM v(0\.(1[0-9]|[2-9][0-9])|[1-9])'; then
  KIN_NVIM_DIR="$(dirname "$(dirname "$NVIM")")" bash "$REPO/.ci/install-nvim.sh"
fi
export KIN_TEST_NVIM="$NVIM"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/kin-nvim-test.XXXXXX")"
MOCK_PID=""
cleanup() {
  if [ -n "$MOCK_PID" ]; then
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

cd "$REPO"
if [ -d "$REPO/cmd/kin" ]; then
  echo "run.sh: building kin and the mock model"
  go build -o "$TMP/bin/kin" ./cmd/kin
  go build -o "$TMP/bin/mockmodel" ./agent/modeltest/mockmodel

  "$TMP/bin/mockmodel" -rules "$HERE/rules.json" -addr 127.0.0.1:0 -port-file "$TMP/mock-url" \
    >"$TMP/mock.out" 2>"$TMP/mock.err" </dev/null &
  MOCK_PID=$!
  for _ in $(seq 1 200); do
    [ -s "$TMP/mock-url" ] && break
    if ! kill -0 "$MOCK_PID" 2>/dev/null; then
      echo "run.sh: the mock model exited:" >&2
      cat "$TMP/mock.err" >&2
      exit 1
    fi
    sleep 0.05
  done
  [ -s "$TMP/mock-url" ] || { echo "run.sh: the mock model did not start" >&2; exit 1; }

  export OPENAI_BASE_URL="$(cat "$TMP/mock-url")"
  export OPENAI_API_KEY=test
  export KIN_HOME="$TMP/kin-home"
  export KIN_BIN="$TMP/bin/kin"
  export PATH="$TMP/bin:$PATH"
  mkdir -p "$KIN_HOME"
else
  echo "run.sh: no cmd/kin in this tree yet; the integration spec is skipped" >&2
fi

cd "$PLUGIN"
set +e
"$NVIM" --headless -u NONE -l tests/run.lua "$@"
code=$?
set -e
if [ "$code" -ne 0 ] && [ -n "$MOCK_PID" ] && [ -s "$TMP/mock.err" ]; then
  echo "--- mock model log (last 40 lines)"
  tail -n 40 "$TMP/mock.err"
fi
exit "$code"
