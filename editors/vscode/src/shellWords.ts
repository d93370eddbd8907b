// Words of a command line and names of masked values, for the MCP server forms. Pure.

/**
 * Splits a command line the way a person types it into words: spaces separate, single and double
 * quotes group, a backslash escapes the next character. No expansion of any kind.
 */
export function splitArgs(line: string): string[] {
	const out: string[] = [];
	let cur = '';
	let has = false;
	let quote: '"' | "'" | undefined;
	for (let i = 0; i < line.length; i++) {
		const c = line[i];
		if (quote) {
			if (c === quote) {
				quote = undefined;
			} else if (c === '\\' && quote === '"' && i + 1 < line.length) {
				cur += line[++i];
			} else {
				cur += c;
			}
			continue;
		}
		if (c === '"' || c === "'") {
			quote = c;
			has = true;
		} else if (c === '\\' && i + 1 < line.length) {
			cur += line[++i];
			has = true;
		} else if (/\s/.test(c)) {
			if (has) {
				out.push(cur);
				cur = '';
				has = false;
			}
		} else {
			cur += c;
			has = true;
		}
	}
	if (has) {
		out.push(cur);
	}
	return out;
}

/** The names in a masked env/headers value, in either shape kin sends. */
export function maskedNames(v: Record<string, string> | string[] | undefined): string[] {
	if (!v) {
		return [];
	}
	if (Array.isArray(v)) {
		return v.map((x) => String(x).split(/[=:]/, 1)[0].trim()).filter(Boolean);
	}
	return Object.keys(v);
}

