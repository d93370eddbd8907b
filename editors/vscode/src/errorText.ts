// One way to word an error for a toast: kin's own messages already start with "kin: ", so the
// prefix is added only when it is missing (never "kin: kin: …").

export function errorText(err: unknown): string {
	const m = (err instanceof Error ? err.message : String(err)).trim();
	return /^kin: /.test(m) ? m : `kin: ${m}`;
}
