// Wire types of kin's protocol (rpc/PROTOCOL.md, protocol version "1"). Only shapes live here:
// no behaviour, no VS Code. Fields kin may leave out are optional.

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

// ---- lifecycle ----

export interface InitializeParams {
	processId: number;
	clientInfo: { name: string; version: string };
	capabilities: { approvals: boolean; elicitation: { form: boolean; url: boolean } };
	workspaceFolders?: { uri: string; name: string }[];
}

export interface ModelInfo {
	configured: boolean;
	model?: string;
	baseUrl?: string;
	missing?: string;
}

export interface InitializeResult {
	protocolVersion: string;
	serverInfo: { name: string; version: string };
	capabilities: Record<string, unknown>;
	model?: ModelInfo;
	workspaceFolders?: string[];
	/** How commands run: confined by a mechanism, or not and why (absent before kin had a sandbox). */
	sandbox?: SandboxInfo;
}

export interface SandboxInfo {
	mode: 'auto' | 'required' | 'off';
	mechanism?: string;
	confined: boolean;
	reason?: string;
	hint?: string;
}

// ---- sessions ----

export interface SessionInfo {
	sessionId: string;
	title?: string;
	createdAt?: string;
	updatedAt?: string;
	turns?: number;
	/** The session's workspace folders. */
	cwd?: string;
	additionalDirectories?: string[];
}

export type HistoryItem =
	| { type: 'user'; turnId: string; text: string }
	| { type: 'assistant'; turnId: string; text: string }
	| ({ type: 'toolCall' } & ToolCallParams)
	| {
			type: 'decision';
			turnId: string;
			callId?: string;
			requestId: string;
			kind: ApprovalKind;
			decision: string;
			reason?: string;
			title?: string;
	  }
	| { type: 'turn'; turnId: string; status: TurnStatus; error?: string; usage?: Usage };

export interface ResumeResult {
	session: SessionInfo;
	history: HistoryItem[];
	/** The `before` of the next older page; absent at the session's start. */
	cursor?: string;
	pending: (ApprovalRequest | ElicitationRequest)[];
	/** The turn kin is running on this session now. */
	runningTurnId?: string;
	/** Turns cannot run here (another kin has the session open, or its log is read-only). */
	readOnly?: boolean;
	readOnlyReason?: string;
}

// ---- turns ----

export type TurnStatus = 'completed' | 'cancelled' | 'failed' | 'limit';

export interface Usage {
	inputTokens: number;
	outputTokens: number;
}

export interface TurnStarted {
	sessionId: string;
	turnId: string;
	input: string;
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
	unified?: string;
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
}

export interface TurnCompleted {
	sessionId: string;
	turnId: string;
	status: TurnStatus;
	error?: string;
	usage?: Usage;
}

// ---- approvals ----

export type ApprovalKind = 'tool_call' | 'server_launch' | 'acknowledge_unknown';

export interface PermissionOption {
	optionId: string;
	name: string;
	kind: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always' | string;
}

export interface ApprovalRequest {
	requestId: string;
	sessionId?: string;
	turnId?: string;
	callId?: string;
	kind: ApprovalKind;
	tool?: string;
	toolKind?: ToolKind;
	title: string;
	command?: string;
	cwd?: string;
	diffs?: FileDiff[];
	server?: string;
	destination?: string;
	arguments?: string;
	warning?: string;
	transport?: string;
	scope?: string;
	grant?: { key: string; label: string };
	alwaysAsk?: boolean;
	options: PermissionOption[];
}

export interface ApprovalResolved {
	requestId: string;
	sessionId?: string;
	decision: string;
	reason: 'person' | 'grant' | 'cancelled' | 'disconnected' | 'shutdown' | string;
}

// ---- elicitation ----

export interface ElicitationField {
	name: string;
	title?: string;
	description?: string;
	type: 'string' | 'number' | 'integer' | 'boolean' | 'enum' | string;
	required?: boolean;
	default?: unknown;
	minimum?: number;
	maximum?: number;
	minLength?: number;
	maxLength?: number;
	pattern?: string;
	format?: string;
	enum?: string[];
	enumNames?: string[];
}

export interface ElicitationRequest {
	requestId: string;
	sessionId?: string;
	server?: string;
	mode: 'form' | 'url';
	purpose?: string;
	message?: string;
	url?: string;
	fields?: ElicitationField[];
}

export type ElicitationAction = 'accept' | 'decline' | 'cancel';

export interface ElicitationResolved {
	requestId: string;
	action: ElicitationAction | string;
	reason?: string;
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
	state: McpState | string;
	tools?: number;
	error?: string;
}

export interface Notice {
	level: 'info' | 'warning' | 'error';
	message: string;
	source?: string;
	sessionId?: string;
}

export interface LogMessage {
	level: 'error' | 'warning' | 'info' | 'debug' | string;
	message: string;
}

// ---- MCP manager ----

export type McpScope = 'project' | 'global';

export interface McpServerRow {
	name: string;
	scope: McpScope | 'foreign' | string;
	transport: 'stdio' | 'http' | string;
	enabled?: boolean;
	state?: McpState | string;
	tools?: number;
	launch?: string;
	/** Masked: PROTOCOL.md shows {"NAME":"●●●●"}; kin 0.1.0-dev sends ["NAME=●●●●"]. Both are read. */
	env?: Record<string, string> | string[];
	headers?: Record<string, string> | string[];
	auth?: string;
	oauth?: { clientId?: string; redirectUri?: string };
	trusted?: boolean;
	lastError?: string;
	file?: string;
}

export interface McpListResult {
	servers: McpServerRow[];
	foreign?: McpServerRow[];
	warnings?: { file: string; server?: string; problem: string }[];
	notices?: string[];
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

export interface McpCheckResult {
	results: { name: string; ready: boolean; state: string; explanation?: string }[];
}

// ---- grants ----

export interface Grant {
	id: string;
	type: 'bash' | 'tool' | 'mcp' | 'trust' | string;
	key: string;
	label: string;
	scope: 'session' | 'permanent' | string;
	sessionId?: string;
}
