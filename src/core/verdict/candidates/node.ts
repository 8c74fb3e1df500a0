// What the node tells us (EVIDENCE `engine`, issue 42): a thread of the engine gone, an engine process stopped, in a
// driver call that does not return or exited unreaped, a GPU fault (a new XID), an NCCL rank dead or behind on a
// collective that no longer moves. Each names a diagnosis only where the probes already show a failure (a wedge, a
// failing slot, a stalled engine): the node explains a failure, it never makes one. Evidence counts from the
// incident's start (the target last ok, or first seen) less NODE_LOOKBACK_MS: the thread dies first and the probes
// notice later.
import type { ClassifierConfig, TargetMemory } from '../../memory.js';
import type { NodeMemory } from '../../node-memory.js';
import type { ProcessReading } from '../../node-signals.js';
import { stopped, stuckText } from '../../node-read.js';
import { candidate } from '../pick.js';
import { stallText, withSymptom } from '../text.js';
import type { Candidate, Family, Symptoms } from '../types.js';

/** Utilisation at or above this with no tokens is "busy"; at or below the other, "idle". */
const GPU_BUSY = 0.9;
const GPU_IDLE = 0.05;

const secs = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * How far before the target was last ok node evidence still counts. A thread dies at an abort and the wedge shows
 * when a request next needs it, minutes later on a quiet deployment; the target reads ok all that while.
 */
export const NODE_LOOKBACK_MS = 10 * 60_000;

/** Where the incident's node evidence starts: the last ok (or first sight) less NODE_LOOKBACK_MS (or stallAfter). */
function since(s: TargetMemory, cfg: ClassifierConfig): number {
  return (s.lastOkAt ?? s.since) - Math.max(cfg.detect.stallAfter, NODE_LOOKBACK_MS);
}

/** Threads lost within the window whose process still runs (a restart ends what its lost threads explain). */
function lostThreads(n: NodeMemory, from: number): NodeMemory['lost'] {
  return n.lost.filter(
    (t) => t.at >= from && (n.services[t.service]?.processes.some((p) => p.pid === t.pid) ?? true),
  );
}

/** The probes show a failure the node may explain. */
const failing = (sym: Symptoms) => sym.stuck || sym.failing.length > 0 || sym.stalled || sym.confirmedHolds;

/** When the first failing or hung probe run of the incident started, if one did. */
function firstFailure(sym: Symptoms): number | undefined {
  const starts = [
    ...sym.hangs.filter((h) => h.hung || h.afterCritical).map((h) => h.run.startedAt),
    ...sym.completion.flatMap((m) => (m.failStreak > 0 && m.failSince !== undefined ? [m.failSince] : [])),
  ];
  return starts.length > 0 ? Math.min(...starts) : undefined;
}

/** "2 s before the first failing probe started", or its time to now. */
function when(at: number, sym: Symptoms, now: number): string {
  const first = firstFailure(sym);
  if (first === undefined) return `${secs(now - at)} ago`;
  return at <= first
    ? `${secs(first - at)} before the first failing probe started`
    : `${secs(at - first)} after the first failing probe started`;
}

/** What the service's processes do with the CPU: all waiting (since when), or a thread spinning. */
export function cpuText(service: string, ps: readonly ProcessReading[], now: number): string | undefined {
  const spin = ps.find((p) => p.spinning !== undefined);
  if (spin?.spinning !== undefined)
    return `${service} thread ${spin.spinning.name} (tid ${spin.spinning.tid}) spins (runnable, ${Math.round(spin.spinning.cpu * 100)} % of a core)`;
  if (ps.length > 0 && ps.every((p) => p.idleSince !== undefined)) {
    const idle = Math.min(...ps.map((p) => now - p.idleSince!));
    return `${service}'s threads used no CPU for ${secs(idle)} (every thread waits)`;
  }
  return undefined;
}

/** The GPUs busy with no tokens, or idle with requests in flight (only said beside a stall). */
function gpuText(n: NodeMemory | undefined): string | undefined {
  const gpus = (n?.gpus?.gpus ?? []).filter((g) => g.util !== undefined);
  if (gpus.length === 0) return undefined;
  const list = (xs: typeof gpus) => xs.map((g) => g.gpu).join(', ');
  if (gpus.every((g) => g.util! >= GPU_BUSY))
    return `GPU ${list(gpus)} busy (${Math.round(Math.min(...gpus.map((g) => g.util!)) * 100)} % or more) with no token progress`;
  if (gpus.every((g) => g.util! <= GPU_IDLE)) return `GPU ${list(gpus)} idle with requests in flight`;
  return undefined;
}

/** A lost thread of the incident (the newest), named with when it went relative to the first failure. */
export const threadLost: Family = (s, now, cfg, sym) => {
  const n = s.node;
  if (n === undefined || !failing(sym)) return [];
  const from = since(s, cfg);
  const lost = lostThreads(n, from);
  if (lost.length === 0) return [];
  const t = lost[lost.length - 1]!;
  const more =
    lost.length > 1
      ? ` (and ${lost.length - 1} more: ${lost
          .slice(0, -1)
          .map((x) => x.name)
          .join(', ')})`
      : '';
  const cpu = cpuText(t.service, n.services[t.service]?.processes ?? [], now);
  const cause = `${t.service} lost thread \`${t.name}\` (tid ${t.tid}, pid ${t.pid}) ${when(t.at, sym, now)}${more}`;
  return [
    candidate('thread_lost', withSymptom(sym.wedgeText, cpu !== undefined ? `${cause}; ${cpu}` : cause)),
  ];
};

/** An engine process stopped (T), in uninterruptible sleep (D) for hangAfter, or exited unreaped (Z). */
export const processStopped: Family = (s, now, cfg, sym) => {
  const n = s.node;
  if (n === undefined || !failing(sym)) return [];
  for (const [service, mem] of Object.entries(n.services)) {
    for (const p of mem.processes) {
      const held = now - p.stateSince;
      if (p.state === 'Z')
        return [
          candidate(
            'process_stopped',
            withSymptom(
              sym.wedgeText,
              `${service} ${p.name} (pid ${p.pid}) exited and was not reaped (zombie)`,
            ),
          ),
        ];
      if (stopped(p.state) && held >= cfg.detect.hangAfter) {
        const what =
          p.state === 'D'
            ? 'in uninterruptible sleep (D: a kernel or driver call that does not return)'
            : 'stopped (T)';
        return [
          candidate(
            'process_stopped',
            withSymptom(sym.wedgeText, `${service} ${p.name} (pid ${p.pid}) ${what} for ${secs(held)}`),
          ),
        ];
      }
    }
  }
  return [];
};

/** A new XID on a GPU during the incident. */
export const gpuFault: Family = (s, now, cfg, sym) => {
  const n = s.node;
  if (n === undefined || !failing(sym)) return [];
  const from = since(s, cfg);
  const faults = n.faults.filter((f) => f.at >= from);
  if (faults.length === 0) return [];
  const f = faults[faults.length - 1]!;
  const uuid = f.uuid !== undefined ? ` (${f.uuid})` : '';
  return [
    candidate(
      'gpu_fault',
      withSymptom(sym.wedgeText, `GPU ${f.gpu}${uuid}: ${f.text} ${when(f.at, sym, now)}`),
    ),
  ];
};

/** NCCL's RAS: ranks dead or unreachable, or ranks behind on a collective that no longer moves. */
export const rankMissing: Family = (s, _now, cfg, sym) => {
  const m = s.node?.missing;
  if (m === undefined || !failing(sym) || m.at < since(s, cfg)) return [];
  const dead = [...m.ranks].sort((a, b) => Number(b.dead) - Number(a.dead));
  if (dead.length > 0) {
    const r = dead[0]!;
    const more = dead.length > 1 ? `; ${dead.length - 1} more rank${dead.length > 2 ? 's' : ''} missing` : '';
    return [
      candidate(
        'rank_missing',
        withSymptom(
          sym.wedgeText,
          `NCCL communicator ${r.comm}: rank ${r.rank} (pid ${r.pid} on ${r.host}) ${r.dead ? 'considered dead' : 'unreachable'} by RAS${more}`,
        ),
      ),
    ];
  }
  if (m.stuck.length > 0)
    return [candidate('rank_missing', withSymptom(sym.wedgeText, stuckText(m.stuck[0]!)))];
  return [];
};

/**
 * A stalled engine (the same finding as ./engine.ts engineStalled) told more precisely by the node: its threads all
 * waiting or one spinning, its GPUs idle with requests in flight or busy with no tokens. Placed before engineStalled,
 * so the richer cause names the same diagnosis.
 */
export const stalledOnNode: Family = (s, now, _cfg, sym): readonly Candidate[] => {
  const n = s.node;
  if (n === undefined) return [];
  const e = Object.values(s.engines).find(
    (x) => x.stalled && !(sym.stuckRouter !== undefined && x.routerInflight !== undefined),
  );
  if (e === undefined) return [];
  const detail = [cpuText(e.service, n.services[e.service]?.processes ?? [], now), gpuText(n)].filter(
    (x): x is string => x !== undefined,
  );
  if (detail.length === 0) return [];
  return [
    candidate('engine_stalled', withSymptom(sym.wedgeText, `${stallText(e, now)}; ${detail.join('; ')}`)),
  ];
};

/**
 * What the last stack dump showed (after a capture), for whatever diagnosis names the incident: the innermost frame
 * of each thread and the threads gone ("scheduler TP0 waiting in `KVPoll.poll` for 41 s; no `bootstrap_thread`").
 */
export function nodeNote(
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  sym: Symptoms,
  diagnosis: string | null,
): string | undefined {
  const n = s.node;
  if (n === undefined || !failing(sym)) return undefined;
  const from = since(s, cfg);
  const notes: string[] = [];
  // A thread lost beside a stronger diagnosis (the bootstrap thread's traceback names kv_bootstrap_thread_dead).
  const t = lostThreads(n, from).at(-1);
  if (t !== undefined && diagnosis !== 'thread_lost')
    notes.push(`${t.service} lost thread \`${t.name}\` (tid ${t.tid}) ${when(t.at, sym, now)}`);
  for (const [service, st] of Object.entries(n.stacks ?? {}))
    if (st.summaries.length > 0 && st.at >= from)
      notes.push(`stacks of ${service}: ${st.summaries.map((x) => x.text).join(' | ')}`);
  return notes.length > 0 ? notes.join('; ') : undefined;
}
