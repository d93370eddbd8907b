#!/usr/bin/env bash
# Installs what the tests need (idempotent) and runs every suite: Go (with
# the race detector), the Neovim plugin in a real Neovim, and the VS Code
# extension in a real VS Code. Exits non-zero if any suite fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
export KIN_CI_CACHE="${KIN_CI_CACHE:-/opt/kin-ci}"
mkdir -p "$KIN_CI_CACHE"

step() { printf '\n==> %s\n' "$*"; }

step "Go modules"
go mod download

step "bubblewrap for the command sandbox, tmux for kin chat's terminal test, git for the hostile-repository suite, jq for hooks written as Claude Code's are (Debian packages)"
if ! command -v bwrap >/dev/null || ! command -v tmux >/dev/null || ! command -v git >/dev/null || ! command -v jq >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends bubblewrap tmux git jq >/dev/null
fi
bwrap --version
tmux -V
git --version
# The sandbox tests fail, rather than skip, when commands cannot be confined;
# kin chat's tmux test fails rather than skips without tmux.
export KIN_REQUIRE_BWRAP=1 KIN_REQUIRE_TMUX=1

step "MCP servers from npm (pinned in .ci/npm/package-lock.json)"
(cd .ci/npm && npm ci --no-audit --no-fund)
export KIN_TEST_NPM_DIR="$root/.ci/npm" KIN_REQUIRE_NPM=1

step "ACP client SDK and schema from npm (pinned in editors/acp/test/package-lock.json)"
(cd editors/acp/test && npm ci --no-audit --no-fund)
# rpc/acp's golden frames are validated against the schema the SDK ships.
export KIN_TEST_ACP_SCHEMA="$root/editors/acp/test/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json" KIN_REQUIRE_ACP_SCHEMA=1

step "go vet"
go vet ./...

step "Every release target compiles (linux, darwin, windows; amd64, arm64; tests run on linux only)"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  echo "$target"
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build ./...
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build -o /dev/null ./cmd/kin
done

step "Go tests (race detector on)"
go test -race -count=1 ./... 2>&1 | tee "$KIN_CI_CACHE/go-test.log"
echo "Go suites passed."

step "Benchmarks, report only: kin against the floor program and the previous release (never fails on timing)"
# Ratios with medians and spreads; a noisy machine makes absolute numbers
# meaningless, so this step fails only when something cannot be built.
timeout 300 go run ./cmd/kinbench -rounds 7 -sessions 10000 -turns 50 || echo "kinbench did not finish (report only)"

step "ACP: the official SDK's client drives the built kin acp against the mock model"
mkdir -p "$KIN_CI_CACHE/acp-bin"
go build -o "$KIN_CI_CACHE/acp-bin/kin" ./cmd/kin
go build -o "$KIN_CI_CACHE/acp-bin/mockmodel" ./agent/modeltest/mockmodel
(cd editors/acp/test && KIN_BIN="$KIN_CI_CACHE/acp-bin/kin" KIN_MOCKMODEL_BIN="$KIN_CI_CACHE/acp-bin/mockmodel" npm test)

step "MCP conformance suite, client side (core scenarios; Node 22 from npm)"
bash mcp/conformance/run.sh

step "MCP conformance suite, client side (auth scenarios)"
bash mcp/oauth/conformance-client/run.sh

step "Neovim plugin in a real Neovim 0.10 (Debian trixie's build, private folder)"
export KIN_NVIM_DIR="${KIN_NVIM_DIR:-$KIN_CI_CACHE/nvim}"
bash .ci/install-nvim.sh
KIN_TEST_NVIM="$KIN_NVIM_DIR/bin/nvim" bash editors/nvim/tests/run.sh

step "ACP: the real CodeCompanion.nvim (vendored) drives the built kin acp in headless Neovim >= 0.11 (Debian sid's build, private folder)"
export KIN_NVIM12_DIR="${KIN_NVIM12_DIR:-$KIN_CI_CACHE/nvim12}"
bash .ci/install-nvim12.sh
KIN_TEST_NVIM12="$KIN_NVIM12_DIR/bin/nvim" KIN_BIN="$KIN_CI_CACHE/acp-bin/kin" KIN_MOCKMODEL_BIN="$KIN_CI_CACHE/acp-bin/mockmodel" \
  bash editors/nvim/tests/acp_codecompanion/run.sh

step "ACP: the real agent-shell (vendored, with acp.el and shell-maker) drives the built kin acp in Emacs >= 29.1 (Emacs 30 from Debian bookworm-backports)"
bash .ci/install-emacs.sh
KIN_TEST_EMACS=emacs KIN_BIN="$KIN_CI_CACHE/acp-bin/kin" KIN_MOCKMODEL_BIN="$KIN_CI_CACHE/acp-bin/mockmodel" \
  bash editors/acp/test/emacs/run.sh

step "VS Code extension: type check, unit tests, and integration in a real VS Code (code-server + chromium)"
bash .ci/install-vscode.sh
(cd editors/vscode && npm ci --no-audit --no-fund && npm run build && KIN_IT=1 npm test)
