# Sourced by the tests in which a real third-party ACP client drives the built `kin acp`
# (editors/nvim/tests/acp_codecompanion/run.sh, editors/acp/test/emacs/run.sh): what they share.
# Needs REPO (the repository).

. "$REPO/agent/modeltest/mockmodel/start.sh"
MOCK_PID=""

# acp_client_tmp NAME makes the test's temporary folder (printed), removed by acp_client_cleanup.
acp_client_tmp() {
  mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX"
}

# acp_client_cleanup (the EXIT trap) stops the mock model and removes TMP.
acp_client_cleanup() {
  stop_mockmodel
  if [ -n "${TMP:-}" ]; then rm -rf "$TMP"; fi
}

# acp_client_setup LABEL RULES TMP builds kin and the mock model into TMP/bin unless KIN_BIN and
# KIN_MOCKMODEL_BIN name prebuilt ones, starts the mock model with RULES, and gives the client (and
# the kin acp it starts, which inherits its environment) a private world: KIN_HOME, HOME and the XDG
# folders under TMP, so that neither kin nor the client reads the machine's own settings; the built
# kin first on PATH, since the client runs the command `kin acp` as a person's does. It ends in the
# empty workspace TMP/ws.
acp_client_setup() {
  local label=$1 rules=$2 tmp=$3 kin=${KIN_BIN:-} mock=${KIN_MOCKMODEL_BIN:-}
  cd "$REPO"
  if [ -z "$kin" ] || [ -z "$mock" ]; then
    echo "$label: building kin and the mock model"
    go build -o "$tmp/bin/kin" ./cmd/kin
    go build -o "$tmp/bin/mockmodel" ./agent/modeltest/mockmodel
    kin="$tmp/bin/kin" mock="$tmp/bin/mockmodel"
  fi
  start_mockmodel "$label" "$mock" "$rules" "$tmp"
  export OPENAI_API_KEY=test KIN_MODEL=mock-1
  kin="$(cd "$(dirname "$kin")" && pwd)/$(basename "$kin")"
  export KIN_BIN="$kin" KIN_HOME="$tmp/kin-home" HOME="$tmp/home"
  export PATH="$(dirname "$kin"):$PATH"
  export XDG_CONFIG_HOME="$tmp/xdg/config" XDG_DATA_HOME="$tmp/xdg/data" XDG_STATE_HOME="$tmp/xdg/state" XDG_CACHE_HOME="$tmp/xdg/cache"
  mkdir -p "$KIN_HOME" "$HOME" "$tmp/ws"
  cd "$tmp/ws"
}
