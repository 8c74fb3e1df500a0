// The traffic path (issue 43): which states are ready, which backends form a pool (the last one in rotation is
// never taken out), HAProxy's agent-check port, and draining a worker through the SGLang model gateway's API.
// Beside schema.ts so that file does not grow with it; configSchema checks the names across blocks.
import { isIP } from 'node:net';
import { z } from 'zod';
import { TARGET_STATES } from '../core/vocabulary.js';
import { durationOr } from './duration.js';

const NOT_READY_EVER = ['wedged', 'down'] as const;

export const readinessSchema = z.strictObject({
  /**
   * States that answer 200 on /ready and `up` to HAProxy's agent. `unknown` (no verdict yet, at start-up) is not
   * ready by default, as Kubernetes starts every pod unready until its probe passes.
   */
  ready: z
    .array(z.enum(TARGET_STATES))
    .min(1)
    .default(['ok', 'degraded'])
    .refine((states) => !states.some((s) => (NOT_READY_EVER as readonly string[]).includes(s)), {
      message:
        'wedged and down can never be ready: a load balancer would keep sending user requests to a backend that hangs or refuses them',
    }),
});

const memberSchema = z.strictObject({
  target: z.string().min(1),
  /** One hop of the target (its own probe slots); the whole target when absent. */
  endpoint: z.string().min(1).optional(),
});

export const poolSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a pool name may use letters, digits and _.:- (1 to 64 characters)'),
  /** Backends that serve the same traffic (one HAProxy backend, one gateway's workers of one type). */
  members: z.array(memberSchema).min(1, 'a pool needs at least one member'),
  /**
   * The fewest members kept in rotation however bad they look: taking the last one out turns a partial outage
   * into a full one (docs/decisions.md, issue 43).
   */
  minInRotation: z.number().int().min(1).default(1),
});

/** An address HAProxy connects from: one IPv4 or IPv6 address. */
const ipAddress = z.string().refine((a) => isIP(a) !== 0, {
  error: (iss) => `expected an IP address, got ${JSON.stringify(iss.input)}`,
});

export const agentServerSchema = z.strictObject({
  /**
   * What HAProxy's `agent-send` says for this server (the line before "\n"): printable, no spaces. HAProxy
   * sends the string verbatim on connect (configuration.txt, "agent-send").
   */
  name: z
    .string()
    .regex(/^[\x21-\x7e]{1,64}$/, 'an agent-send name is 1 to 64 printable characters without spaces')
    .optional(),
  /** The address HAProxy's agent check connects from (its `source` for this server). */
  from: ipAddress.optional(),
  target: z.string().min(1),
  endpoint: z.string().min(1).optional(),
});

export const agentSchema = z
  .strictObject({
    /** host:port of the agent-check port (HAProxy's `agent-port`, with `agent-addr` when it is not the server's). */
    listenAddress: z.string().min(1),
    /** A connection's whole life: the agent-send line must arrive within it, else the address decides or it closes. */
    timeout: durationOr('2s'),
    /** Open agent connections beyond this are closed at once (a check per server every agent-inter). */
    maxConnections: z.number().int().min(1).max(10_000).default(256),
    /**
     * How a server that is not ready is taken out: `down` (its operational state; the agent's `up` brings it back
     * without touching an operator's drain or maint), `drain` or `maint` (administrative; `ready` brings it back).
     */
    unready: z.enum(['down', 'drain', 'maint']).default('down'),
    /** The weight (percent of the configured one) while degraded but ready; absent, the weight is left alone. */
    degradedWeight: z.number().int().min(0).max(100).optional(),
    servers: z.array(agentServerSchema).min(1, 'the agent needs at least one server'),
  })
  .superRefine((a, ctx) => {
    const names = new Map<string, number>();
    const addresses = new Map<string, number>();
    a.servers.forEach((s, i) => {
      if (s.name === undefined && s.from === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['servers', i],
          message: 'give name (what agent-send says) or from (the address HAProxy connects from), or both',
        });
      if (s.name !== undefined) {
        const prev = names.get(s.name);
        if (prev !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['servers', i, 'name'],
            message: `the same name as servers[${prev}]`,
          });
        else names.set(s.name, i);
      }
      // Two servers that only an address tells apart must not share it: the agent could not say which one asks.
      if (s.from !== undefined && s.name === undefined) {
        const prev = addresses.get(s.from);
        if (prev !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['servers', i, 'from'],
            message: `the same address as servers[${prev}], and neither has a name to tell them apart`,
          });
        else addresses.set(s.from, i);
      }
    });
  });

/** The SGLang model gateway's worker types (protocols/worker_spec.rs WorkerConfigRequest.worker_type). */
export const GATEWAY_WORKER_TYPES = ['regular', 'prefill', 'decode'] as const;

export const drainSchema = z.strictObject({
  /** Whose API: the SGLang model gateway (sgl-model-gateway, formerly sgl-router) `/workers` API. */
  gateway: z.enum(['sglang']).default('sglang'),
  /** The gateway's base URL (its control plane: /workers). */
  url: z.string().url({ protocol: /^https?$/, error: 'expected an http(s) URL of the gateway' }),
  /** This target's worker URL exactly as the gateway lists it (GET /workers `url`). */
  worker: z
    .string()
    .url({ protocol: /^https?$/, error: 'expected the http(s) URL the gateway knows the worker by' }),
  workerType: z.enum(GATEWAY_WORKER_TYPES).default('regular'),
  /** A prefill worker's bootstrap port, sent when it is added back. */
  bootstrapPort: z.number().int().min(1).max(65535).optional(),
  /** The gateway's control-plane key (sent as a bearer token); use ${ENV_VAR}. */
  bearerToken: z.string().min(1).optional(),
  /** Journal and count what would be done, call nothing. On by default, as `remediate`. */
  dryRun: z.boolean().default(true),
  /** Drains per `window` for this target; past it the worker stays in and the skip is journaled once. */
  maxPerWindow: z.number().int().min(1).default(4),
  window: durationOr('1h'),
  /** Each gateway call's deadline. */
  timeout: durationOr('5s'),
});

export type ReadinessConfig = z.output<typeof readinessSchema>;
export type PoolConfig = z.output<typeof poolSchema>;
export type AgentConfig = z.output<typeof agentSchema>;
export type AgentServerConfig = z.output<typeof agentServerSchema>;
export type DrainConfig = z.output<typeof drainSchema>;

/** Cross-block checks: every member, agent server and drain names a target (and hop) that exists. */
export function checkTraffic(
  cfg: {
    targets: { name: string; endpoints: { name: string }[]; drain?: unknown }[];
    pools: PoolConfig[];
    agent?: AgentConfig;
  },
  ctx: z.RefinementCtx,
): void {
  const hops = new Map(cfg.targets.map((t) => [t.name, t.endpoints.map((e) => e.name)]));
  const member = (path: (string | number)[], target: string, endpoint: string | undefined) => {
    const have = hops.get(target);
    if (have === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [...path, 'target'],
        message: `no target named "${target}" (have: ${[...hops.keys()].join(', ')})`,
      });
      return;
    }
    if (endpoint !== undefined && !have.includes(endpoint))
      ctx.addIssue({
        code: 'custom',
        path: [...path, 'endpoint'],
        message: `no endpoint named "${endpoint}" in target "${target}" (have: ${have.join(', ')})`,
      });
  };
  const pooled = new Map<string, string>();
  const poolNames = new Set<string>();
  cfg.pools.forEach((p, i) => {
    if (poolNames.has(p.name))
      ctx.addIssue({
        code: 'custom',
        path: ['pools', i, 'name'],
        message: `duplicate pool name "${p.name}"`,
      });
    poolNames.add(p.name);
    if (p.minInRotation > p.members.length)
      ctx.addIssue({
        code: 'custom',
        path: ['pools', i, 'minInRotation'],
        message: `${p.minInRotation} is more than the pool's ${p.members.length} members`,
      });
    p.members.forEach((m, j) => {
      member(['pools', i, 'members', j], m.target, m.endpoint);
      const key = memberKey(m.target, m.endpoint);
      const prev = pooled.get(key);
      if (prev !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['pools', i, 'members', j],
          message: `${key} is already a member of pool "${prev}": a backend belongs to one pool`,
        });
      else pooled.set(key, p.name);
    });
  });
  cfg.agent?.servers.forEach((s, i) => member(['agent', 'servers', i], s.target, s.endpoint));
  cfg.targets.forEach((t, i) => {
    if (t.drain === undefined) return;
    const inPool = [...pooled.keys()].some((k) => k === t.name || k.startsWith(`${t.name}/`));
    if (!inPool)
      ctx.addIssue({
        code: 'custom',
        path: ['targets', i, 'drain'],
        message:
          'a drained target must be a member of a pool (pools[].members), so the last healthy backend is never drained',
      });
  });
}

/** "target" or "target/endpoint": how readiness, pools and the agent name a backend. */
export function memberKey(target: string, endpoint?: string): string {
  return endpoint === undefined ? target : `${target}/${endpoint}`;
}
