// `npm test` runs the integration test (test/run-integration.sh) only when asked to: with
// KIN_IT=1, or when KIN_BIN names a kin binary. It needs code-server, chromium and Node 24
// (.ci/install-vscode.sh) and Go, which a plain `npm test` should not require.
import { spawnSync } from 'node:child_process';

if (process.env.KIN_IT !== '1' && !process.env.KIN_BIN) {
	console.log('integration test skipped: set KIN_IT=1 (or KIN_BIN) to run test/run-integration.sh');
	process.exit(0);
}
const r = spawnSync('bash', ['test/run-integration.sh'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
