// The session picker's rows: session/list, page by page. No vscode import, so unit-tested against
// the fake kin. The picker is the person's: it asks for `interactive` rows only, which leaves out
// the sessions one-shot and piped `kin chat` runs made (they have an `origin`; PROTOCOL.md
// session/list). Such a session still opens by id (session/resume takes any).

import type { Requester } from '../protocol/connection';
import type { SessionListParams, SessionListResult } from '../protocol/types';

/** Rows per session/list page. */
export const SESSION_PAGE = 50;

/**
 * The params of the picker's session/list: its own sessions (interactive), and subagents' too,
 * which the picker shows each under its parent, to open read-only. `cursor` asks for the page
 * after the one that handed it out.
 */
export function sessionListParams(cursor?: string): SessionListParams {
	return { limit: SESSION_PAGE, interactive: true, includeSubagents: true, ...(cursor ? { cursor } : {}) };
}

/** One page of the picker's sessions. */
export function listSessions(rpc: Requester, cursor?: string): Promise<SessionListResult> {
	return rpc.request<SessionListResult>('session/list', sessionListParams(cursor));
}
