// The model services' keys, kept in VS Code's secret storage and given to `kin serve` in its
// environment, each under the name kin reads it from (models/list's apiKeyEnv: OPENAI_API_KEY,
// or a model's own apiKeyEnv). A key is never written to settings.json, the output channel, a
// trace or a notification: only its variable's name is. Which names have a stored key is kept in
// globalState (names are not secrets; SecretStorage cannot list its entries).
//
// The pure parts (which keys the models need, what to tell a person) have no vscode import, so
// they are unit-tested; KeyStore is the storage.

import type * as vscode from 'vscode';
import type { ModelEntry } from './protocol/types';

/** The variable kin reads the default model's key from when nothing else is known. */
export const DEFAULT_KEY_NAME = 'OPENAI_API_KEY';
/** Where the OPENAI_API_KEY was stored before keys had names (kept, so nobody sets it again). */
export const LEGACY_SECRET = 'kin.openaiApiKey';
const NAMES_STATE = 'kin.apiKeyNames';

/** A name that holds a secret: kin.env never passes one (settings are synced and shared). */
export const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD)$/i;

/** A key a person can set: its variable and the models that read it. */
export interface KeyChoice {
	name: string;
	models: string[];
	/** Whether every model that reads it can run (kin found the key). */
	configured: boolean;
}

/**
 * The keys the models read, one per variable, the default model's first (the one Set API Key
 * offers first), then in the models' order; OPENAI_API_KEY when kin listed no models yet, and
 * any `extra` names (kin.env's dropped keys) after them.
 */
export function keyChoices(models: Pick<ModelEntry, 'id' | 'name' | 'apiKeyEnv' | 'configured'>[], defaultId: string | undefined, extra: string[] = []): KeyChoice[] {
	const byName = new Map<string, KeyChoice>();
	const ordered = [...models].sort((a, b) => Number(b.id === defaultId) - Number(a.id === defaultId));
	for (const m of ordered) {
		const name = m.apiKeyEnv || DEFAULT_KEY_NAME;
		const c = byName.get(name) ?? { name, models: [], configured: true };
		c.models.push(m.name || m.id);
		c.configured &&= m.configured;
		byName.set(name, c);
	}
	if (byName.size === 0) {
		byName.set(DEFAULT_KEY_NAME, { name: DEFAULT_KEY_NAME, models: [], configured: false });
	}
	for (const n of extra) {
		if (!byName.has(n)) {
			byName.set(n, { name: n, models: [], configured: false });
		}
	}
	return [...byName.values()];
}

/** How VS Code sets a model's key, to put after kin's own "set X (…)". */
export function setKeyHint(name: string | undefined): string {
	return `In VS Code: run "kin: Set API Key"${name ? ` and pick ${name}` : ''} (kept in VS Code's secret storage, never in settings.json).`;
}

/**
 * The first-run message when the default model cannot run: what kin says is missing, and where a
 * newcomer sets it in VS Code (the key with Set API Key, the service's address and model in the
 * kin.env setting), not only the environment and $KIN_HOME/settings.json.
 */
export function notConfiguredText(missing: string | undefined): string {
	return (
		`kin: the model service is not configured${missing ? ` (kin says: ${missing})` : ''}. ` +
		`In VS Code: store the key with "kin: Set API Key", and name another service or model in the kin.env setting ` +
		`of your User settings (OPENAI_BASE_URL, KIN_MODEL), then kin restarts with them.`
	);
}

/** What the log and a warning say about keys put into kin.env (their names only). */
export function droppedKeysText(names: string[]): string {
	const one = names.length === 1;
	return (
		`kin: kin.env's ${names.join(', ')} ${one ? 'is' : 'are'} not passed to kin: keys do not belong in settings.json ` +
		`(synced, readable by other extensions). Store ${one ? 'it' : 'them'} with "kin: Set API Key" (VS Code's secret storage).`
	);
}

/** The secret storage entry of a variable's key. */
function secretId(name: string): string {
	return name === DEFAULT_KEY_NAME ? LEGACY_SECRET : `kin.apiKey.${name}`;
}

/** The keys a person stored, by variable name. */
export class KeyStore {
	constructor(
		private readonly secrets: vscode.SecretStorage,
		private readonly state: vscode.Memento,
	) {}

	/** The names that have a stored key. */
	names(): string[] {
		const names = this.state.get<string[]>(NAMES_STATE) ?? [];
		return names.includes(DEFAULT_KEY_NAME) ? names : [DEFAULT_KEY_NAME, ...names];
	}

	/** Stores a variable's key; an empty key removes it. */
	async set(name: string, key: string): Promise<void> {
		if (key === '') {
			await this.secrets.delete(secretId(name));
			await this.state.update(NAMES_STATE, this.names().filter((n) => n !== name && n !== DEFAULT_KEY_NAME));
			return;
		}
		await this.secrets.store(secretId(name), key);
		const names = this.names().filter((n) => n !== DEFAULT_KEY_NAME);
		if (name !== DEFAULT_KEY_NAME && !names.includes(name)) {
			names.push(name);
		}
		await this.state.update(NAMES_STATE, names);
	}

	async has(name: string): Promise<boolean> {
		return !!(await this.secrets.get(secretId(name)));
	}

	/**
	 * The stored keys for kin's environment, by name, except those already in `env` (a key in the
	 * environment VS Code was started with wins, as kin's README says).
	 */
	async environment(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
		const out: Record<string, string> = {};
		for (const name of this.names()) {
			if (env[name]) {
				continue;
			}
			const key = await this.secrets.get(secretId(name));
			if (key) {
				out[name] = key;
			}
		}
		return out;
	}
}
