// Collectives (issue 42): NCCL's RAS STATUS on localhost every `node.nccl.every` (./nccl-ras.ts): ranks dead or
// unreachable, and collectives whose counts differ across ranks and did not move since the previous query.
import type { NodeSignal } from '../../core/node-signals.js';
import { queryRas, readRasJson, stuckCollectives, type RasStatus } from './nccl-ras.js';
import type { NodeContext, NodeSourceDef } from './types.js';

export const ncclSource: NodeSourceDef = {
  parts(ctx: NodeContext) {
    const n = ctx.node.nccl;
    if (n === undefined) return [];
    let prev: RasStatus['counts'] | undefined;
    return [
      {
        source: 'nccl' as const,
        name: n.ras,
        every: n.every,
        timeout: n.timeout,
        async read(now: number): Promise<NodeSignal[]> {
          const base = {
            kind: 'node' as const,
            target: ctx.target,
            service: 'nccl',
            source: 'nccl' as const,
            time: now,
          };
          const status = readRasJson(await queryRas(n.ras, n.timeout, n.maxBytes));
          const stuck = stuckCollectives(status.counts, prev);
          prev = status.counts;
          return [{ ...base, missing: status.missing, stuck }];
        },
      },
    ];
  },
};
