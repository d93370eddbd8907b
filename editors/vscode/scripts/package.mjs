// `npm run package`: a platform-specific .vsix with the kin binary inside, so a person needs no
// kin.path. Builds the extension, builds kin with Go for the target (this machine's platform, or
// KIN_TARGET such as linux-arm64, darwin-arm64, win32-x64), puts it in bin/, and runs
// `vsce package --target`. Prints the .vsix path on its last line.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const here = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const repo = path.resolve(here, '..', '..');
const target = process.env.KIN_TARGET || `${process.platform}-${process.arch}`;
const GO = {
	'linux-x64': ['linux', 'amd64'],
	'linux-arm64': ['linux', 'arm64'],
	'darwin-x64': ['darwin', 'amd64'],
	'darwin-arm64': ['darwin', 'arm64'],
	'win32-x64': ['windows', 'amd64'],
	'win32-arm64': ['windows', 'arm64'],
}[target];
if (!GO) {
	console.error(`package: no kin build for the target ${target}; set KIN_TARGET to one of linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64`);
	process.exit(2);
}
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });

run(process.execPath, ['esbuild.mjs'], { cwd: here });
const bin = path.join(here, 'bin');
fs.rmSync(bin, { recursive: true, force: true });
fs.mkdirSync(bin);
const exe = path.join(bin, GO[0] === 'windows' ? 'kin.exe' : 'kin');
// KIN_BIN (a kin already built for this target) skips the Go build.
if (process.env.KIN_BIN && !process.env.KIN_TARGET) {
	fs.copyFileSync(process.env.KIN_BIN, exe);
	fs.chmodSync(exe, 0o755);
} else {
	run('go', ['build', '-trimpath', '-o', exe, './cmd/kin'], { cwd: repo, env: { ...process.env, GOOS: GO[0], GOARCH: GO[1], CGO_ENABLED: '0' } });
}
const out = path.join(here, 'dist', `kin-${target}.vsix`);
run(path.join(here, 'node_modules', '.bin', 'vsce'), ['package', '--no-dependencies', '--skip-license', '--allow-missing-repository', '--target', target, '-o', out], {
	cwd: here,
});
console.log(out);
