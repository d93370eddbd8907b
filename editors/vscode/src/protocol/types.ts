// Wire types of kin's protocol (rpc/PROTOCOL.md, protocol version "1"), one to one with the Go
// types in rpc/protocol_<section>.go. Only shapes live here: no behaviour, no VS Code. Fields kin
// may leave out are optional. test/unit/golden.test.ts decodes every frame recorded in
// rpc/testdata/golden against these types (no field missing, none unknown), so a field renamed on
// either side fails there.

export const PROTOCOL_VERSION = '1';

export const ErrorCodes = {
	ParseError: -32700,
	InvalidRequest: -32600,
	MethodNotFound: -32601,
	InvalidParams: -32602,
	NotInitialized: -32002,
	RequestCancelled: -32800,
	SessionNotFound: -32010,
	Busy: -32011,
	ModelNotConfigured: -32012,
	NotFound: -32013,
	ConfigError: -32014,
	/** turn/steer: the turn has ended. */
	TurnEnded: -32016,
	InternalError: -32603,
} as const;

/** The {} result (and params of requests that take none). */
export type Empty = Record<string, never>;

// ---- lifecycle ----

export interface InitializeParams {
	processId?: number;
	clientInfo?: { name: string; version?: string };
	capabilities?: { approvals?: boolean; elicitation?: { form: boolean; url: boolean }; textDocuments?: TextDocumentsClientCapabilities };
	workspaceFolders?: { uri: string; name?: string }[];
	rootUri?: string;
	rootPath?: string;
}

export interface ModelInfo {
	configured: boolean;
	model: string;
	baseUrl?: string;
	missing?: string;
}

export interface InitializeResult {
	protocolVersion: string;
	serverInfo: { name: string; version: string };
	capabilities: {
		sessions: boolean;
		mcp: boolean;
		approvals: boolean;
		elicitation: { form: boolean; url: boolean };
		textDocuments: { sync: boolean; applyEdit: boolean; positionEncoding: 'utf-16' };
	};
	model: ModelInfo;
	workspaceFolders: string[];
	/** How commands run: confined by a mechanism, or not and why (absent before kin had a sandbox). */
	sandbox?: SandboxInfo;
}

export interface SandboxInfo {
	mode: 'auto' | 'required' | 'off';
	mechanism?: 'bubblewrap' | 'seatbelt';
	confined: boolean;
	reason?: string;
	hint?: string;
	/** kin has not tried the sandbox yet: mechanism and confined are expected; a notice follows if the try fails. */
	probing?: boolean;
}

export interface CancelParams {
	id: number | string;
}

// ---- sessions ----

export interface SessionInfo {
	sessionId: string;
	title: string;
	createdAt: string;
	updatedAt: string;
	turns: number;
	/** The session's workspace folders (absent for a session recorded before kin kept them). */
	cwd?: string;
	additionalDirectories?: string[];
	/** How much kin does without asking (absent in session/list rows). */
	mode?: SessionMode;
	/** What made the session when no person at an editor did ("chat-oneshot", "chat-piped"). */
	origin?: string;
	/** A subagent's session: the session it worked for (PROTOCOL.md, Subagents). */
	parentId?: string;
	/** The session's git worktree (session/new's worktree; PROTOCOL.md, Worktrees). */
	worktree?: WorktreeInfo;
}

export type SessionMode = 'ask' | 'agent' | 'auto-edit';

export interface SessionNewParams {
	title?: string;
	/** The session's workspace folders (absolute directories); without them, the connection's. */
	cwd?: string;
	additionalDirectories?: string[];
	mode?: SessionMode;
	/** A models/list id (default: its default) and one of its efforts. */
	model?: string;
	effort?: string;
	/** Set by kin chat's one-shot and piped runs; editors leave it out. */
	origin?: string;
	/** A git worktree of cwd's repository on a new branch (kin/<short id> unless named). */
	worktree?: true | { branch?: string };
}

/** A project instructions file in force (AGENTS.md, CLAUDE.md, $KIN_HOME/AGENTS.md). */
export interface InstructionFile {
	path: string;
	bytes: number;
	/** Only its first 32 KiB are in force. */
	truncated?: boolean;
}

export interface SessionResult {
	session: SessionInfo;
	/** The session's model and effort, and the instructions in force (a first-release kin sends none). */
	model?: string;
	effort?: string;
	instructions?: InstructionFile[];
}

export interface SessionConfigureParams {
	sessionId: string;
	mode?: SessionMode;
	/** Between turns only: a models/list id, one of its efforts. */
	model?: string;
	effort?: string;
}

export interface SessionConfigureResult {
	sessionId: string;
	mode: SessionMode;
	model: string;
	effort?: string;
}

export interface SessionCompactResult {
	/** False when there was nothing to summarise. */
	compacted: boolean;
}

export interface ModelEntry {
	id: string;
	name: string;
	contextWindow: number;
	efforts: string[];
	api: 'responses' | 'chat';
	images: boolean;
	/** The environment variable kin reads the model's key from (a name, never the key). */
	apiKeyEnv: string;
	configured: boolean;
	missing?: string;
}

export interface ModelsListResult {
	models: ModelEntry[];
	default: string;
}

export interface SessionListResult {
	sessions: SessionInfo[];
	/** Set when more rows follow: session/list's cursor for the next page. */
	nextCursor?: string;
}

export interface SessionIdParams {
	sessionId: string;
}

export interface SessionResumeParams {
	sessionId: string;
	/** Items per page (kin's default 200), the newest first. */
	limit?: number;
	/** A cursor from an earlier page: the page just older than it. */
	before?: string;
}

/** History items; rolledBack marks an item of a turn a rollback took out of what the model sees. */
export type HistoryItem = (
	| { type: 'user'; turnId: string; text: string; parts?: InputPart[] }
	| { type: 'reasoning'; turnId: string; text: string }
	| { type: 'compaction'; turnId?: string; text: string; reason: 'auto' | 'overflow' | 'requested' }
	| { type: 'instructions'; turnId?: string; files: InstructionFile[]; changed: string[] }
	| { type: 'configure'; turnId?: string; model: string; effort?: string }
	| { type: 'assistant'; turnId: string; text: string; refusal?: boolean }
	| {
			type: 'toolCall';
			turnId: string;
			callId: string;
			name: string;
			kind?: ToolKind;
			title?: string;
			arguments?: string;
			status: ToolStatus;
			output?: string;
			content?: ToolContent[];
			/** What went to the model (PROTOCOL.md "What the model saw"). */
			modelSaw?: ModelSaw;
			/** An MCP result's resource links. */
			links?: ResourceLink[];
			subagent?: SubagentInfo;
	  }
	| {
			type: 'decision';
			turnId?: string;
			callId?: string;
			requestId?: string;
			/** The approval/request's kind. */
			approvalKind: ApprovalKind;
			decision: string;
			reason?: string;
			title?: string;
			/** What the request showed. */
			approved?: ApprovalDetails;
	  }
	| {
			type: 'elicitation';
			turnId?: string;
			callId?: string;
			requestId: string;
			/** The MCP server that asked; absent for kin's own question (source kin). */
			server?: string;
			source?: 'kin';
			mode: 'form' | 'url';
			/** The server's message. */
			title?: string;
			decision: ElicitationAction;
			reason?: string;
	  }
	| { type: 'turn'; turnId: string; status: TurnStatus; error?: string; usage?: Usage }
	| { type: 'plan'; turnId: string; callId: string; entries: PlanEntry[] }
	| { type: 'mode'; mode: SessionMode }
	| { type: 'undo'; undo: TurnUndoResult }
	| { type: 'steer'; turnId: string; text: string; parts?: InputPart[] }
	| { type: 'rollback'; rollback: TurnRollbackResult }
	| { type: 'fork'; fork: ForkRef }
) & { rolledBack?: boolean };

export interface ResumeResult {
	session: SessionInfo;
	history: HistoryItem[];
	/** The `before` of the next older page; absent at the session's start. */
	cursor?: string;
	/** approval/request or elicitation/request params still waiting (an elicitation has a mode). */
	pending: (ApprovalRequest | ElicitationRequest)[];
	/** The turn kin is running on this session now. */
	runningTurnId?: string;
	/** Turns cannot run here (another kin has the session open, or its log is read-only). */
	readOnly?: boolean;
	readOnlyReason?: string;
	/** As in SessionResult. */
	model?: string;
	effort?: string;
	instructions?: InstructionFile[];
	/** The session's review findings, oldest first (review/finding). */
	findings?: ReviewFinding[];
}

// ---- review ----

/** Exactly one of its fields. */
export interface ReviewTarget {
	uncommitted?: boolean;
	base?: string;
	commit?: string;
}

export interface ReviewStartParams {
	/** Absent: kin makes a new session in the workspace. */
	sessionId?: string;
	target: ReviewTarget;
}

export interface ReviewStartResult {
	sessionId: string;
	turnId: string;
	/** The repository's root. */
	root: string;
	/** The files the diff shows, relative to root. */
	files: string[];
	/** Changed files left out of the diff, each with why (secrets, binary, too large). */
	left?: string[];
	/** The diff was cut at kin's cap. */
	cut?: boolean;
}

/** review/finding's params. file is absolute; range covers whole lines (end: character 0 of the line after the last). */
export interface ReviewFinding {
	sessionId: string;
	turnId: string;
	file: string;
	range: Range;
	severity: 'error' | 'warning' | 'info';
	title: string;
	body?: string;
}

// ---- turns ----

export type TurnStatus = 'completed' | 'cancelled' | 'failed' | 'limit' | 'refused';

export interface Usage {
	inputTokens: number;
	outputTokens: number;
	/** How much of the model's window the latest response took, and the window. */
	contextTokens?: number;
	contextWindow?: number;
	/** Spend (PROTOCOL.md, Spend limits): cost and sessionCost come with a currency, when models have prices. */
	cachedInputTokens?: number;
	cost?: number;
	sessionCost?: number;
	currency?: string;
	sessionTokens?: number;
	estimated?: boolean;
	unpriced?: boolean;
}

export interface UsageSummaryParams {
	/** session or day; kin refuses any other (-32602). */
	scope: string;
	sessionId?: string;
}

export interface LimitUsed {
	name: string;
	limit: number;
	used: number;
}

export interface UsageSummaryResult {
	scope: 'session' | 'day';
	sessionId?: string;
	date?: string;
	inputTokens: number;
	cachedInputTokens: number;
	outputTokens: number;
	totalTokens: number;
	cost?: number;
	currency?: string;
	estimated?: boolean;
	unpriced?: boolean;
	limits: LimitUsed[];
}

/** LSP's: zero-based lines, UTF-16 characters, end exclusive. */
export interface PartRange {
	start: { line: number; character: number };
	end: { line: number; character: number };
}

/** One part of a question (in history and turn/started without its contents; bytes says how long they were). */
export interface InputPart {
	type: 'text' | 'file' | 'selection' | 'diagnostics' | 'resource' | 'image';
	text?: string;
	path?: string;
	range?: PartRange;
	uri?: string;
	/** A resource part's MCP server: kin reads `uri` from it. */
	server?: string;
	mimeType?: string;
	data?: string;
	items?: { range: PartRange; severity?: 'error' | 'warning' | 'information' | 'hint'; message: string; source?: string }[];
	bytes?: number;
}

export interface TurnStartParams {
	sessionId: string;
	/** The question, or its parts. */
	input: string | InputPart[];
}

export interface TurnStartResult {
	/** Absent when the input ran one of kin's own commands (no turn). */
	turnId?: string;
	command?: CommandResult;
}

/** What a turn/start whose input named a command did. */
export interface CommandResult {
	name: string;
	text: string;
	result?: unknown;
	/** The text an MCP prompt sent as the question. */
	inserted?: string;
}

export interface PlanEntry {
	content: string;
	status: 'pending' | 'in_progress' | 'completed';
	priority?: 'high' | 'medium' | 'low';
}

export interface TurnPlan {
	sessionId: string;
	turnId: string;
	entries: PlanEntry[];
}

export interface TurnUndoParams {
	sessionId: string;
	turnId?: string;
}

export interface TurnUndoResult {
	turnId: string;
	/** The first words of the turn's question (absent when the conversation no longer holds it). */
	question?: string;
	restored: string[];
	conflicts?: { path: string; reason: string; diff?: string }[];
	notUndoable?: { callId: string; name: string; title?: string; reason: string }[];
	/** The undo did not finish, and why: on the history item of an undo kin was stopped in (some files may not be put back; undoing the turn again puts back the rest). */
	error?: string;
}

export interface CommandsListParams {
	sessionId: string;
}

export interface CommandInfo {
	name: string;
	description: string;
	inputHint?: string;
	/** kin, or the MCP server whose prompt it is. */
	source: string;
	arguments?: { name: string; description?: string; required?: boolean }[];
}

export interface CommandsListResult {
	commands: CommandInfo[];
}

export interface TurnCancelResult {
	cancelled: boolean;
}

export interface TurnStarted extends Nesting {
	sessionId: string;
	turnId: string;
	input: string;
	parts?: InputPart[];
}

export interface TurnReasoning extends Nesting {
	sessionId: string;
	turnId: string;
	text: string;
}

export interface TurnUsage extends Usage, Nesting {
	sessionId: string;
	turnId: string;
}

export interface TurnDelta extends Nesting {
	sessionId: string;
	turnId: string;
	text: string;
	/** The text is the model's refusal to answer. */
	refusal?: boolean;
}

export type ToolStatus =
	| 'pending'
	| 'awaiting_approval'
	| 'running'
	/** Running, its work going on elsewhere (an MCP server's task); see statusMessage. */
	| 'working'
	| 'completed'
	| 'failed'
	| 'denied'
	| 'unknown'
	| 'output_limit';

export const FINAL_TOOL_STATUSES: readonly ToolStatus[] = ['completed', 'failed', 'denied', 'unknown', 'output_limit'];

export type ToolKind = 'read' | 'edit' | 'execute' | 'fetch' | 'other';

export interface FileDiff {
	path: string;
	oldText: string;
	newText: string;
	unified: string;
}

export type ToolContent =
	| { type: 'text'; text: string }
	| { type: 'diff'; diff: FileDiff }
	| { type: 'terminal'; text: string };

export interface ToolCallParams extends Nesting {
	sessionId?: string;
	turnId: string;
	callId: string;
	name: string;
	kind?: ToolKind;
	title?: string;
	arguments?: string;
	status: ToolStatus;
	/** With status `working`: where the call's task stands (the server's text). */
	statusMessage?: string;
	outputDelta?: string;
	output?: string;
	content?: ToolContent[];
	/** How a command runs, from the moment it is prepared. */
	sandbox?: SandboxUse;
	/** Why a denied call was not run, in kin's words (its final notification only). */
	reason?: string;
	/** A delegate call's subagent. */
	subagent?: SubagentInfo;
	/** What went to the model, on the final notification. */
	modelSaw?: ModelSaw;
	/** An MCP result's resource links, for the person to open. */
	links?: ResourceLink[];
}

export interface TurnCompleted extends Nesting {
	sessionId: string;
	turnId: string;
	status: TurnStatus;
	error?: string;
	usage?: Usage;
}

// ---- approvals ----

/** `continue`: the turn reached its tool-call limit (PROTOCOL.md, the approval kind `continue`). */
export type ApprovalKind = 'tool_call' | 'server_launch' | 'acknowledge_unknown' | 'continue' | 'limit' | 'project_trust' | 'mcp_skill';

export interface PermissionOption {
	/** allow_once, allow_always (this session), allow_always_permanent (every session), deny, trust. */
	optionId: string;
	name: string;
	kind: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';
}

/** What the person sees of a call before deciding (and what a decision item says was shown). */
export interface ApprovalDetails {
	title: string;
	command?: string;
	cwd?: string;
	diffs?: FileDiff[];
	server?: string;
	destination?: string;
	/** The tool's own name on its MCP server. */
	serverTool?: string;
	arguments?: string;
	warning?: string;
	/** What "always allow" would cover; key and fingerprint are opaque. */
	grant?: { key: string; fingerprint?: string; label: string };
	alwaysAsk?: boolean;
	/** How a command runs. */
	sandbox?: SandboxUse;
	/** A command's: the files open in the editor with unsaved changes, which the command (reading the disk) does not see. */
	unsavedFiles?: string[];
}

/** How a command runs: confined or not, with network or not, and (confined) what it may change. */
export interface SandboxUse {
	confined: boolean;
	network: boolean;
	writable?: string[];
}

export interface ApprovalRequest extends ApprovalDetails, Nesting {
	requestId: string;
	/** Sent again with the same requestId and the next revision when what it shows changed: it replaces the card. Absent: 0. */
	revision?: number;
	sessionId?: string;
	turnId?: string;
	callId?: string;
	kind: ApprovalKind;
	tool?: string;
	toolKind?: ToolKind;
	transport?: string;
	scope?: string;
	/** Server launches: the tools trusting the server lets run without asking (absent when kin has not seen them; `warning` says so in words). */
	readOnlyTools?: string[];
	/** project_trust and mcp_skill: what the person is asked to trust. */
	items?: TrustItem[];
	options: PermissionOption[];
}

/** One thing a project_trust or mcp_skill request asks about (PROTOCOL.md, Skills, hooks and trust). */
export interface TrustItem {
	kind: 'skill' | 'hook' | 'instructions' | 'mcp_skill';
	path: string;
	name?: string;
	digest: string;
	detail?: string;
	changed?: boolean;
}

export interface ApprovalRespondParams {
	requestId: string;
	/** One of the request's optionIds. */
	decision: string;
	/** The first release's spelling of allow_always_permanent; kin still reads it. Never sent here. */
	permanent?: boolean;
	/** The request's revision the decision was given to; an older one than kin shows is refused. */
	revision?: number;
}

export interface ApprovalResolved extends Nesting {
	requestId: string;
	sessionId?: string;
	decision: string;
	reason: 'person' | 'cancelled' | 'disconnected' | 'shutdown';
}

// ---- elicitation ----

export type ElicitationFieldType = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi_select';

export interface ElicitationField {
	name: string;
	title?: string;
	description?: string;
	type: ElicitationFieldType;
	required?: boolean;
	/** A string, number, boolean or (multi_select) a list of enum values. */
	default?: unknown;
	/** enum and multi_select: the values to send back. */
	enum?: string[];
	/** Their titles, index by index, when the server gave titles. */
	enumNames?: string[];
	format?: 'email' | 'uri' | 'date' | 'date-time';
	/** A regular expression the text must contain a match of (JSON Schema's pattern). */
	pattern?: string;
	minimum?: number;
	maximum?: number;
	minLength?: number;
	maxLength?: number;
	minItems?: number;
	maxItems?: number;
}

export interface ElicitationRequest extends Nesting {
	requestId: string;
	sessionId?: string;
	/** The MCP server that asks; absent for kin's own question (source kin, with its turn and call). */
	server?: string;
	source?: 'kin';
	turnId?: string;
	callId?: string;
	mode: 'form' | 'url';
	purpose?: 'oauth';
	message: string;
	fields?: ElicitationField[];
	url?: string;
}

export type ElicitationAction = 'accept' | 'decline' | 'cancel';

export interface ElicitationRespondParams {
	requestId: string;
	action: ElicitationAction;
	content?: Record<string, unknown>;
}

/** The data of the -32602 an answer that does not fit its form gets: every field that does not. */
export interface ElicitationAnswerError {
	fields: ElicitationFieldError[];
}

export interface ElicitationFieldError {
	/** The field (or a name that is not a field of the form). */
	name: string;
	/** Why, to follow the field's title: "must be at least 0". */
	message: string;
}

export interface ElicitationResolved extends Nesting {
	requestId: string;
	sessionId?: string;
	action: ElicitationAction;
	/** call_ended: the call that asked ended without it; server_gone: the server stopped or was lost. */
	reason: 'person' | 'cancelled' | 'disconnected' | 'shutdown' | 'call_ended' | 'server_gone';
}

// ---- service notifications ----

export type McpState =
	| 'disabled'
	| 'awaiting_trust'
	| 'denied'
	| 'connecting'
	| 'connected'
	| 'needs_login'
	| 'unavailable'
	| 'stopped';

export interface McpStatus {
	server: string;
	state: McpState;
	tools: number;
	error?: string;
}

export interface Notice extends Nesting {
	level: 'info' | 'warning' | 'error';
	message: string;
	source?: string;
	sessionId?: string;
}

export interface LogMessage {
	level: 'warning' | 'error';
	message: string;
}

// ---- MCP manager ----

export type McpScope = 'project' | 'global';

export interface McpServerRow {
	name: string;
	scope: McpScope | 'foreign';
	transport: 'stdio' | 'http' | '';
	enabled: boolean;
	state?: McpState;
	tools: number;
	lastError?: string;
	launch: string;
	/** Masked: ["NAME=●●●●"]. */
	env?: string[];
	/** Masked: ["Name: ●●●●"]. */
	headers?: string[];
	auth?: string;
	oauth?: { clientId?: string; redirectUri?: string; signedIn: boolean };
	trusted: boolean;
	file?: string;
	/** The server's own instructions (its text, redacted), as of its last connection. */
	instructions?: string;
	/** Names that text for mcp/acceptInstructions. */
	instructionsHash?: string;
	/** Changed since the person trusted the server: withheld from the model until accepted. */
	instructionsPending?: boolean;
}

/** mcp/acceptInstructions: hash is the instructionsHash the person was shown. */
export interface McpAcceptInstructionsParams {
	name: string;
	hash: string;
}

export interface McpAcceptInstructionsResult {
	accepted: boolean;
}

export interface McpListResult {
	servers: McpServerRow[];
	shadowed?: McpServerRow[];
	foreign: McpServerRow[];
	/** One line per skipped entry or unreadable file. */
	warnings: string[];
	notices: string[];
}

/** An entry of .kin/mcp.json as written (`${VAR}` spellings kept). */
export interface McpServerConfig {
	command?: string;
	args?: string[];
	env?: Record<string, string>;
	url?: string;
	headers?: Record<string, string>;
	[key: string]: unknown;
}

export interface McpAddParams {
	scope?: McpScope;
	name: string;
	config: McpServerConfig;
}

export interface McpRemoveParams {
	scope?: McpScope;
	name: string;
}

export interface McpSetEnabledParams {
	scope?: McpScope;
	name: string;
	enabled: boolean;
}

export interface McpAdoptParams {
	name: string;
}

export interface McpNameParams {
	name?: string;
}

export interface McpServersResult {
	servers: McpServerRow[];
}

export interface McpCheckResult {
	results: { name: string; ready: boolean; state: McpState; explanation: string }[];
}

export interface McpLoginResult {
	state: McpState;
}

// ---- grants ----

export interface Grant {
	id: string;
	type: 'bash' | 'bash-net' | 'bash-unconfined' | 'tool' | 'mcp' | 'trust';
	key: string;
	/** On an MCP grant: the tool definition it was given for (opaque). */
	fingerprint?: string;
	/** What the grant covers; scope says for how long. */
	label: string;
	scope: 'session' | 'permanent';
	sessionId?: string;
	created: string;
}

export interface GrantsListResult {
	grants: Grant[];
}

export interface GrantIdParams {
	id: string;
}

// ---- skills and the trust ledger ----

export interface SkillsListParams {
	sessionId?: string;
}

export interface SkillInfo {
	name: string;
	description: string;
	/** kin, agents, project:.agents/skills, project:.claude/skills or mcp:<server>. */
	source: string;
	path: string;
	trusted: boolean;
	allowedTools?: string[];
	shadows?: string[];
}

export interface SkillsListResult {
	skills: SkillInfo[];
}

export interface TrustEntry {
	id: string;
	kind: 'mcp_launch' | 'skill' | 'hook' | 'instructions' | 'mcp_skill';
	project?: string;
	path?: string;
	name?: string;
	digest: string;
	display?: string;
	trustedAt: string;
}

export interface TrustListResult {
	entries: TrustEntry[];
}

export interface TrustRevokeParams {
	id: string;
}

// ---- documents: the editor's buffers ----

export interface TextDocumentsClientCapabilities {
	sync: boolean;
	applyEdit: boolean;
}

export interface Position {
	line: number;
	/** UTF-16 code units, as in LSP. */
	character: number;
}

export interface Range {
	start: Position;
	end: Position;
}

export interface DidOpenTextDocumentParams {
	textDocument: { uri: string; languageId: string; version: number; text: string };
}

export interface DidChangeTextDocumentParams {
	textDocument: { uri: string; version: number };
	contentChanges: { range?: Range; rangeLength?: number; text: string }[];
}

export interface DidCloseTextDocumentParams {
	textDocument: { uri: string };
}

export interface ApplyWorkspaceEditParams {
	label?: string;
	edit: { documentChanges: { textDocument: { uri: string; version: number }; edits: { range: Range; newText: string }[] }[] };
	sessionId?: string;
	callId?: string;
}

export interface ApplyWorkspaceEditResult {
	applied: boolean;
	failureReason?: string;
	saved?: boolean;
}

export interface DidChangeFilesParams {
	changes: { uri: string; path: string; type: 'created' | 'changed' }[];
}

// ---- subagents (PROTOCOL.md, Subagents) ----

/** On a subagent's notifications and questions: the session, turn and delegate call it works for. */
export interface Nesting {
	parentSessionId?: string;
	parentTurnId?: string;
	parentCallId?: string;
}

/** A delegate call's subagent: its session (absent while it waits for a free slot), mode and model. */
export interface SubagentInfo {
	sessionId?: string;
	mode: SessionMode;
	model?: string;
	waiting?: boolean;
}

/** session/list's params: subagents' sessions are listed only when asked for. */
export interface SessionListParams {
	/** Leaves out the sessions that have an origin (one-shot and piped kin chat runs). */
	interactive?: boolean;
	/** Lists subagents' sessions too (left out by default). */
	includeSubagents?: boolean;
	/** Lists only the subagents' sessions of this session. */
	parentId?: string;
	/** At most this many rows (1 to 1000; kin's default 50). */
	limit?: number;
	/** A previous answer's nextCursor: the page after it. */
	cursor?: string;
	/** Only the sessions whose first folder this is (absolute). */
	cwd?: string;
}

// ---- Worktrees (PROTOCOL.md, Worktrees) ----

/** A session's git worktree, in its session object. */
export interface WorktreeInfo {
	/** The worktree ($KIN_HOME/worktrees/<sessionId>), the session's cwd. */
	path: string;
	/** The original checkout. */
	repo: string;
	branch: string;
	/** The commit the branch started at, on baseBranch. */
	base: string;
	baseBranch: string;
}

export interface WorktreeFile {
	path: string;
	status: 'added' | 'modified' | 'deleted' | 'typeChanged';
}

export interface WorktreeStatusResult extends WorktreeInfo {
	/** Changes since base, committed or not. */
	files: WorktreeFile[];
	ahead: number;
	behind: number;
	uncommitted: boolean;
	/** Changes the checkout was not given (worktree/apply) in this state. */
	unapplied: boolean;
}

export interface WorktreeApplyResult {
	files: WorktreeFile[];
	/** Applied paths that make something run later (.kin/, .github/workflows...). */
	runsLater?: string[];
}

export interface WorktreeRemoveParams {
	sessionId: string;
	force?: boolean;
}

export interface WorktreeRemoveResult {
	branch: string;
	/** Where the branch pointed (absent when it was already gone). */
	commit?: string;
}

/** The data of a -32020: what was refused, and the conflicting or unapplied paths or the sessions sharing it. */
export interface WorktreeErrorData {
	kind:
		| 'notRepository'
		| 'noCommits'
		| 'detachedHead'
		| 'dirtyIndex'
		| 'badBranch'
		| 'branchExists'
		| 'exists'
		| 'noWorktree'
		| 'missing'
		| 'conflict'
		| 'unapplied'
		| 'shared';
	paths?: string[];
	/** shared: the other sessions (forks) that work in the worktree. */
	sessions?: string[];
}

// What the model saw and resources for the person (PROTOCOL.md "What the model saw",
// "mcp/resources", "completion/complete", "mcp/resourceUpdated").

export interface ModelCut {
	what: string;
	why: string;
	bytes?: number;
	kept?: number;
}

export interface ModelSaw {
	/** Exactly the function output the model received. */
	text: string;
	framing?: string;
	server?: string;
	tool?: string;
	structuredContent?: unknown;
	structured?: 'appended' | 'sameAsText' | 'only';
	cuts?: ModelCut[];
}

export interface ResourceLink {
	server: string;
	uri: string;
	name?: string;
	title?: string;
	mimeType?: string;
}

export interface McpIcon {
	src: string;
	mimeType?: string;
	sizes?: string[];
	theme?: string;
}

export interface McpResource {
	uri?: string;
	uriTemplate?: string;
	name: string;
	title?: string;
	description?: string;
	mimeType?: string;
	size?: number;
	icons?: McpIcon[];
}

export interface McpResourcesParams {
	server?: string;
	cursor?: string;
}

export interface McpServerResources {
	server: string;
	resources: McpResource[];
	resourceTemplates?: McpResource[];
	nextCursor?: string;
	cut?: boolean;
	error?: string;
}

export interface McpResourcesResult {
	servers: McpServerResources[];
}

export interface CompletionCompleteParams {
	server: string;
	ref: { type: 'ref/resource'; uri: string };
	argument: { name: string; value: string };
	context?: { arguments?: Record<string, string> };
}

export interface CompletionCompleteResult {
	completion: { values: string[]; total?: number; hasMore?: boolean };
}

/** mcp/readResource: one resource of a connected server, as text for the person (a link's). */
export interface McpReadResourceParams {
	server: string;
	uri: string;
}

export interface McpReadResourceResult {
	server: string;
	uri: string;
	text: string;
	/** What the text does not hold in full (binary content summarised, a long text cut, secrets replaced). */
	cuts?: ModelCut[];
}

export interface McpResourceUpdated {
	server: string;
	uri: string;
}

// ---- Branching (PROTOCOL.md): turn/steer, turn/steered, turn/rollback, session/fork ----

export interface TurnSteerParams {
	sessionId: string;
	turnId: string;
	input: string | InputPart[];
}

export interface TurnSteerResult {
	queued: boolean;
}

/** The person's words joined the running turn here. */
export interface TurnSteered {
	sessionId: string;
	turnId: string;
	input: string;
	parts?: InputPart[];
}

export interface TurnRollbackParams {
	sessionId: string;
	turns: number;
}

export interface RollbackError {
	turnId: string;
	error: string;
}

/** The turns taken back (newest first) and what undoing their file changes did. */
export interface TurnRollbackResult {
	turns: string[];
	undos: TurnUndoResult[];
	errors?: RollbackError[];
}

export interface SessionForkParams {
	sessionId: string;
	turnId?: string;
}

export interface ForkRef {
	sessionId: string;
	turnId?: string;
}

export interface SessionForkResult extends SessionResult {
	forkedFrom: ForkRef;
}
