// The engine's processes as evidence (issue 42): one part per `node.processes` entry, reading /proc every
// `node.every` (./processes.ts), and the Python names of a process's threads learnt once from a non-blocking py-spy
// dump when stacks are on (./stacks.ts learnNames), so a lost thread is named as the engine named it.
import type { NodeSignal } from '../../core/node-signals.js';
import { ServiceSampler } from './processes.js';
import type { NodeContext, NodeSourceDef } from './types.js';
import { learnNames } from './stacks.js';

export const processesSource: NodeSourceDef = {
  parts(ctx: NodeContext) {
    return ctx.node.processes.map((cfg) => {
      const sampler = new ServiceSampler(cfg, ctx.node.maxThreads, ctx.env);
      ctx.samplers.set(cfg.service, sampler);
      const named = new Set<string>();
      return {
        source: 'processes' as const,
        name: cfg.service,
        every: ctx.node.every,
        timeout: ctx.node.timeout,
        async read(now: number): Promise<NodeSignal[]> {
          const r = await sampler.read(now);
          const base = {
            kind: 'node' as const,
            target: ctx.target,
            service: cfg.service,
            source: 'processes' as const,
            time: now,
          };
          if (r.error !== undefined) return [{ ...base, error: r.error }];
          if (ctx.node.stacks.enabled) void learnNames(ctx, sampler, named);
          return [
            {
              ...base,
              processes: r.processes,
              ...(r.lost.length > 0 ? { lost: r.lost } : {}),
              ...(r.restarted !== undefined ? { restarted: r.restarted } : {}),
            },
          ];
        },
      };
    });
  },
};
