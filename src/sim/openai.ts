// OpenAI-compatible chat responses shaped as SGLang's serving_chat produces them (_generate_chat_stream
// @0c078e6): a role chunk, content (or tool-call) chunks, a separate finish chunk, an optional usage chunk
// with `choices: []`, then [DONE].
import { answerPieces, exampleValue, knownAnswer } from './answers.js';
import { newCompletionId, newToolCallId } from './ids.js';
import type { ToolCallPlan } from './faults/types.js';

export interface ChatRequest {
  model?: string;
  messages: { role: string; content?: unknown }[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
  tools: { name: string; parameters?: unknown }[];
  toolChoice: unknown;
  parallelToolCalls: boolean;
  /** response_format json_schema / json_object: the schema the output must fit ({} for json_object). */
  jsonSchema?: unknown;
}

export class BadRequest extends Error {}

/** Validates the fields the simulator uses; unknown fields are accepted as the real server does. */
export function parseChatRequest(text: string): ChatRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest('request body is not valid JSON');
  }
  if (!body || typeof body !== 'object') throw new BadRequest('request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.messages) || b.messages.length === 0)
    throw new BadRequest('messages: expected a non-empty array');
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (
    maxTokens !== undefined &&
    maxTokens !== null &&
    (!Number.isInteger(maxTokens) || (maxTokens as number) < 1)
  ) {
    throw new BadRequest('max_tokens: expected a positive integer');
  }
  const tools = Array.isArray(b.tools)
    ? b.tools.flatMap((t: unknown) => {
        const fn = (t as { function?: { name?: unknown; parameters?: unknown } } | null)?.function;
        return fn && typeof fn.name === 'string' ? [{ name: fn.name, parameters: fn.parameters }] : [];
      })
    : [];
  const so = b.stream_options as { include_usage?: unknown } | undefined;
  return {
    model: typeof b.model === 'string' ? b.model : undefined,
    messages: b.messages as ChatRequest['messages'],
    stream: b.stream === true,
    includeUsage: so?.include_usage === true,
    maxTokens: (maxTokens as number | undefined | null) ?? undefined,
    tools,
    toolChoice: b.tool_choice,
    parallelToolCalls: b.parallel_tool_calls === true,
    jsonSchema: jsonSchemaOf(b.response_format),
  };
}

function jsonSchemaOf(rf: unknown): unknown {
  const f = rf as { type?: unknown; json_schema?: { schema?: unknown } } | null | undefined;
  if (f?.type === 'json_schema') return f.json_schema?.schema ?? {};
  if (f?.type === 'json_object') return {};
  return undefined;
}

/** The text of the last user message (where the simulated model finds its question). */
export function lastUserText(req: ChatRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === 'user' && typeof m.content === 'string') return m.content;
  }
  return '';
}

/** The last message is a tool result: the model answers it in text (a new user question asks anew). */
function answersToolResult(req: ChatRequest): boolean {
  return req.messages[req.messages.length - 1]?.role === 'tool';
}

/** Rough token count (≈4 characters a token) plus the chat template's overhead. */
export function countPromptTokens(req: ChatRequest): number {
  const chars = req.messages.reduce((s, m) => s + (typeof m.content === 'string' ? m.content.length : 0), 0);
  return 8 + Math.ceil(chars / 4);
}

const WORDS = [
  'OK',
  '.',
  ' The',
  ' simulated',
  ' engine',
  ' streams',
  ' one',
  ' token',
  ' per',
  ' decode',
  ' step',
  ',',
];

/** What the model will emit: text pieces (one a token) or tool calls (per call a name token, then arguments). */
export type Plan =
  | {
      kind: 'content';
      count: number;
      piece: (index: number) => string;
      finish?: 'stop' | 'length';
      /**
       * The pieces go to the reasoning field, not content (a reasoning parser that never saw the end of thinking);
       * a function says it per piece (a model that answers, then goes back to thinking).
       */
      reasoning?: boolean | ((index: number) => boolean);
    }
  | { kind: 'tool'; calls: ToolCallPlan[]; steps: ToolStep[] };

/** One generated token of a tool-calling answer: a call's name, or a fragment of its arguments. */
export interface ToolStep {
  call: number;
  name?: string;
  args?: string;
}

/** How faults bend the model's answer (src/sim/faults): each hook returns undefined to leave it alone. */
export interface PlanHooks {
  /** Raw markup for `content` instead of structured tool calls. */
  leak(calls: ToolCallPlan[], req: ChatRequest): string | undefined;
  /** tool_choice was ignored: the model writes text until max_tokens. */
  ignoresToolChoice(req: ChatRequest): boolean;
  /** A wrong answer in place of the right one. */
  corrupt(answer: string): string | undefined;
  /** Streamed argument fragments as a broken parser sends them. */
  corruptStreamedArgs?(fragments: readonly string[]): string[] | undefined;
  /** Text answers become garbage in reasoning_content, content empty, to max_tokens. */
  reasoningGarbage?(): boolean;
  /** After the answer the model never stops: a `</think>` loop in content, or a reasoning loop, to max_tokens. */
  reasoningRunaway?(): RunawayShape | undefined;
  /** Tool calls written inside the thinking: raw markup in the reasoning field, no tool_calls. */
  callsInReasoning?(calls: ToolCallPlan[]): string | undefined;
  /** tool_choice "none" is ignored. */
  callsDespiteNone?(): boolean;
}

/** How a runaway goes on after the answer: closing thinking over and over, or thinking in a loop. */
export type RunawayShape = 'think_loop' | 'reasoning_loop';

/** What a model stuck after its answer repeats (a loop the reasoning parser files under reasoning). */
const THINK_AGAIN = [' Wait', ',', ' let', ' me', ' check', ' that', ' again', '.'];

/** The answer, then the runaway to max_tokens (finish_reason length). */
function runawayPlan(text: string, maxTokens: number, shape: RunawayShape): Plan {
  const pieces = answerPieces(text);
  const loop = shape === 'think_loop' ? ['</think>'] : THINK_AGAIN;
  return {
    kind: 'content',
    count: maxTokens,
    piece: (i) => (i < pieces.length ? pieces[i]! : loop[(i - pieces.length) % loop.length]!),
    finish: 'length',
    ...(shape === 'reasoning_loop' ? { reasoning: (i: number) => i >= pieces.length } : {}),
  };
}

const NO_HOOKS: PlanHooks = {
  leak: () => undefined,
  ignoresToolChoice: () => false,
  corrupt: () => undefined,
};

function textPlan(text: string, maxTokens: number): Plan {
  const pieces = answerPieces(text);
  return {
    kind: 'content',
    count: Math.min(pieces.length, maxTokens),
    piece: (i) => pieces[i] ?? '',
    finish: pieces.length > maxTokens ? 'length' : 'stop',
  };
}

/** Decoding gone wrong: byte-level pieces and symbols, no words (what reasoning_garbage streams). */
const GARBAGE = ['Ġ', '\uFFFD', '#@', 'ĊĊ', '}{', '%$', '\u0003', 'ÃÂ', '<0x0A>', '¿', '~~', '\uFFFD\uFFFD'];

export function planResponse(req: ChatRequest, defaultMaxTokens: number, hooks: PlanHooks = NO_HOOKS): Plan {
  const maxTokens = req.maxTokens ?? defaultMaxTokens;
  const filler: Plan = { kind: 'content', count: maxTokens, piece: (i) => WORDS[i % WORDS.length]! };
  const tools = pickTools(req, hooks.callsDespiteNone?.() === true);
  if (tools.length === 0 && hooks.reasoningGarbage?.() === true) {
    return {
      kind: 'content',
      count: maxTokens,
      piece: (i) => GARBAGE[i % GARBAGE.length]!,
      finish: 'length',
      reasoning: true,
    };
  }
  if (req.jsonSchema !== undefined) {
    const json = JSON.stringify(exampleValue(req.jsonSchema));
    return textPlan(hooks.corrupt(json) ?? json, maxTokens);
  }
  if (answersToolResult(req)) return textPlan('It is 12:00 UTC.', maxTokens);
  if (tools.length > 0) {
    if (hooks.ignoresToolChoice(req)) return { ...filler, finish: 'length' };
    const prompt = lastUserText(req);
    const calls = tools.map((t) => ({
      name: t.name,
      arguments: JSON.stringify(exampleArgs(t.parameters, prompt)),
    }));
    const thought = hooks.callsInReasoning?.(calls);
    if (thought !== undefined) {
      const pieces = splitPieces(thought, 12);
      return { kind: 'content', count: pieces.length, piece: (i) => pieces[i] ?? '', reasoning: true };
    }
    const leaked = hooks.leak(calls, req);
    if (leaked !== undefined) {
      const pieces = splitPieces(leaked, 12);
      return { kind: 'content', count: pieces.length, piece: (i) => pieces[i] ?? '' };
    }
    // Short arguments in three fragments, long ones in fragments of ≈ 48 characters, as engines stream them.
    const steps = calls.flatMap((c, call): ToolStep[] => {
      let fragments = splitPieces(c.arguments, Math.max(3, Math.ceil(c.arguments.length / 48)));
      if (req.stream) fragments = hooks.corruptStreamedArgs?.(fragments) ?? fragments;
      return [{ call, name: c.name }, ...fragments.map((args) => ({ call, args }))];
    });
    return { kind: 'tool', calls, steps };
  }
  const known = knownAnswer(lastUserText(req));
  if (known !== undefined) {
    const answer = hooks.corrupt(known) ?? known;
    const runaway = hooks.reasoningRunaway?.();
    return runaway !== undefined ? runawayPlan(answer, maxTokens, runaway) : textPlan(answer, maxTokens);
  }
  // Pieces are computed per index so a huge max_tokens costs no memory.
  return filler;
}

export function planTokens(plan: Plan): number {
  return plan.kind === 'content' ? plan.count : plan.steps.length;
}

/** The tools the model calls: none for tool_choice "none" (unless a fault ignores it), both of two with parallel_tool_calls. */
function pickTools(req: ChatRequest, ignoreNone = false): { name: string; parameters?: unknown }[] {
  if (req.tools.length === 0 || (req.toolChoice === 'none' && !ignoreNone)) return [];
  const forced = (req.toolChoice as { function?: { name?: unknown } } | undefined)?.function?.name;
  const named = req.tools.find((t) => t.name === forced);
  if (named) return [named];
  if (req.parallelToolCalls && req.tools.length >= 2) return req.tools.slice(0, 2);
  return [req.tools[0]!];
}

/** A prompt that dictates a string argument verbatim (the toolcall probe's large_args cell). */
const VERBATIM = /set to exactly this, unchanged:\n([\s\S]+)$/;

/** Arguments that satisfy a JSON-schema object's properties (strings get a plausible value, or the dictated text). */
function exampleArgs(schema: unknown, prompt = ''): Record<string, unknown> {
  const verbatim = VERBATIM.exec(prompt)?.[1];
  const s = schema as
    { properties?: Record<string, { type?: string; enum?: unknown[] }>; required?: string[] } | undefined;
  const props = s?.properties ?? {};
  const keys = s?.required?.length ? s.required : Object.keys(props);
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const p = props[k] ?? {};
    if (p.enum?.length) out[k] = p.enum[0];
    else if (p.type === 'number' || p.type === 'integer') out[k] = 1;
    else if (p.type === 'boolean') out[k] = true;
    else if (p.type === 'array') out[k] = [];
    else if (p.type === 'object') out[k] = {};
    else out[k] = verbatim ?? 'Paris';
  }
  return out;
}

/** Splits text into at most `n` pieces of near-equal length, without splitting a UTF-16 surrogate pair. */
function splitPieces(text: string, n: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / n));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out.length ? out : [''];
}

/** Renders one request's plan as SSE chunks or as a final non-streaming body. */
export class ChatRenderer {
  readonly id = newCompletionId();
  readonly created = Math.floor(Date.now() / 1000);
  private readonly callIds: string[];

  /**
   * `reasoningField`: where reasoning text goes, as the engine names it — SGLang `reasoning_content`
   * (python/sglang/srt/entrypoints/openai/protocol.py @004c82e DeltaMessage, ChatMessage), current vLLM `reasoning`
   * (src/sources/probes/reasoning-field.ts has the history).
   */
  constructor(
    private readonly plan: Plan,
    private readonly model: string,
    private readonly promptTokens: number,
    private readonly reasoningField: 'reasoning' | 'reasoning_content' = 'reasoning_content',
  ) {
    this.callIds = plan.kind === 'tool' ? plan.calls.map(() => newToolCallId()) : [];
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
    return sse({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason, matched_stop: null }],
      usage: null,
    });
  }

  /** The SSE text for generated token `index` (the role chunk goes before the first). */
  tokenChunks(index: number): string {
    const head = index === 0 ? this.chunk({ role: 'assistant', content: '' }) : '';
    if (this.plan.kind === 'content')
      return (
        head +
        this.chunk(
          this.inReasoning(index)
            ? { [this.reasoningField]: this.plan.piece(index) }
            : { content: this.plan.piece(index) },
        )
      );
    const step = this.plan.steps[index];
    if (step === undefined) return head;
    if (step.name !== undefined) {
      return (
        head +
        this.chunk({
          tool_calls: [
            {
              id: this.callIds[step.call],
              index: step.call,
              type: 'function',
              function: { name: step.name, arguments: '' },
            },
          ],
        })
      );
    }
    return (
      head +
      this.chunk({
        tool_calls: [
          { id: null, index: step.call, type: null, function: { name: null, arguments: step.args } },
        ],
      })
    );
  }

  private inReasoning(index: number): boolean {
    const r = this.plan.kind === 'content' ? this.plan.reasoning : undefined;
    return typeof r === 'function' ? r(index) : r === true;
  }

  get finishReason(): string {
    return this.plan.kind === 'tool' ? 'tool_calls' : (this.plan.finish ?? 'stop');
  }

  usage(completionTokens: number) {
    return {
      prompt_tokens: this.promptTokens,
      completion_tokens: completionTokens,
      total_tokens: this.promptTokens + completionTokens,
    };
  }

  endChunks(completionTokens: number, includeUsage: boolean): string {
    let out = this.chunk({}, this.finishReason);
    if (includeUsage) {
      // "Empty choices array as per OpenAI spec"
      out += sse({
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.created,
        model: this.model,
        choices: [],
        usage: this.usage(completionTokens),
      });
    }
    return out + 'data: [DONE]\n\n';
  }

  errorChunks(message: string): string {
    return (
      sse({ object: 'error', message, type: 'InternalServerError', param: null, code: 500 }) +
      'data: [DONE]\n\n'
    );
  }

  /** A text answer's message, its pieces split between content and the reasoning field as streamed. */
  private textMessage(completionTokens: number) {
    const pieces = Array.from({ length: completionTokens }, (_, i) => i);
    const text = (inReasoning: boolean) =>
      pieces
        .filter((i) => this.inReasoning(i) === inReasoning)
        .map((i) => (this.plan.kind === 'content' ? this.plan.piece(i) : ''))
        .join('');
    const content = text(false);
    const reasoning = text(true);
    return {
      role: 'assistant',
      content: content === '' && reasoning !== '' ? null : content,
      [this.reasoningField]: reasoning === '' ? null : reasoning,
      tool_calls: null,
    };
  }

  completion(completionTokens: number) {
    const plan = this.plan;
    const message =
      plan.kind === 'tool'
        ? {
            role: 'assistant',
            content: null,
            [this.reasoningField]: null,
            tool_calls: plan.calls.map((c, i) => ({
              id: this.callIds[i],
              index: i,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : this.textMessage(completionTokens);
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: this.finishReason, matched_stop: null }],
      usage: this.usage(completionTokens),
    };
  }
}

function sse(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}
