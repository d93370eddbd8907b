// What an approval dialog says and which buttons it has, from an approval/request. Pure, so
// unit-tested; approvals.ts shows it.

import type { ApprovalRequest, PermissionOption } from './protocol/types';

export const REVIEW_DIFF = 'Review diff';

export interface DialogButton {
	title: string;
	optionId?: string;
	close?: boolean;
}

/**
 * The dialog's buttons: kin's options, each with the name kin gave it (an "always allow" for this
 * session and one for every session are two options kin sends; nothing is added or renamed here).
 * VS Code makes the first button the primary one, which Enter presses, and kin's first option must
 * never be the default (PROTOCOL.md: Enter, Escape or a closed dialog send deny). So the deny
 * option comes first, then the allowing options in kin's order, then "Review diff" for file
 * changes; the close affordance (Escape, closing the dialog) denies too.
 */
export function buttonsFor(p: ApprovalRequest): DialogButton[] {
	const allow: DialogButton[] = [];
	let deny: PermissionOption | undefined;
	for (const o of p.options ?? []) {
		if (deny === undefined && (o.kind === 'reject_once' || o.kind === 'reject_always' || o.optionId === 'deny')) {
			deny = o;
			continue;
		}
		allow.push({ title: o.name, optionId: o.optionId });
	}
	const denyId = deny?.optionId ?? 'deny';
	const out: DialogButton[] = [{ title: deny?.name ?? 'Deny', optionId: denyId }, ...allow];
	if (p.diffs?.length) {
		out.push({ title: REVIEW_DIFF });
	}
	out.push({ title: 'Cancel', optionId: denyId, close: true });
	return out;
}

export function dialogMessage(p: ApprovalRequest): string {
	switch (p.kind) {
		case 'server_launch':
			return `kin: start MCP server ${p.server ?? ''}?`;
		case 'acknowledge_unknown':
			return `kin: ${p.title}`;
		default:
			return `kin wants to: ${p.title}`;
	}
}

/** The facts a person decides on, one per line. */
export function dialogDetail(p: ApprovalRequest): string {
	const lines: string[] = [];
	const add = (label: string, v: string | undefined) => {
		if (v !== undefined && v !== '') {
			lines.push(`${label}: ${v}`);
		}
	};
	if (p.kind === 'server_launch') {
		add('Server', p.server);
		add('Transport', p.transport);
		add('Destination', p.destination);
		add('Scope', p.scope);
		add('Environment', p.arguments);
	} else if (p.kind === 'acknowledge_unknown') {
		add('Call', p.tool);
		add('Call id', p.callId);
	} else {
		add('Server', p.server);
		add('Destination', p.destination);
		add('Tool', p.tool);
		if (p.command !== undefined) {
			add('Command', p.command);
			add('Cwd', p.cwd);
		} else if (p.diffs?.length) {
			lines.push(`Files: ${p.diffs.map((d) => d.path).join(', ')}`);
		}
		if (p.arguments) {
			lines.push(`Arguments:\n${p.arguments}`);
		}
		if (p.alwaysAsk) {
			lines.push('This change is always asked for (outside the workspace or a sensitive path).');
		}
	}
	if (p.warning) {
		lines.push('', p.warning);
	}
	return lines.join('\n');
}
