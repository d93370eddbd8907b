// Which kin to start and how: `kin.path`, `kin.args` and `kin.env`, read where a person sets them.
//
// They are `window`-scoped settings read from User (and Remote) settings only. Not `machine`
// scope: in a remote window (code-server, SSH, containers) VS Code reads a machine-scoped setting
// from the Remote tab alone and silently drops the User value, so the first question went to a
// service the person never chose. Not workspace settings either: a cloned repository must never
// choose which program the extension starts, or with which environment.

import type * as vscode from 'vscode';

export interface LaunchSettings {
	/** kin.path, or '' for the bundled kin (else `kin` on PATH). */
	path: string;
	args: string[];
	env: Record<string, string>;
	/** Workspace values that were ignored, as `kin.path` etc., to say so in the log. */
	ignored: string[];
}

/** The setting as User/Remote settings give it (the default otherwise); workspace values are not read. */
export function userValue<T>(cfg: Pick<vscode.WorkspaceConfiguration, 'inspect'>, key: string): T | undefined {
	const i = cfg.inspect<T>(key);
	return i?.globalValue ?? i?.defaultValue;
}

export function readLaunchSettings(cfg: Pick<vscode.WorkspaceConfiguration, 'inspect'>): LaunchSettings {
	const ignored: string[] = [];
	for (const key of ['path', 'args', 'env']) {
		const i = cfg.inspect(key);
		if (i && (i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined)) {
			ignored.push(`kin.${key}`);
		}
	}
	const path = userValue<string>(cfg, 'path');
	const args = userValue<unknown>(cfg, 'args');
	const env = userValue<unknown>(cfg, 'env');
	return {
		path: typeof path === 'string' ? path.trim() : '',
		args: Array.isArray(args) ? args.map(String) : [],
		env: env && typeof env === 'object' && !Array.isArray(env) ? Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])) : {},
		ignored,
	};
}
