// The `node:` block of a target (issue 42): what the daemon reads of the engine's own node — its processes in /proc,
// their Python stacks on a wedge (py-spy), the GPUs (DCGM exporter, nvidia-smi) and NCCL's RAS socket. Every part is
// optional and off unless written; each runs on its own timer with its own timeout (src/sources/node/), never on the
// probes' or the log path's. Strict like the rest of the schema: a typo is an error, not a silently ignored key.
import { z } from 'zod';
import { durationOr } from './duration.js';

const serviceName = z
  .string({ error: 'expected a service name (a string)' })
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a service name may use letters, digits and _.:- (1 to 64 characters)');

/** systemd unit names (systemd.unit(5)): letters, digits and `:-_.\@`, with a unit type suffix. */
const UNIT_RE = /^[A-Za-z0-9:_.\\@-]{1,240}\.(service|scope|slice)$/;
/** A container id as docker, containerd and CRI-O print it: 12 to 64 hex digits. */
const CONTAINER_RE = /^[0-9a-f]{12,64}$/;

/** Where one service's engine processes are found; exactly one way per entry. */
export const NODE_FINDERS = ['pidFile', 'systemdUnit', 'port', 'cgroup', 'container'] as const;
export type NodeFinder = (typeof NODE_FINDERS)[number];

export const nodeProcessSchema = z
  .strictObject({
    /** The engine service these processes are (prefill, decode, …): the name the evidence and the cause use. */
    service: serviceName,
    /** A file holding the engine's main process id; its descendants (scheduler ranks) are read too. */
    pidFile: z.string().min(1).optional(),
    /** A systemd unit whose cgroup (v2, under /sys/fs/cgroup) holds the engine. */
    systemdUnit: z
      .string()
      .regex(UNIT_RE, 'expected a systemd unit name like "sglang-prefill.service"')
      .optional(),
    /** The TCP port the engine listens on (found in /proc/net/tcp{,6}, then the process holding that socket). */
    port: z.number().int().min(1).max(65535).optional(),
    /** A cgroup v2 directory (absolute, or relative to /sys/fs/cgroup) holding the engine's processes. */
    cgroup: z
      .string()
      .min(1)
      .refine((p) => !p.split('/').includes('..'), 'must not contain ".."')
      .optional(),
    /** A container id (docker, containerd, CRI-O): the processes whose /proc/<pid>/cgroup names it. */
    container: z.string().regex(CONTAINER_RE, 'expected a container id (12 to 64 hex digits)').optional(),
    /**
     * Whether the processes are Python (py-spy can dump them): `auto` reads /proc/<pid>/exe (python3.x and the
     * like); `true`/`false` say so for an interpreter under another name.
     */
    python: z.union([z.boolean(), z.literal('auto')]).default('auto'),
  })
  .superRefine((p, ctx) => {
    const given = NODE_FINDERS.filter((k) => p[k] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message:
          given.length === 0
            ? `say where the processes are: one of ${NODE_FINDERS.join(', ')}`
            : `give one of ${NODE_FINDERS.join(', ')}, not ${given.join(' and ')}`,
      });
  });

export const nodeStacksSchema = z.strictObject({
  /** Dump every engine Python process with py-spy on a wedge, before remediation (needs ptrace rights). */
  enabled: z.boolean().default(false),
  /** The py-spy executable (a name on PATH or a path). */
  pySpy: z.string().min(1).default('py-spy'),
  /** `--native`: C/C++ frames too (slower, and needs the process's binaries readable). */
  native: z.boolean().default(false),
  /** Per process; the incident capture's own deadline bounds all of them. */
  timeout: durationOr('5s'),
  /** Per process: output past this is cut (and says so). */
  maxBytes: z
    .number()
    .int()
    .min(4096)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
  /** Processes dumped per capture, at most. */
  maxProcesses: z.number().int().min(1).max(64).default(16),
});

export const nodeGpuSchema = z
  .strictObject({
    /** dcgm-exporter's /metrics (DCGM_FI_DEV_XID_ERRORS, utilisation, memory, NVLink). */
    dcgm: z
      .string()
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL like "http://127.0.0.1:9400/metrics"' })
      .optional(),
    /** Run `nvidia-smi --query-gpu=… --format=csv` (a name on PATH or a path) when no DCGM exporter is scraped. */
    nvidiaSmi: z.string().min(1).optional(),
    every: durationOr('10s').refine((ms) => ms >= 1000, 'must be at least 1s'),
    timeout: durationOr('3s'),
  })
  .refine((g) => g.dcgm !== undefined || g.nvidiaSmi !== undefined, {
    message: 'say where GPU readings come from: dcgm, nvidiaSmi, or both',
  });

export const nodeNcclSchema = z.strictObject({
  /** NCCL's RAS client socket (NCCL_RAS_ADDR; NCCL's default is localhost:28028). Loopback only. */
  ras: z
    .string()
    .regex(
      /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\]):\d{1,5}$/,
      'expected a loopback host:port like "127.0.0.1:28028"',
    )
    .default('127.0.0.1:28028'),
  every: durationOr('15s').refine((ms) => ms >= 1000, 'must be at least 1s'),
  /** Per query (connect, handshake, STATUS to its end); NCCL's own collection can take seconds. */
  timeout: durationOr('10s'),
  /** A STATUS answer past this is cut and not read. */
  maxBytes: z
    .number()
    .int()
    .min(4096)
    .max(64 * 1024 * 1024)
    .default(4 * 1024 * 1024),
});

export const nodeSchema = z
  .strictObject({
    /** The engine's processes, one entry per service. */
    processes: z.array(nodeProcessSchema).default([]),
    /** How often /proc is read (threads, CPU per thread, state, RSS). */
    every: durationOr('5s').refine((ms) => ms >= 1000, 'must be at least 1s'),
    /** A read of /proc that takes longer is abandoned for the round (and counted). */
    timeout: durationOr('2s'),
    /** Threads read per process, at most (the count is exact beyond it; only these are named and timed). */
    maxThreads: z.number().int().min(8).max(65536).default(1024),
    stacks: nodeStacksSchema.default(nodeStacksSchema.parse({})),
    gpus: nodeGpuSchema.optional(),
    nccl: nodeNcclSchema.optional(),
  })
  .superRefine((n, ctx) => {
    const seen = new Map<string, number>();
    n.processes.forEach((p, i) => {
      const prev = seen.get(p.service);
      if (prev !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['processes', i, 'service'],
          message: `service "${p.service}" is already found by processes[${prev}]`,
        });
      else seen.set(p.service, i);
    });
    if (n.stacks.enabled && n.processes.length === 0)
      ctx.addIssue({ code: 'custom', path: ['stacks', 'enabled'], message: 'stacks need processes to dump' });
  });

export type NodeConfig = z.output<typeof nodeSchema>;
export type NodeProcessConfig = z.output<typeof nodeProcessSchema>;
export type NodeStacksConfig = z.output<typeof nodeStacksSchema>;
export type NodeGpuConfig = z.output<typeof nodeGpuSchema>;
export type NodeNcclConfig = z.output<typeof nodeNcclSchema>;
