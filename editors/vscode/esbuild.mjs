// Bundles the extension (node, commonjs, `vscode` external), the chat page (browser, with
// markdown-it inside) and, with --tests, the unit tests and the integration harness.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const args = new Set(process.argv.slice(2));
const watch = args.has('--watch');
const common = { bundle: true, sourcemap: true, logLevel: 'warning', target: 'es2022', minifySyntax: true, minifyWhitespace: true };

const builds = [];
if (args.has('--tests')) {
	const unit = fs.readdirSync('test/unit').filter((f) => f.endsWith('.test.ts')).map((f) => path.join('test/unit', f));
	fs.rmSync('out/unit', { recursive: true, force: true });
	builds.push({ ...common, entryPoints: unit, outdir: 'out/unit', platform: 'node', format: 'cjs', external: ['vscode', 'typescript'] });
} else {
	builds.push(
		{ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', external: ['vscode'] },
		{ ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife' },
		// The codicon font lands beside the css (dist/codicon-HASH.ttf), served from dist like the rest.
		{ ...common, entryPoints: ['src/webview/chat.css'], outfile: 'dist/webview.css', loader: { '.ttf': 'file' }, assetNames: '[name]-[hash]' },
		{ ...common, entryPoints: ['test/integration/harness/main.ts'], outfile: 'out/harness/main.js', platform: 'node', format: 'cjs', external: ['vscode'] },
	);
	// The harness loads as a second development extension; it needs a manifest beside its code.
	fs.mkdirSync('out/harness', { recursive: true });
	fs.copyFileSync('test/integration/harness/package.json', 'out/harness/package.json');
}

if (watch) {
	for (const b of builds) {
		const ctx = await esbuild.context(b);
		await ctx.watch();
	}
} else {
	await Promise.all(builds.map((b) => esbuild.build(b)));
}
