// What the status bar item says for a state of the service. Pure, so unit-tested.

export interface StatusInputs {
	service: string;
	busy: boolean;
	/** Approvals waiting for the person. */
	waiting: number;
	/** Forms and links (an MCP server's or kin's questions) waiting for the person. */
	asking?: number;
	modelMissing?: string;
	/** Why commands run unconfined (or not at all), when they do. */
	unconfined?: string;
}

/** What the item says for a state; pure, so unit-tested. */
export function describe(s: StatusInputs): { text: string; tooltip: string; warn: boolean; error: boolean } {
	if (s.service === 'failed') {
		return { text: '$(error) kin: stopped', tooltip: 'kin: the service stopped. Run "kin: Restart Service".', warn: false, error: true };
	}
	if (s.service === 'starting') {
		return { text: '$(loading~spin) kin: starting', tooltip: 'kin: starting the service', warn: false, error: false };
	}
	if (s.service !== 'ready') {
		return { text: '$(circle-slash) kin', tooltip: 'kin: not running', warn: false, error: false };
	}
	// A turn that waits for the person is waiting, not busy.
	if (s.waiting > 0) {
		const more = s.waiting + (s.asking ?? 0);
		return {
			text: `$(bell-dot) kin: waiting for approval${more > 1 ? ` (${more})` : ''}`,
			tooltip: 'kin: an approval waits for you',
			warn: true,
			error: false,
		};
	}
	if ((s.asking ?? 0) > 0) {
		return {
			text: `$(bell-dot) kin: waiting for your answer${s.asking! > 1 ? ` (${s.asking})` : ''}`,
			tooltip: 'kin: a question (a form or a link) waits for your answer',
			warn: true,
			error: false,
		};
	}
	if (s.modelMissing) {
		return { text: '$(warning) kin: no model', tooltip: `kin: ${s.modelMissing}`, warn: true, error: false };
	}
	const unconfined = s.unconfined ? `; ${s.unconfined}` : '';
	if (s.busy) {
		return { text: '$(sync~spin) kin: busy', tooltip: `kin: a turn is running${unconfined}`, warn: false, error: false };
	}
	if (s.unconfined) {
		return { text: '$(unlock) kin: connected, unconfined', tooltip: `kin: connected${unconfined}`, warn: true, error: false };
	}
	return { text: '$(comment-discussion) kin: connected', tooltip: 'kin: connected', warn: false, error: false };
}
