/**
 * The slice of OpenClaw's plugin API (openclaw@2026.9.6) this plugin uses, written out structurally.
 *
 * Why not import the SDK's types: the `openclaw` package is 330 MB and the hook event types are not exported
 * from any public subpath (see ../shared/research/openclaw-hooks.md §2), while the plugin itself needs nothing
 * from it at runtime (a plain object default export loads). These shapes were copied from
 * `dist/hook-runner-global-*.d.ts` and `dist/agent-harness-runtime-*.d.ts` of 2026.9.6; `npm run check:sdk
 * -w hooks` type-checks that the real `OpenClawPluginApi` still satisfies them, and the integration tests run
 * the plugin inside the real gateway.
 */

export interface HostLogger {
  debug?: (message: string) => void;
  info: (message: string) => void;
  warn: (message: string) => void;
  error: (message: string) => void;
}

/** `PluginHookAgentContext`: set by the gateway from the session, never by the model. */
export interface AgentHookContext {
  runId?: string;
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  modelProviderId?: string;
  modelId?: string;
  channel?: string;
  accountId?: string;
  senderId?: string;
  trigger?: string;
  contextTokenBudget?: number;
}

export interface BeforeModelResolveEvent {
  prompt: string;
  attachments?: { kind: "image" | "video" | "audio" | "document" | "other"; mimeType?: string }[];
}

export interface BeforeModelResolveResult {
  modelOverride?: string;
  providerOverride?: string;
}

export interface BeforePromptBuildEvent {
  prompt: string;
  currentUserMessage?: string;
  messages: unknown[];
}

export interface BeforePromptBuildResult {
  prependContext?: string;
  appendContext?: string;
  prependSystemContext?: string;
  appendSystemContext?: string;
}

export interface TextBlock {
  type: "text";
  text: string;
}

export interface ImageBlock {
  type: "image";
  data: string;
  mimeType: string;
}

/** `ToolResultMessage`, the message shape tool_result_persist receives for real tool results. */
export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextBlock | ImageBlock)[];
  details?: unknown;
  isError: boolean;
  timestamp: number;
}

export interface ToolResultPersistEvent {
  toolName?: string;
  toolCallId?: string;
  /** An `AgentMessage`; a ToolResultMessage for real tool results. Typed loosely: read it defensively. */
  message: unknown;
  isSynthetic?: boolean;
}

export interface ToolResultPersistContext {
  agentId?: string;
  sessionKey?: string;
  toolName?: string;
  toolCallId?: string;
}

export interface AgentEndEvent {
  runId?: string;
  messages: unknown[];
  success: boolean;
  error?: string;
  durationMs?: number;
}

/** `PluginHookSessionEndEvent`; `reason` says why (shutdown and restart share a 2 s drain budget). */
export interface SessionEndEvent {
  sessionId: string;
  sessionKey?: string;
  messageCount: number;
  durationMs?: number;
  reason?: "new" | "reset" | "idle" | "daily" | "compaction" | "deleted" | "shutdown" | "restart" | "unknown";
  sessionFile?: string;
  transcriptArchived?: boolean;
  nextSessionId?: string;
  nextSessionKey?: string;
}

/** `PluginHookSessionContext`. */
export interface SessionHookContext {
  agentId?: string;
  sessionId: string;
  sessionKey?: string;
}

/** `PluginHookBeforeCompactionEvent`: the messages about to be compacted away, when the host has them. */
export interface BeforeCompactionEvent {
  messageCount: number;
  compactingCount?: number;
  tokenCount?: number;
  messages?: unknown[];
  sessionFile?: string;
}

/** `PluginHookBeforeResetEvent`: the session's messages before a reset. */
export interface BeforeResetEvent {
  sessionFile?: string;
  messages?: unknown[];
  reason?: string;
}

export interface HookHandlers {
  before_model_resolve: (
    event: BeforeModelResolveEvent,
    ctx: AgentHookContext,
  ) => Promise<BeforeModelResolveResult | undefined> | BeforeModelResolveResult | undefined;
  before_prompt_build: (
    event: BeforePromptBuildEvent,
    ctx: AgentHookContext,
  ) => Promise<BeforePromptBuildResult | undefined> | BeforePromptBuildResult | undefined;
  /** Synchronous: a returned Promise is ignored by the host. */
  tool_result_persist: (event: ToolResultPersistEvent, ctx: ToolResultPersistContext) => undefined;
  agent_end: (event: AgentEndEvent, ctx: AgentHookContext) => Promise<void> | undefined;
  before_compaction: (event: BeforeCompactionEvent, ctx: AgentHookContext) => Promise<void> | undefined;
  before_reset: (event: BeforeResetEvent, ctx: AgentHookContext) => Promise<void> | undefined;
  session_end: (event: SessionEndEvent, ctx: SessionHookContext) => Promise<void> | undefined;
  /** `PluginHookGatewayStopEvent`: the gateway is stopping (5 s budget). */
  gateway_stop: (event: { reason?: string }, ctx: { port?: number }) => Promise<void> | undefined;
}

/** `OpenClawPluginToolContext`, the part the memory tools read: set by the gateway, never by the model. */
export interface ToolContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
}

/** `AgentToolResult`: what the model reads back, and structured details for logs and UIs. */
export interface ToolResult {
  content: TextBlock[];
  details: unknown;
}

/** An agent tool (`AnyAgentTool`); parameters are a plain JSON Schema (TypeBox's TSchema is structural). */
export interface HostAgentTool {
  name: string;
  label: string;
  description: string;
  parameters: Record<string, unknown>;
  execute: (toolCallId: string, params: unknown, signal?: AbortSignal) => Promise<ToolResult>;
}

export interface ServiceContext {
  stateDir: string;
  logger: HostLogger;
}

export interface HostService {
  id: string;
  reload?: { configPrefixes: readonly string[] };
  start: (ctx: ServiceContext) => void | Promise<void>;
  stop?: (ctx: ServiceContext) => void | Promise<void>;
}

export interface SubagentRunParams {
  sessionKey: string;
  message: string;
  deliver?: boolean;
  lightContext?: boolean;
  disableTools?: boolean;
  /** "minimal": the bounded subagent prompt instead of the full conversation prompt. */
  promptMode?: "minimal";
  extraSystemPrompt?: string;
  /** Run on this provider/model instead of the agent's. */
  provider?: string;
  model?: string;
  idempotencyKey?: string;
}

export interface SubagentRuntime {
  run: (params: SubagentRunParams) => Promise<{ runId: string; sessionKey?: string }>;
  waitForRun: (params: { runId: string; timeoutMs?: number }) => Promise<{
    status: "ok" | "timeout" | "error" | "pending";
    error?: string;
  }>;
  getSessionMessages: (params: { sessionKey: string; limit?: number }) => Promise<{ messages: unknown[] }>;
  deleteSession: (params: { sessionKey: string; deleteTranscript?: boolean }) => Promise<void>;
}

export interface HostPluginApi {
  id: string;
  registrationMode: string;
  /** The whole gateway config (`OpenClawConfig`); read through a schema, never trusted blindly. */
  config: unknown;
  pluginConfig?: Record<string, unknown>;
  logger: HostLogger;
  runtime: {
    subagent: SubagentRuntime;
    state: { resolveStateDir: () => string };
  };
  on: <K extends keyof HookHandlers>(
    hookName: K,
    handler: HookHandlers[K],
    opts?: { priority?: number; timeoutMs?: number },
  ) => void;
  registerService: (service: HostService) => void;
  /** Tools must be named in the manifest's `contracts.tools`; a factory sees the run's trusted context. */
  registerTool: (
    tool: (ctx: ToolContext) => HostAgentTool | HostAgentTool[] | null | undefined,
    opts?: { name?: string; names?: string[]; optional?: boolean },
  ) => void;
}

/** The entry's default export: `OpenClawPluginDefinition`. */
export interface PluginDefinition {
  id: string;
  name: string;
  description: string;
  register: (api: HostPluginApi) => void;
}
