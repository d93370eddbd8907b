// Spend limits in VS Code: the session's cost beside the context gauge (turn/usage's sessionCost
// and currency), and the heading of a limit approval (its three choices are kin's options, shown
// as buttons like any approval's).

import type { UsageSummaryResult } from './protocol/types';

/** What a gauge knows of spend: the session's cost in its currency, and whether it is an estimate. */
export interface SpendUsage {
	sessionCost?: number;
	currency?: string;
	estimated?: boolean;
}

/** A cost as a person reads it: "0.42 USD" (four decimals under a cent); '' without a currency. */
export function formatCost(v: number | undefined, currency: string | undefined): string {
	if (typeof v !== 'number' || !currency) {
		return '';
	}
	const digits = v !== 0 && Math.abs(v) < 0.01 ? 4 : 2;
	return `${v.toFixed(digits)} ${currency}`;
}

/** The session's cost for the gauge ('' when no model has a price). */
export function sessionCostText(u: SpendUsage | undefined): string {
	const c = formatCost(u?.sessionCost, u?.currency);
	return c ? `session ${c}${u?.estimated ? ' (est.)' : ''}` : '';
}

/** The heading of a limit approval. */
export const LIMIT_HEADING = 'kin reached a spend limit';

/** A usage/summary answer as lines a person reads: tokens, cost, then each limit and its share used. */
export function usageLines(r: UsageSummaryResult): string[] {
	const head = r.scope === 'day' ? `Today${r.date ? ` (${r.date})` : ''}, every kin on this computer` : 'This session';
	const cost = formatCost(r.cost, r.currency);
	const lines = [
		`${head}: ${r.totalTokens.toLocaleString('en-US')} tokens (${r.inputTokens.toLocaleString('en-US')} in, ${r.cachedInputTokens.toLocaleString('en-US')} of them cached, ${r.outputTokens.toLocaleString('en-US')} out)${cost ? `, ${cost}` : ''}${r.estimated ? ' (partly estimated: a service reported no usage)' : ''}`,
	];
	if (r.unpriced) {
		lines.push('Some models have no prices in settings.json: their cost is not counted.');
	}
	for (const l of r.limits ?? []) {
		const pct = l.limit > 0 ? Math.round((100 * l.used) / l.limit) : 0;
		lines.push(`${l.name}: ${l.used.toLocaleString('en-US')} of ${l.limit.toLocaleString('en-US')} (${pct}%)`);
	}
	return lines;
}
