// The reducer's node case (issue 42): remembers what the node sources read — processes, lost threads, GPU faults,
// missing ranks, stack summaries — and journals each new finding once. It judges nothing: the candidates in
// src/core/verdict/candidates/node.ts name a diagnosis from this memory only where probes already fail.
import type { NodeSignal } from '../node-signals.js';
import { NODE_KEEP, type NodeMemory } from '../node-memory.js';
import type { DetectEvent, TargetMemory } from '../memory.js';
import { xidText } from '../xid.js';
import { stopped, stuckText } from '../node-read.js';

const push = <T>(list: T[], item: T) => {
  list.push(item);
  while (list.length > NODE_KEEP) list.shift();
};

export function onNode(s: TargetMemory, signal: NodeSignal, now: number, events: DetectEvent[]): void {
  const n: NodeMemory = (s.node ??= { services: {}, lost: [], faults: [] });
  const note = (what: Extract<DetectEvent, { type: 'node' }>['what'], text: string) =>
    events.push({ type: 'node', at: now, service: signal.service, what, text });
  switch (signal.source) {
    case 'processes': {
      const before = n.services[signal.service];
      if (signal.error !== undefined) {
        if (before?.error !== signal.error) note('source_error', `${signal.service}: ${signal.error}`);
        n.services[signal.service] = { at: now, processes: [], error: signal.error };
        return;
      }
      const processes = signal.processes ?? [];
      for (const p of processes) {
        const old = before?.processes.find((o) => o.pid === p.pid);
        if (stopped(p.state) && (old === undefined || !stopped(old.state)))
          note('process_stopped', `${signal.service} ${p.name} (pid ${p.pid}) is in state ${p.state}`);
      }
      n.services[signal.service] = { at: now, processes };
      for (const t of signal.lost ?? []) {
        push(n.lost, { ...t, service: signal.service });
        note('thread_lost', `${signal.service} lost thread ${t.name} (tid ${t.tid}) of pid ${t.pid}`);
      }
      if (signal.restarted !== undefined)
        note(
          'process_restarted',
          `${signal.service} restarted: pid ${signal.restarted.from} → ${signal.restarted.to}`,
        );
      return;
    }
    case 'gpus': {
      const gpus = signal.gpus ?? [];
      n.gpus = { at: now, gpus };
      for (const g of gpus) {
        const texts = [
          ...(g.xidNew === true && g.xid !== undefined && g.xid !== 0 ? [xidText(g.xid)] : []),
          ...(g.errorsNew !== undefined && g.errorsNew > 0
            ? [`${g.errorsNew} new uncorrected ECC or NVLink errors`]
            : []),
        ];
        for (const text of texts) {
          push(n.faults, { gpu: g.gpu, ...(g.uuid !== undefined ? { uuid: g.uuid } : {}), text, at: now });
          note('gpu_fault', `GPU ${g.gpu}: ${text}`);
        }
      }
      return;
    }
    case 'nccl': {
      const ranks = signal.missing ?? [];
      const stuck = signal.stuck ?? [];
      const known = new Set((n.missing?.ranks ?? []).map((r) => `${r.comm}/${r.rank}/${r.dead}`));
      for (const r of ranks)
        if (!known.has(`${r.comm}/${r.rank}/${r.dead}`))
          note(
            'rank_missing',
            `NCCL communicator ${r.comm}: rank ${r.rank} ${r.dead ? 'dead' : 'unreachable'}`,
          );
      if (stuck.length > 0 && (n.missing?.stuck.length ?? 0) === 0)
        note('collective_stuck', stuck.map(stuckText).join('; '));
      n.missing =
        signal.error !== undefined ? undefined : { at: now, ranks: ranks.slice(0, NODE_KEEP), stuck };
      return;
    }
    case 'stacks': {
      const summaries = (signal.stacks ?? []).slice(0, NODE_KEEP);
      n.stacks ??= {};
      n.stacks[signal.service] = { at: now, summaries };
      if (summaries.length > 0)
        note('stacks', `${signal.service}: ${summaries.map((x) => x.text).join(' | ')}`);
      return;
    }
  }
}
