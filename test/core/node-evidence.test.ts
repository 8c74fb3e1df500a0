// What the node tells us, through the reducer and the verdict (issue 42): a thread lost, a process stopped, a GPU
// fault, an NCCL rank missing each name the incident only where probes fail; the cause says when the node evidence
// came relative to the first failing probe; a stronger diagnosis still names the incident and carries the lost
// thread and the stacks beside it; a node reading alone never moves the state.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import type { NodeSignal, ProcessReading } from '../../src/core/node-signals.js';
import { Run } from '../detect/run.js';
import { NODE_LOOKBACK_MS } from '../../src/core/verdict/candidates/node.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({ stallAfter: '10s' }),
  hops: ['router'],
  probes: { chat: { kind: 'chat' } },
};

const proc = (p: Partial<ProcessReading> = {}): ProcessReading => ({
  pid: 4242,
  name: 'python3',
  state: 'S',
  stateSince: 0,
  threads: 3,
  zombies: 0,
  ...p,
});

const node = (r: Run, p: Partial<NodeSignal>, advance = 100) =>
  r.feed(
    {
      kind: 'node',
      target: 't',
      service: 'prefill',
      source: 'processes',
      time: r.now,
      processes: [proc()],
      ...p,
    },
    advance,
  );

const healthy = (r: Run) => {
  for (let i = 0; i < 6; i++) r.round();
};

describe('node evidence in the verdict', () => {
  it('a thread lost 2 s before the probes fail names thread_lost, with the thread and the time between', () => {
    const r = new Run(cfg);
    healthy(r);
    node(r, { lost: [{ pid: 4242, tid: 4301, name: 'bootstrap_thread', at: r.now + 100 }] });
    // A node reading alone moves nothing: the probes still pass.
    expect(r.s.state).toBe('ok');
    r.feed({ kind: 'tick' }, 1900);
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/thread_lost');
    expect(r.s.cause).toContain(
      'prefill lost thread `bootstrap_thread` (tid 4301, pid 4242) 2 s before the first failing probe started',
    );
    const journaled = r.steps.flatMap((s) => s.events).filter((e) => e.type === 'node');
    expect(journaled.map((e) => e.type === 'node' && e.what)).toEqual(['thread_lost']);
  });

  it('a thread lost more than NODE_LOOKBACK_MS before the target was last ok is history, not the cause', () => {
    const r = new Run(cfg);
    node(r, { lost: [{ pid: 4242, tid: 4301, name: 'old_thread', at: r.now }] });
    r.feed({ kind: 'tick' }, NODE_LOOKBACK_MS + 60_000);
    healthy(r);
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/completions_failing');
  });

  it('beside a stronger diagnosis (the bootstrap traceback) the lost thread and the stacks ride in the cause', () => {
    const r = new Run(cfg);
    healthy(r);
    node(r, { lost: [{ pid: 4242, tid: 4301, name: 'bootstrap_thread', at: r.now + 100 }] });
    r.log({ rule: 'nixl_bootstrap_thread_dead', class: 'kv_bootstrap_dead', severity: 'critical' });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/kv_bootstrap_thread_dead');
    expect(r.s.cause).toMatch(
      /; prefill lost thread `bootstrap_thread` \(tid 4301\) \d+ s before the first failing probe started$/,
    );
    node(r, {
      source: 'stacks',
      processes: undefined,
      stacks: [
        { pid: 4242, text: 'scheduler waiting in `poll` with no CPU for 41 s; no `bootstrap_thread`' },
      ],
    });
    expect(r.s.cause).toContain(
      'stacks of prefill: scheduler waiting in `poll` with no CPU for 41 s; no `bootstrap_thread`',
    );
  });

  it('an engine process in D for hangAfter names process_stopped; a shorter D does not', () => {
    const r = new Run(cfg);
    healthy(r);
    r.round('timeout');
    r.round('timeout');
    node(r, { processes: [proc({ state: 'D', stateSince: r.now - 5_000 })] });
    expect(r.verdict).toBe('wedged/completions_failing');
    node(r, { processes: [proc({ state: 'D', stateSince: r.now - 25_000 })] });
    expect(r.verdict).toBe('wedged/process_stopped');
    expect(r.s.cause).toContain('prefill python3 (pid 4242) in uninterruptible sleep (D');
  });

  it('a new XID names gpu_fault with the GPU and what the XID means, above a lost thread', () => {
    const r = new Run(cfg);
    healthy(r);
    node(r, { lost: [{ pid: 4242, tid: 4301, name: 'bootstrap_thread', at: r.now + 100 }] });
    r.feed({
      kind: 'node',
      target: 't',
      service: 'gpus',
      source: 'gpus',
      time: r.now,
      gpus: [{ gpu: '3', uuid: 'GPU-ab12', xid: 79, xidNew: true }],
    });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/gpu_fault');
    expect(r.s.cause).toContain('GPU 3 (GPU-ab12): XID 79 (GPU has fallen off the bus)');
    // An XID the table does not know is still named by its number.
    const other = new Run(cfg);
    healthy(other);
    other.feed({
      kind: 'node',
      target: 't',
      service: 'gpus',
      source: 'gpus',
      time: other.now,
      gpus: [{ gpu: '0', xid: 999, xidNew: true }],
    });
    other.round('timeout');
    other.round('timeout');
    expect(other.s.cause).toContain('GPU 0: XID 999 ');
  });

  it('a rank NCCL considers dead names rank_missing; a stuck collective does too when no rank is missing', () => {
    const r = new Run(cfg);
    healthy(r);
    r.feed({
      kind: 'node',
      target: 't',
      service: 'nccl',
      source: 'nccl',
      time: r.now,
      missing: [{ comm: '0xcf26', rank: 21, host: '10.0.0.3', pid: 77, dead: true }],
      stuck: [],
    });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/rank_missing');
    expect(r.s.cause).toContain(
      'NCCL communicator 0xcf26: rank 21 (pid 77 on 10.0.0.3) considered dead by RAS',
    );
    const s = new Run(cfg);
    healthy(s);
    s.feed({
      kind: 'node',
      target: 't',
      service: 'nccl',
      source: 'nccl',
      time: s.now,
      missing: [],
      stuck: [{ comm: '0x27a0', op: 'AllReduce', behind: [3], at: 6649, ahead: 6650 }],
    });
    s.round('timeout');
    s.round('timeout');
    expect(s.s.cause).toContain(
      'NCCL communicator 0x27a0: AllReduce stuck, rank 3 at 6649 while others reached 6650',
    );
  });

  it('a stall is told as a wait (every thread idle) or a spin, and GPUs idle with requests in flight', () => {
    const r = new Run(cfg);
    healthy(r);
    node(r, { processes: [proc({ idleSince: r.now - 40_000 })] });
    r.feed({
      kind: 'node',
      target: 't',
      service: 'gpus',
      source: 'gpus',
      time: r.now,
      gpus: [
        { gpu: '0', util: 0 },
        { gpu: '1', util: 0.01 },
      ],
    });
    for (const gap of [1000, 5500, 5500])
      r.engine({ service: 'prefill', running: 3, generatedTokensTotal: 100 }, gap);
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/engine_stalled');
    expect(r.s.cause).toMatch(
      /prefill's threads used no CPU for \d+ s \(every thread waits\); GPU 0, 1 idle with requests in flight/,
    );
  });
});

describe('node evidence ends with its process', () => {
  it('a thread lost by a process that has since been replaced names nothing', () => {
    const r = new Run(cfg);
    healthy(r);
    node(r, { lost: [{ pid: 4242, tid: 4301, name: 'bootstrap_thread', at: r.now + 100 }] });
    node(r, { processes: [proc({ pid: 5151 })], restarted: { from: 4242, to: 5151 } });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/completions_failing');
  });
});
