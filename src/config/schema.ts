// The configuration schema. Defaults sit beside each field (as blackbox_exporter's Default<X>Probe),
// every object is strict so a typo is an error rather than a silently ignored key.
import cron from 'node-cron';
import { z } from 'zod';
import { isIP } from 'node:net';
import { duration, durationOr, formatDuration } from './duration.js';
import type { DetectSettings } from '../core/detect-settings.js';
import { COMPLETION_KINDS, CONN_KINDS, PROBE_KIND_NAMES, TOOL_CASES } from './kinds.js';
import { parseJsonPath } from '../lib/json-path.js';
import { isCompletion, type LogEventClass, type ProbeKind } from '../core/vocabulary.js';
import { logEventClassSchema, stateOrDiagnosisSchema } from './vocabulary-schema.js';
import { LOG_PACKS, withImpliedPacks } from './log-packs.js';
import { defaultPacks, LOG_ENGINES } from './log-engines.js';
import { nodeSchema } from './node-schema.js';
import { agentSchema, checkTraffic, drainSchema, poolSchema, readinessSchema } from './traffic-schema.js';

const LISTEN_ADDRESS = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/;

/** Why a listen address ("host:port", ":port", "[v6]:port") does not parse, or undefined. */
function listenAddressProblem(addr: string): string | undefined {
  const m = LISTEN_ADDRESS.exec(addr.trim());
  const want = 'expected host:port or :port, like ":9787" or "127.0.0.1:9787"';
  if (!m) return `invalid listen address ${JSON.stringify(addr)}: ${want}`;
  if (Number(m[3]) > 65535) return `invalid listen address ${JSON.stringify(addr)}: port out of range`;
  const host = m[1] ?? m[2]!;
  if (
    m[1] !== undefined
      ? isIP(host) !== 6
      : host !== '' && isIP(host) === 0 && !/^[A-Za-z0-9.-]{1,253}$/.test(host)
  )
    return `invalid listen address ${JSON.stringify(addr)}: bad host ${JSON.stringify(host)}`;
  return undefined;
}

/** Hosts a listener on which takes the port on every address. */
const ANY_HOST = new Set(['', '0.0.0.0', '::']);

/**
 * Whether two listen addresses (both parse) would bind one port: the same port on the same host, or on any host
 * when either is a wildcard (":9787" and "127.0.0.1:9787" clash). Port 0 (tests) picks a free port for each.
 */
function sharePort(a: string, b: string): boolean {
  const [x, y] = [a, b].map((addr) => {
    const m = LISTEN_ADDRESS.exec(addr.trim())!;
    return { host: m[1] ?? m[2]!, port: Number(m[3]) };
  });
  if (x!.port === 0 || x!.port !== y!.port) return false;
  return x!.host === y!.host || ANY_HOST.has(x!.host) || ANY_HOST.has(y!.host);
}

const name = (what: string) =>
  z
    .string({ error: `expected a ${what} name (a string)` })
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, `a ${what} name may use letters, digits and _.:- (1 to 64 characters)`);

const httpUrl = z.string({ error: 'expected a URL (a string)' }).refine(
  (u) => {
    try {
      const p = new URL(u);
      return (p.protocol === 'http:' || p.protocol === 'https:') && p.hostname !== '';
    } catch {
      return false;
    }
  },
  {
    error: (iss) =>
      `expected an http(s) URL like "http://127.0.0.1:30001", got ${JSON.stringify(urlWithoutPassword(iss.input))}`,
  },
);

/**
 * `http://user:pass@host` was accepted, never sent (undici takes no credentials from the URL), and the password
 * showed wherever the URL did — /probe?debug=true among them (issue 24 #11). Refused: credentials have fields of
 * their own (bearerToken, bearerTokenFile, headers) that are sent and redacted everywhere. The message does not
 * quote the URL, so the password is not echoed by `check` either.
 */
const noCredentials = (hint: string) =>
  z.string().refine(
    (u) => {
      try {
        const p = new URL(u);
        return p.username === '' && p.password === '';
      } catch {
        return true;
      }
    },
    {
      error: `must not carry credentials (user:password@ is never sent, and would show wherever the URL does); ${hint}`,
    },
  );

/** The URL with any password in it masked, for an error that quotes what was given. */
function urlWithoutPassword(input: unknown): unknown {
  if (typeof input !== 'string') return input;
  return input.replace(
    /^([A-Za-z][A-Za-z0-9+.-]{0,20}:\/\/[^/?#@:\s]{0,256}:)[^/?#@\s]{0,1024}@/,
    '$1<secret>@',
  );
}

export const tlsSchema = z.strictObject({
  /** PEM file with the CA that signed the endpoint's certificate. */
  caFile: z.string().optional(),
  /** Skip certificate verification (self-signed lab endpoints). */
  insecureSkipVerify: z.boolean().default(false),
  /** SNI / name to verify, when it differs from the URL's host. */
  serverName: z.string().optional(),
});

export const endpointSchema = z.strictObject({
  name: name('endpoint'),
  url: httpUrl.pipe(
    noCredentials(
      'give them as bearerToken, bearerTokenFile or headers: { Authorization: "Basic <base64>" }',
    ),
  ),
  /** Extra request headers; values may use ${ENV_VAR}. */
  headers: z.record(z.string(), z.string()).default({}),
  /** Sent as "Authorization: Bearer <token>"; use ${ENV_VAR}, or bearerTokenFile instead. */
  bearerToken: z.string().optional(),
  /** A file holding the bearer token (read at load and on every reload). */
  bearerTokenFile: z.string().optional(),
  tls: tlsSchema.default({ insecureSkipVerify: false }),
  /**
   * A hop every node's daemon reaches (the shared router or proxy): probed only by daemons with
   * `probeShared` on, so N daemons do not probe it N times (docs/deploy.md, more than one node).
   */
  shared: z.boolean().default(false),
});

// Re-exported: the runtime imports them from ./kinds.js, which does not load zod.
export { COMPLETION_KINDS, CONN_KINDS, onDemandInterval, PROBE_KIND_NAMES, TOOL_CASES } from './kinds.js';
export const TOOL_CELLS = TOOL_CASES.flatMap((c) => [c, `${c}/nonstream`] as const);
export const DEFAULT_TOOL_CELLS = [
  'auto',
  'auto/nonstream',
  'required',
  'named',
  'none',
  'parallel',
  'second_turn',
  'large_args',
] as const;
export const CANARY_QUESTIONS = ['arithmetic', 'echo'] as const;

/** The shortest completion probe timeout `check` accepts; docs/decisions.md (issue 24) says why. */
export const MIN_COMPLETION_TIMEOUT_MS = 1000;
/** The shortest timeout of a plain HTTP request (health, serverinfo, an engine scrape). */
export const MIN_REQUEST_TIMEOUT_MS = 100;

/** Fields every probe kind has. */
const probeCommon = {
  name: name('probe'),
  /** Run every interval (with jitter); or give `cron` (node-cron syntax, seconds allowed) instead. */
  every: duration().optional(),
  cron: z.string().optional(),
  /** Random delay added to each scheduled run, as a fraction of `every` (spreads probes out). */
  jitter: z.number().min(0).max(0.5).default(0.1),
  timeout: durationOr('30s'),
  /** Hops to probe, by endpoint name; default all the target's endpoints. */
  endpoints: z.array(z.string()).optional(),
  /** Connection kinds; chat defaults to both, every other kind to fresh (src/sources/probes/registry.ts says why). */
  conn: z.array(z.enum(CONN_KINDS)).min(1).optional(),
  /**
   * Minimum time between two on-demand runs (GET /probe) of this probe; default its `every` (60s for a
   * cron probe). Each run is engine work (SGLang's /health generates a token): a caller looping on /probe
   * must not out-run the schedule.
   */
  onDemandInterval: duration().optional(),
};

/** Fields of the kinds that run a completion (chat, toolcall). */
const completionFields = {
  maxTokens: z.number().int().min(1).max(4096).default(8),
  /** Time to first token over this counts as slow (degraded), though the probe passes. */
  ttftObjective: duration().optional(),
  /**
   * The request id each completion request carries, so the engine logs it and the detector can tell the aborts
   * our own timed-out probes cause from users' (issue 13): `rid` sends SGLang's body field `rid` and the
   * `X-Request-Id` header; `header` only the header (vLLM warns about unknown body fields); `off` neither.
   */
  requestId: z.enum(['rid', 'header', 'off']).default('rid'),
};

/** Fields of the kinds that GET a path and check its status (health, serverinfo). */
const httpGetFields = {
  /** The path to GET (health: /health, serverinfo: /get_server_info). */
  path: z.string().startsWith('/').optional(),
  expectStatus: z.number().int().min(100).max(599).default(200),
};

/** The message of a stray key in a probe of `kind` (config/load.ts names the kinds the key belongs to). */
export const PROBE_STRAY_KEY = 'probe-kind:';

/** A strict object for one kind: its unknown-key issue carries the kind, so the error can name it. */
const kindObject = <K extends string, S extends z.core.$ZodLooseShape>(kind: K, shape: S) =>
  z.strictObject(
    { ...probeCommon, kind: z.literal(kind), ...shape },
    { error: (iss) => (iss.code === 'unrecognized_keys' ? `${PROBE_STRAY_KEY}${kind}` : undefined) },
  );

const chatProbeSchema = kindObject('chat', { ...completionFields, prompt: z.string().default('Say OK.') });
// The toolcall probe sends its own fixed prompts (src/sources/probes/toolcall.ts): `prompt` is not one of its fields.
const toolcallProbeSchema = kindObject('toolcall', {
  ...completionFields,
  /** The matrix cells run each time, in order; each is judged on its own. */
  cells: z
    .array(z.enum(TOOL_CELLS))
    .min(1)
    .default([...DEFAULT_TOOL_CELLS]),
});
// A canary asks its own questions (src/sources/probes/canary.ts); maxTokens leaves room for a nonce and a full stop.
const canaryProbeSchema = kindObject('canary', {
  ...completionFields,
  maxTokens: z.number().int().min(1).max(4096).default(8),
  /** Question shapes, asked in turn: a sum of random operands, the echo of a random nonce. */
  questions: z
    .array(z.enum(CANARY_QUESTIONS))
    .min(1)
    .default([...CANARY_QUESTIONS]),
  /** Every n-th run asks two questions at once over two connections (cross-request mix-ups); 0: never. */
  pairEvery: z.number().int().min(0).default(4),
});
// The structured probe's prompt and schema are its own (src/sources/probes/structured.ts): ~15 tokens of JSON.
const structuredProbeSchema = kindObject('structured', {
  ...completionFields,
  maxTokens: z.number().int().min(1).max(4096).default(32),
});
// The long-input probe's text is its own (src/sources/probes/prompt-text.ts): `promptTokens` of it, a nonce first
// so no prefix cache can serve it, and an echo question last whose answer is a handful of tokens.
// Sized from the deployment unless `promptTokens` says: `contextShare` of the context it reports (/v1/models
// max_model_len, llama.cpp n_ctx), at most `maxPromptTokens` (the engine chooses the number it reports), else 8192.
const longinputProbeSchema = kindObject('longinput', {
  ...completionFields,
  /** Prompt tokens per run, fixed (an estimate for byte-level BPE tokenizers; the usage chunk tells the real count). */
  promptTokens: z.number().int().min(256).max(262_144).optional(),
  /** Without promptTokens: this share of the context the deployment reports. */
  contextShare: z.number().gt(0).max(0.9).default(0.5),
  /** Without promptTokens: the longest prompt sent, whatever the deployment reports. */
  maxPromptTokens: z.number().int().min(256).max(262_144).default(32_768),
  timeout: durationOr('60s'),
});
// The conversation probe's turns are its own (src/sources/probes/conversation.ts): each round appends the previous
// answer and a new user turn of `roundTokens`, over the slot's one connection.
const conversationProbeSchema = kindObject('conversation', {
  ...completionFields,
  maxTokens: z.number().int().min(1).max(4096).default(16),
  rounds: z.number().int().min(2).max(16).default(4),
  /** Prompt tokens each round adds (the previous answer comes on top). */
  roundTokens: z.number().int().min(16).max(32_768).default(512),
  /**
   * A round whose first token comes later than this many times round 1's (and `ttftGrowthFloor` later) fails. A wait
   * that grows in proportion to the context reaches only about k× round 1's at round k (the rounds are equal, and a
   * keep-alive slot primes its connection, so round 1 waits too), so a factor must be below `rounds` to ever fail.
   * Unset: 2, or 1.5 for a conversation of 2 rounds (CONVERSATION_GROWTH_DEFAULT, sources/probes/conversation.ts).
   */
  ttftGrowth: z.number().min(1.5).max(100).optional(),
  /** Growth under this many ms is noise whatever the factor (round 1 can answer in a few ms). */
  ttftGrowthFloor: durationOr('2s'),
  timeout: durationOr('120s'),
}).superRefine((p, ctx) => {
  if (p.ttftGrowth !== undefined && p.ttftGrowth >= p.rounds)
    ctx.addIssue({
      code: 'custom',
      path: ['ttftGrowth'],
      message: `ttftGrowth ${p.ttftGrowth} must be below rounds (${p.rounds}): a first-token wait that grows in proportion to the conversation reaches only about ${p.rounds}× round 1's by the last round, so it could never fail`,
    });
});
const healthProbeSchema = kindObject('health', httpGetFields);

/**
 * One check on the serverinfo probe's JSON: `path` (a JSON-path subset, src/lib/json-path.ts) selects
 * values, and every selected value must pass each test given. `exists: false` passes when nothing is selected.
 */
export const serverinfoExpectSchema = z
  .strictObject({
    path: z.string().superRefine((p, ctx) => {
      try {
        parseJsonPath(p);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
    exists: z.boolean().optional(),
    equals: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
    lt: z.number().optional(),
    gt: z.number().optional(),
  })
  .superRefine((e, ctx) => {
    const tests = (['equals', 'lt', 'gt'] as const).filter((k) => e[k] !== undefined);
    if (tests.length === 0 && e.exists === undefined) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'give a test: exists, equals, lt or gt' });
    }
    if (e.exists === false && tests.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['exists'],
        message: `exists: false cannot be combined with ${tests.join(', ')}`,
      });
    }
    if (e.equals !== undefined && (e.lt !== undefined || e.gt !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['equals'], message: 'give either equals or lt/gt, not both' });
    }
  });

// serverinfo GETs a JSON endpoint of the engine, an object or an array, with optional expectations on its fields:
// SGLang /get_server_info and llama.cpp /slots (scheduler round trips that hang with it), vLLM /load.
const serverinfoProbeSchema = kindObject('serverinfo', {
  ...httpGetFields,
  expect: z.array(serverinfoExpectSchema).max(32).default([]),
});

/** Every probe kind's schema; a new kind is one entry here (and one in src/sources/probes/registry.ts). */
const PROBE_KIND_SCHEMAS = [
  chatProbeSchema,
  toolcallProbeSchema,
  healthProbeSchema,
  serverinfoProbeSchema,
  canaryProbeSchema,
  structuredProbeSchema,
  longinputProbeSchema,
  conversationProbeSchema,
] as const;
type SchemaKinds = (typeof PROBE_KIND_SCHEMAS)[number]['shape']['kind']['value'];
// Both ways: a vocabulary kind without a schema here (or a schema for a kind it lacks) does not compile.
const kindsCovered: [ProbeKind] extends [SchemaKinds]
  ? [SchemaKinds] extends [ProbeKind]
    ? true
    : never
  : never = true;
void kindsCovered;

function kindProblem(kind: unknown): string {
  const kinds = PROBE_KIND_NAMES.join(', ');
  return kind === undefined
    ? `required: the probe's kind (${kinds})`
    : `must be one of ${kinds}, got ${JSON.stringify(kind)}`;
}

export const probeSchema = z
  .discriminatedUnion('kind', PROBE_KIND_SCHEMAS, {
    error: (iss) =>
      iss.code === 'invalid_union'
        ? kindProblem((iss.input as { kind?: unknown } | undefined)?.kind)
        : undefined,
  })
  .superRefine((p, ctx) => {
    if (p.every === undefined && p.cron === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['every'],
        message: 'required: give `every` (e.g. "15s") or `cron`',
      });
    }
    if (p.every !== undefined && p.cron !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['cron'], message: 'give either `every` or `cron`, not both' });
    }
    if (p.cron !== undefined && !cron.validate(p.cron)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cron'],
        message: `invalid cron expression ${JSON.stringify(p.cron)} (node-cron syntax, e.g. "*/15 * * * * *")`,
      });
    }
    if (p.every !== undefined && p.every < 1000) {
      ctx.addIssue({ code: 'custom', path: ['every'], message: 'must be at least 1s' });
    }
    // A timeout no engine can meet makes every run an abort on the engine (issue 24 #15), and aborts are
    // what NIXL handles worst: a completion gets the time a first token plausibly needs, a GET its round trip.
    const completion = isCompletion(p.kind);
    const min = completion ? MIN_COMPLETION_TIMEOUT_MS : MIN_REQUEST_TIMEOUT_MS;
    if (p.timeout < min) {
      ctx.addIssue({
        code: 'custom',
        path: ['timeout'],
        message: `must be at least ${formatDuration(min)} for a ${p.kind} probe${completion ? ' (a shorter one aborts a completion on the engine every run)' : ''}`,
      });
    }
    if ('onDemandInterval' in p && p.onDemandInterval !== undefined && p.onDemandInterval < 1000) {
      ctx.addIssue({
        code: 'custom',
        path: ['onDemandInterval'],
        message: 'must be at least 1s (each on-demand run is a completion on the engine)',
      });
    }
  });

/** For a field that belongs to some probe kinds only: those kinds (a chat probe's `path` → health, serverinfo). */
export function probeFieldKinds(field: string): string[] {
  return PROBE_KIND_SCHEMAS.filter((s) => field in s.shape).map((s) => s.shape.kind.value);
}

export { DEFAULT_LOG_PACKS, IMPLIED_PACKS, LOG_PACKS, type LogPack, withImpliedPacks } from './log-packs.js';

/**
 * How a log file wraps each line: as written (plain), by the kubelet (cri), by Docker's json-file driver, or as
 * structured records (json, logfmt: rules run on the message); `auto` decides the wrapper per file and reads
 * structured records line by line.
 */
export const LOG_FORMATS = ['plain', 'cri', 'docker', 'json', 'logfmt', 'auto'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
/** What the engine's lines are inside a wrapper (cri, docker) or the journal: records, or text. */
export const STRUCTURED_FORMATS = ['json', 'logfmt', 'auto'] as const;

const keyList = z.array(z.string().min(1).max(64)).min(1).max(8);
/** The keys of a structured record's message, level and time (the first one present is taken). */
export const structuredKeysSchema = z.strictObject({
  message: keyList.default(['message', 'msg', 'event']),
  level: keyList.default(['level', 'levelname']),
  time: keyList.default(['time', 'timestamp', 'ts', 'asctime']),
});

// A journal match is FIELD=VALUE (journalctl(1) MATCHES); the field syntax keeps it from reading as an option.
const journalMatch = z
  .string()
  .regex(/^[A-Z0-9_]+=.*$/, 'a journal match is FIELD=VALUE, e.g. "_SYSTEMD_UNIT=sglang.service"');

export const journalSourceSchema = z
  .strictObject({
    /** systemd unit(s), as `journalctl --unit`. */
    unit: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    /** Field matches, as `journalctl FIELD=VALUE` (ANDed with the units). */
    match: z.array(journalMatch).optional(),
    /** Read this journal directory (a host's /var/log/journal mounted in a container); default the system journal. */
    directory: z.string().min(1).optional(),
    /** Read one journal file (`journalctl --file`); journalctl cannot follow a file, so it is polled. */
    file: z.string().min(1).optional(),
    /** How often a `file` journal is polled. */
    pollInterval: durationOr('1s').refine((ms) => ms >= 100, 'must be at least 100ms'),
  })
  .superRefine((j, ctx) => {
    if (j.unit === undefined && (j.match === undefined || j.match.length === 0)) {
      ctx.addIssue({ code: 'custom', path: ['unit'], message: 'give `unit` and/or `match`' });
    }
    if (j.directory !== undefined && j.file !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['file'],
        message: 'give either `directory` or `file`, not both',
      });
    }
  });

export const logSourceSchema = z
  .strictObject({
    /** The engine role this file belongs to (prefill, decode, router, …); a metric label. */
    service: name('service'),
    /** A file path or a glob (`/var/log/sglang/*.log`, `/var/log/pods/llm_prefill-*\/sglang/*.log`). */
    path: z.string().min(1).optional(),
    /** Lines wrapped by a container runtime are unwrapped before rules run; `auto` decides per file. */
    format: z.enum(LOG_FORMATS).default('plain'),
    /** Read the systemd journal instead of a file. */
    journal: journalSourceSchema.optional(),
    /** The engine's lines inside a wrapper (cri, docker) or the journal are JSON or logfmt records. */
    structured: z.enum(STRUCTURED_FORMATS).optional(),
    /** Keys of a structured record (defaults cover message/msg/event, level/levelname, time/timestamp/ts). */
    keys: structuredKeysSchema.optional(),
    /** The engine writing the log: picks the default `packs` (src/config/log-engines.ts). */
    engine: z.enum(LOG_ENGINES).default('sglang'),
    /** Built-in rule packs (default the engine's, DEFAULT_PACKS); a pack brings the packs of the shared code it uses along (IMPLIED_PACKS). */
    packs: z.array(z.enum(LOG_PACKS)).optional(),
    /** Where to begin when there is no saved offset. */
    from: z.enum(['end', 'start']).default('end'),
    maxLineBytes: z.number().int().min(256).default(65_536),
    /** After a restart, read at most this many bytes that were written while the daemon was down. */
    maxCatchUpBytes: z
      .number()
      .int()
      .min(0)
      .default(256 * 1024 * 1024),
  })
  .superRefine((src, ctx) => {
    if ((src.path === undefined) === (src.journal === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'give either `path` or `journal`' });
    }
    if (src.journal !== undefined && src.format !== 'plain') {
      ctx.addIssue({
        code: 'custom',
        path: ['format'],
        message: '`format` applies to files, not to `journal` (use `structured` for JSON or logfmt entries)',
      });
    }
    if (src.structured !== undefined && !['plain', 'cri', 'docker'].includes(src.format)) {
      ctx.addIssue({
        code: 'custom',
        path: ['structured'],
        message:
          '`structured` is for lines inside cri, docker or the journal; use `format: json|logfmt` for a file of records',
      });
    }
    // Directory wildcards match one path segment each and may not be `**` (see src/sources/logs/tail/dir-glob.ts).
    if (src.path !== undefined && /\*\*/.test(src.path)) {
      ctx.addIssue({
        code: 'custom',
        path: ['path'],
        message: `"**" is not supported; use one "*" per directory level: ${JSON.stringify(src.path)}`,
      });
    }
  })
  // Packs default by the engine (the same default replay and verify take).
  .transform((src) => ({ ...src, packs: withImpliedPacks(src.packs ?? defaultPacks(src.engine)) }));

export const engineScrapeSchema = z.strictObject({
  service: name('service'),
  /**
   * The engine's Prometheus endpoint (sglang:*, vllm:*, llamacpp:*, tgi_*, dynamo_frontend_*, the router's
   * smg_*), or Ollama's /api/ps with `format: ollama`.
   */
  metrics: httpUrl.pipe(noCredentials('an engine scrape sends no credentials (scrape it on loopback)')),
  /** What `metrics` answers: Prometheus text, or Ollama's /api/ps JSON (Ollama has no /metrics). */
  format: z.enum(['prometheus', 'ollama']).default('prometheus'),
  /** At least 1s: each scrape parses a body that can be megabytes (a 1 ms interval was accepted). */
  every: durationOr('5s').refine((ms) => ms >= 1000, 'must be at least 1s'),
  timeout: durationOr('3s').refine(
    (ms) => ms >= MIN_REQUEST_TIMEOUT_MS,
    `must be at least ${MIN_REQUEST_TIMEOUT_MS}ms`,
  ),
});

export const detectSchema = z
  .strictObject({
    /** Consecutive failed chat probes on a hop before the target is wedged. */
    wedgeAfter: z.number().int().min(1).default(2),
    /** Consecutive passing rounds before a degraded/wedged/down target is ok again. */
    recoverAfter: z.number().int().min(1).default(2),
    /** Consecutive failed health probes before the target is down. */
    downAfter: z.number().int().min(1).default(2),
    /** Running or queued requests with no progress for this long is a stall. */
    stallAfter: durationOr('60s'),
    /** Abort lines in `abortStormWindow` that make a storm (degraded). */
    abortStormCount: z.number().int().min(1).default(20),
    abortStormWindow: durationOr('60s'),
    /** Minimum time between two log-triggered confirmation rounds. */
    confirmInterval: durationOr('10s').refine((ms) => ms >= 1000, 'must be at least 1s'),
    /** A completion probe still in flight this long after a critical log line confirms it (the probe runs on). */
    confirmAfter: durationOr('5s'),
    /**
     * A completion probe in flight this long is hung before its timeout fires: when nothing has finished since it
     * started, the target is wedged (completions_hung); on its own slot it counts as a failure.
     */
    hangAfter: durationOr('20s'),
    /**
     * Intermittent failures: `intermittentFailures` failed runs among a completion slot's last `intermittentWindow`
     * runs is degraded (`intermittent`) even when no two fail in a row; a window that is mostly failures on every
     * completion slot is wedged.
     */
    intermittentFailures: z.number().int().min(1).default(3),
    intermittentWindow: z.number().int().min(2).max(100).default(10),
    /**
     * PD bootstrap/prealloc/transfer queues above zero this long while the engine runs nothing and completions pass
     * are leaked slots (degraded, `queue_leak`): the pool runs dry hours later.
     */
    leakAfter: durationOr('10m'),
    /**
     * A crawl: an engine's tokens per second per running request below this fraction of its own trailing baseline
     * for `stallAfter`, with requests running (`engine_crawling`). 0.1 = a 10× collapse.
     */
    crawlFraction: z.number().gt(0).lt(1).default(0.1),
    /**
     * The engine's own failure counters (KV transfers failed or expired, requests aborted or preempted beyond our
     * own probes'): `failureCount` of one kind within `failureWindow` name the diagnosis of that kind.
     */
    failureCount: z.number().int().min(1).default(3),
    failureWindow: durationOr('60s'),
    /**
     * A request in flight this long (the router's oldest in-flight age) while completions pass is orphaned
     * (`requests_orphaned`): nothing is finishing it.
     */
    orphanAfter: durationOr('10m'),
  })
  .refine((d) => d.intermittentFailures <= d.intermittentWindow, {
    message: 'intermittentFailures must not exceed intermittentWindow',
    path: ['intermittentFailures'],
  });

export const remediateSchema = z.strictObject({
  /** argv, run without a shell; WEDGEWATCH_TARGET and WEDGEWATCH_DIAGNOSIS are set in its environment. */
  command: z.array(z.string().min(1)).min(1),
  dryRun: z.boolean().default(true),
  /** Time in `wedged` before acting. */
  after: durationOr('2m'),
  cooldown: durationOr('15m'),
  maxPerHour: z.number().int().min(1).default(2),
  timeout: durationOr('2m'),
  /** Also act on `down` (off by default: a down engine is usually being restarted by someone). */
  onDown: z.boolean().default(false),
});

export const targetSchema = z.strictObject({
  name: name('target'),
  /** Hops a user request crosses, outermost first (proxy, router, engine). */
  endpoints: z.array(endpointSchema).min(1, 'a target needs at least one endpoint'),
  model: z.string().min(1).default('default'),
  probes: z.array(probeSchema).default([]),
  logs: z.array(logSourceSchema).default([]),
  engines: z.array(engineScrapeSchema).default([]),
  detect: detectSchema.default(detectSchema.parse({})),
  /**
   * Per-target objectives (issue 41): the engine's inter-token latency and queue time. Absent ones are learned
   * from the engine's first healthy window (src/core/reduce/objectives.ts) and kept in stateDir/baselines.json.
   */
  objectives: z
    .strictObject({
      interTokenLatency: duration().optional(),
      queueTime: duration().optional(),
    })
    .optional(),
  remediate: remediateSchema.optional(),
  /** Take the target's worker out of the gateway while it is not ready, put it back on recovery (issue 43). */
  drain: drainSchema.optional(),
  /** Files whose changes are journaled (serve scripts, unit files, env files). */
  watch: z.array(z.string().min(1)).default([]),
  /** What the node tells us: the engine's processes, stacks, GPUs and collectives (docs/node-evidence.md). */
  node: nodeSchema.optional(),
});

/** Engine gauges a rule's `extract` may feed (src/sources/logs/engine-lines.ts maps them to metrics). */
export const ENGINE_GAUGES = [
  'running',
  'queued',
  'transferQueue',
  'preallocQueue',
  'genThroughput',
  'tokenUsage',
  'bytesPerFullToken',
] as const;
export type EngineGauge = (typeof ENGINE_GAUGES)[number];

export const ruleSchema = z.strictObject({
  name: name('rule'),
  severity: z.enum(['info', 'warning', 'critical']),
  /**
   * What the line means, exported as the `class` label of log_events_total: alerts select on it (e.g.
   * thread_death, kv_bootstrap_dead, abort), never on rule names. A user rule without one is `custom`.
   */
  class: logEventClassSchema()
    .transform((c) => c as LogEventClass)
    .default('custom'),
  /** A regular expression; named groups become event fields. */
  match: z.string().min(1),
  /** Named groups to export as engine gauges: group name → gauge (running, queued, …). */
  extract: z.record(z.string(), z.enum(ENGINE_GAUGES)).optional(),
  /** Multi-line rule: `match` starts it, `follows.match` must appear within `follows.within` lines. */
  follows: z
    .strictObject({
      match: z.string().min(1),
      within: z.number().int().min(1).max(200).default(10),
    })
    .optional(),
  /** Only apply to these services (default: all). */
  services: z.array(z.string()).optional(),
});

// Incident capture (issue 19): what is kept when a target goes bad, before remediation restarts it.
/** Placeholders a capture command's argv may use; filled by wedgewatch, never by the environment. */
export const CAPTURE_PLACEHOLDERS = ['PID', 'TARGET', 'INCIDENT_DIR'] as const;

export const captureCommandSchema = z
  .strictObject({
    name: name('capture command'),
    /** argv, no shell; `${PID}` runs it once per process found by pidFile/processMatch. */
    argv: z.array(z.string().min(1)).min(1),
    /** Only for these targets (default: every target). */
    targets: z.array(z.string()).optional(),
    /** A file holding the engine's process id (one integer). */
    pidFile: z.string().min(1).optional(),
    /** A regular expression over /proc/<pid>/cmdline (arguments joined by spaces). */
    processMatch: z.string().min(1).optional(),
    timeout: durationOr('10s'),
    maxOutputBytes: z
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
  })
  .superRefine((c, ctx) => {
    const usesPid = c.argv.some((a) => a.includes('${PID}'));
    if (usesPid && c.pidFile === undefined && c.processMatch === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['argv'],
        message: '${PID} needs pidFile or processMatch to say which process',
      });
    }
    if (c.processMatch !== undefined) {
      try {
        new RegExp(c.processMatch);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['processMatch'], message: (err as Error).message });
      }
    }
  });

export const incidentsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** States (wedged, down, degraded) or diagnoses (e.g. keepalive_only) whose onset is captured. */
  on: z.array(stateOrDiagnosisSchema()).min(1).default(['wedged']),
  /** Log lines from this long before the first signal are kept. */
  window: durationOr('5m'),
  /** The whole capture's deadline; remediation waits at most this long for it. */
  captureTimeout: durationOr('20s'),
  /** Per HTTP fetch (engine /metrics, /get_server_info), within captureTimeout. */
  fetchTimeout: durationOr('5s'),
  /** Per log file: the newest bytes of the window beyond this are kept, older ones dropped. */
  maxLogBytes: z
    .number()
    .int()
    .min(4096)
    .default(8 * 1024 * 1024),
  retention: z
    .strictObject({
      count: z.number().int().min(1).default(20),
      bytes: z
        .number()
        .int()
        .min(1024 * 1024)
        .default(200 * 1024 * 1024),
    })
    .default({ count: 20, bytes: 200 * 1024 * 1024 }),
  /** Capture is skipped (and counted) when the state directory's file system has less free space. */
  minFreeBytes: z
    .number()
    .int()
    .min(0)
    .default(64 * 1024 * 1024),
  commands: z.array(captureCommandSchema).default([]),
});

export const webSchema = z.strictObject({
  listenAddress: z
    .string()
    .default(':9787')
    .refine((a) => listenAddressProblem(a) === undefined, {
      error: (iss) => listenAddressProblem(String(iss.input)) ?? 'invalid listen address',
    }),
  /** Open HTTP connections beyond this are refused. */
  maxConnections: z.number().int().min(8).default(512),
  /** Enables POST /-/reload and the remediation pause/resume endpoints. */
  enableLifecycle: z.boolean().default(false),
  /**
   * The URL browsers reach the daemon by when it is not its listen address (a reverse proxy, a DNS name), as
   * Prometheus's --web.external-url: write endpoints and /probe accept that Origin; --web.external-url wins.
   */
  externalURL: z
    .url({ protocol: /^https?$/, error: 'expected an absolute http:// or https:// URL' })
    .optional(),
  /**
   * Who may run completion probes (chat, toolcall) through GET /probe: `any` caller, only `authenticated` ones
   * (basic auth users in --web.config.file; refused when there are none), or nobody (`off`). Health and
   * serverinfo probes stay open (each probe still runs at most once per `onDemandInterval`).
   */
  onDemandCompletions: z.enum(['any', 'authenticated', 'off']).default('any'),
  /** Which states GET /ready and the agent answer as ready (src/outputs/traffic/readiness.ts). */
  readiness: readinessSchema.default(readinessSchema.parse({})),
});

export const configSchema = z
  .strictObject({
    web: webSchema.default(webSchema.parse({})),
    /** Offsets and the event journal live here. */
    stateDir: z.string().min(1).default('/var/lib/wedgewatch'),
    targets: z.array(targetSchema).min(1, 'at least one target is required'),
    rules: z.array(ruleSchema).default([]),
    incidents: incidentsSchema.default(incidentsSchema.parse({})),
    /** Backends that serve the same traffic: the last ones in rotation are never taken out (issue 43). */
    pools: z.array(poolSchema).default([]),
    /** HAProxy's agent-check port: `up`/`down` per server from the targets' readiness. */
    agent: agentSchema.optional(),
    /**
     * Probe endpoints marked `shared`. Off on all daemons but one. A string "true"/"false" is accepted so
     * one config can take it from the environment: `probeShared: ${WEDGEWATCH_PROBE_SHARED}`.
     */
    probeShared: z
      .union([z.boolean(), z.enum(['true', 'false'])], {
        error: 'expected true or false (or "${VAR}" that expands to one)',
      })
      .transform((v) => v === true || v === 'true')
      .default(true),
  })
  .superRefine((cfg, ctx) => {
    const seen = new Map<string, number>();
    cfg.targets.forEach((t, i) => {
      const prev = seen.get(t.name);
      if (prev !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['targets', i, 'name'],
          message: `duplicate target name "${t.name}" (also targets[${prev}])`,
        });
      } else seen.set(t.name, i);
      uniqueNames(ctx, ['targets', i, 'endpoints'], t.endpoints);
      uniqueNames(ctx, ['targets', i, 'probes'], t.probes);
      // Two sources on one path would share one saved offset and count every line twice.
      const paths = new Map<string, number>();
      t.logs.forEach((l, j) => {
        if (l.path === undefined) return;
        const prev = paths.get(l.path);
        if (prev !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['targets', i, 'logs', j, 'path'],
            message: `the same path as targets[${i}].logs[${prev}]`,
          });
        } else paths.set(l.path, j);
      });
      const hops = new Set(t.endpoints.map((e) => e.name));
      t.probes.forEach((p, j) =>
        p.endpoints?.forEach((e, k) => {
          if (!hops.has(e)) {
            ctx.addIssue({
              code: 'custom',
              path: ['targets', i, 'probes', j, 'endpoints', k],
              message: `no endpoint named "${e}" in this target (have: ${[...hops].join(', ')})`,
            });
          }
        }),
      );
    });
    uniqueNames(ctx, ['rules'], cfg.rules);
    checkTraffic(cfg, ctx);
    if (cfg.agent !== undefined) {
      const why = listenAddressProblem(cfg.agent.listenAddress);
      if (why !== undefined) ctx.addIssue({ code: 'custom', path: ['agent', 'listenAddress'], message: why });
      else if (
        listenAddressProblem(cfg.web.listenAddress) === undefined &&
        sharePort(cfg.agent.listenAddress, cfg.web.listenAddress)
      )
        ctx.addIssue({
          code: 'custom',
          path: ['agent', 'listenAddress'],
          message: `the same port as web.listenAddress (${JSON.stringify(cfg.web.listenAddress)}): the agent needs a port of its own`,
        });
    }
    uniqueNames(ctx, ['incidents', 'commands'], cfg.incidents.commands);
    const targets = new Set(cfg.targets.map((t) => t.name));
    cfg.incidents.commands.forEach((c, i) =>
      c.targets?.forEach((t, j) => {
        if (!targets.has(t))
          ctx.addIssue({
            code: 'custom',
            path: ['incidents', 'commands', i, 'targets', j],
            message: `no target named "${t}"`,
          });
      }),
    );
  })
  .transform((cfg) => (cfg.probeShared ? cfg : withoutSharedProbes(cfg)));

/** The config a daemon with `probeShared: false` runs: its probes skip the shared hops. */
function withoutSharedProbes<
  C extends {
    targets: { endpoints: { name: string; shared: boolean }[]; probes: { endpoints?: string[] }[] }[];
  },
>(cfg: C): C {
  return {
    ...cfg,
    targets: cfg.targets.map((t) => {
      const shared = new Set(t.endpoints.filter((e) => e.shared).map((e) => e.name));
      if (shared.size === 0) return t;
      const probes = t.probes
        .map((p) => ({
          ...p,
          endpoints: (p.endpoints ?? t.endpoints.map((e) => e.name)).filter((e) => !shared.has(e)),
        }))
        .filter((p) => p.endpoints.length > 0);
      return { ...t, probes };
    }),
  };
}

function uniqueNames(ctx: z.RefinementCtx, path: (string | number)[], items: { name: string }[]) {
  const seen = new Set<string>();
  items.forEach((it, i) => {
    if (seen.has(it.name)) {
      ctx.addIssue({ code: 'custom', path: [...path, i, 'name'], message: `duplicate name "${it.name}"` });
    }
    seen.add(it.name);
  });
}

export type Config = z.output<typeof configSchema>;
export type TargetConfig = z.output<typeof targetSchema>;
export type EndpointConfig = z.output<typeof endpointSchema>;
export type ProbeConfig = z.output<typeof probeSchema>;
export type ServerinfoExpect = z.output<typeof serverinfoExpectSchema>;
/** The config of one probe kind. */
export type ProbeOf<K extends ProbeConfig['kind']> = Extract<ProbeConfig, { kind: K }>;
/** The config of a kind that runs a completion. */
export type CompletionProbeConfig = ProbeOf<(typeof COMPLETION_KINDS)[number]>;
export type LogSourceConfig = z.output<typeof logSourceSchema>;
export type JournalSourceConfig = z.output<typeof journalSourceSchema>;
export type EngineScrapeConfig = z.output<typeof engineScrapeSchema>;
export type DetectConfig = z.output<typeof detectSchema>;
// The core owns the thresholds' shape: what the schema parses must be what the core judges with.
export const detectFitsCore = (d: DetectConfig): DetectSettings => d;
export type RemediateConfig = z.output<typeof remediateSchema>;
export type RuleConfig = z.output<typeof ruleSchema>;
export type IncidentsConfig = z.output<typeof incidentsSchema>;
export type CaptureCommandConfig = z.output<typeof captureCommandSchema>;
