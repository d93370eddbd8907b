// An approval kin sends again (same requestId, the next revision: the person typed into the file
// its diff changes) is answered for the revision the card showed. The extension answered without
// any revision, which kin reads as revision 0 and refuses once the card is at 1 (-32602, "the
// question changed since it was shown"): every Allow and Deny on a revised card failed and the
// turn waited for ever.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { approvalCard, respondParams } from '../../src/approvalText';
import type { ApprovalRequest } from '../../src/protocol/types';
import { renderCard } from '../../src/webview/render';

const request = (revision?: number): ApprovalRequest => ({
	requestId: 'ap_4',
	...(revision !== undefined ? { revision } : {}),
	sessionId: 's_1',
	turnId: 't_2',
	callId: 'call_8',
	kind: 'tool_call',
	tool: 'edit_file',
	toolKind: 'edit',
	title: 'Edit main.go',
	diffs: [{ path: '/w/main.go', oldText: 'a\n', newText: 'b\n', unified: '--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-a\n+b\n' }],
	options: [
		{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
		{ optionId: 'deny', name: 'Deny', kind: 'reject_once' },
	],
});

test('a revised card carries its revision into the page, and the answer names it', () => {
	const card = approvalCard(request(1));
	assert.equal(card.revision, 1);
	assert.match(renderCard(card), /data-revision="1"/);
	// The page names the revision of the card the person answered.
	assert.deepEqual(respondParams(request(1), 'allow_once', 1), { requestId: 'ap_4', decision: 'allow_once', revision: 1 });
	assert.deepEqual(respondParams(request(2), 'deny', 2), { requestId: 'ap_4', decision: 'deny', revision: 2 });
});

test('an answer given to an older card names that older revision (kin refuses it; the newer card stays)', () => {
	assert.deepEqual(respondParams(request(2), 'allow_once', 1), { requestId: 'ap_4', decision: 'allow_once', revision: 1 });
});

test('a request that had no revision is answered without one; an option kin did not offer is a deny', () => {
	assert.deepEqual(respondParams(request(), 'allow_once', 0), { requestId: 'ap_4', decision: 'allow_once' });
	assert.deepEqual(respondParams(request(), 'allow_once', undefined), { requestId: 'ap_4', decision: 'allow_once' });
	assert.deepEqual(respondParams(request(1), 'allow_always_permanent', 1), { requestId: 'ap_4', decision: 'deny', revision: 1 });
	assert.match(renderCard(approvalCard(request())), /data-revision="0"/);
});
