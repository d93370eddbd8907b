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
	configured: boolean;
	missing?: string;
}

export interface ModelsListResult {
	models: ModelEntry[];
	default: string;
}

export interface SessionListResult {
	sessions: SessionInfo[];
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

export type HistoryItem =
	| { type: 'user'; turnId: string; text: string; parts?: InputPart[] }
	| { type: 'reasoning'; turnId: string; text: string }
	| { type: 'compaction'; turnId?: string; text: string; reason: 'auto' | 'overflow' | 'requested' }
	| { type: 'instructions'; turnId?: string; files: InstructionFile[]; changed: string[] }
	| { type: 'configure'; turnId?: string; model: string; effort?: string }
	| { type: 'assistant'; turnId: string; text: string }
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
	| { type: 'undo'; undo: TurnUndoResult };

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
}

// ---- turns ----

export type TurnStatus = 'completed' | 'cancelled' | 'failed' | 'limit';

export interface Usage {
	inputTokens: number;
	outputTokens: number;
	/** How much of the model's window the latest response took, and the window. */
	contextTokens?: number;
	contextWindow?: number;
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
	restored: string[];
	conflicts?: { path: string; reason: string; diff?: string }[];
	notUndoable?: { callId: string; name: string; title?: string; reason: string }[];
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

export interface TurnStarted {
	sessionId: string;
	turnId: string;
	input: string;
	parts?: InputPart[];
}

export interface TurnReasoning {
	sessionId: string;
	turnId: string;
	text: string;
}

export interface TurnUsage extends Usage {
	sessionId: string;
	turnId: string;
}

export interface TurnDelta {
	sessionId: string;
	turnId: string;
	text: string;
}

export type ToolStatus =
	| 'pending'
	| 'awaiting_approval'
	| 'running'
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

export interface ToolCallParams {
	sessionId?: string;
	turnId: string;
	callId: string;
	name: string;
	kind?: ToolKind;
	title?: string;
	arguments?: string;
	status: ToolStatus;
	outputDelta?: string;
	output?: string;
	content?: ToolContent[];
	/** How a command runs, from the moment it is prepared. */
	sandbox?: SandboxUse;
}

export interface TurnCompleted {
	sessionId: string;
	turnId: string;
	status: TurnStatus;
	error?: string;
	usage?: Usage;
}

// ---- approvals ----

/** `continue`: the turn reached its tool-call limit (PROTOCOL.md, the approval kind `continue`). */
export type ApprovalKind = 'tool_call' | 'server_launch' | 'acknowledge_unknown' | 'continue';

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
}

/** How a command runs: confined or not, with network or not, and (confined) what it may change. */
export interface SandboxUse {
	confined: boolean;
	network: boolean;
	writable?: string[];
}

export interface ApprovalRequest extends ApprovalDetails {
	requestId: string;
	sessionId?: string;
	turnId?: string;
	callId?: string;
	kind: ApprovalKind;
	tool?: string;
	toolKind?: ToolKind;
	transport?: string;
	scope?: string;
	options: PermissionOption[];
}

export interface ApprovalRespondParams {
	requestId: string;
	/** One of the request's optionIds. */
	decision: string;
	/** The first release's spelling of allow_always_permanent; kin still reads it. Never sent here. */
	permanent?: boolean;
}

export interface ApprovalResolved {
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
	minimum?: number;
	maximum?: number;
	minLength?: number;
	maxLength?: number;
	minItems?: number;
	maxItems?: number;
}

export interface ElicitationRequest {
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

export interface ElicitationResolved {
	requestId: string;
	sessionId?: string;
	action: ElicitationAction;
	reason: 'person' | 'cancelled' | 'disconnected' | 'shutdown';
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

export interface Notice {
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
