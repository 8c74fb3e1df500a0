// Runs a target's node sources (issue 42): each part on its own timer, one read at a time, each read within its
// deadline. A read past its deadline is reported (an error signal, `node_read_errors_total`) and the part waits for
// it to end before reading again, so a /proc read that hangs holds at most one of libuv's threads and no probe, scrape
// or log read waits on it. The readings go to the target's watchdog as `node` signals; the metrics are set here.
import type { NodeConfig } from '../../config/node-schema.js';
import type { NodeSignal } from '../../core/node-signals.js';
import type { Logger } from '../../lib/logger.js';
import type { NodeMetrics } from '../../metrics.js';
import { NODE_SOURCES } from './index.js';
import type { ServiceSampler } from './processes.js';
import type { Exec } from './pyspy.js';
import type { FindEnv } from './find.js';
import { dumpStacks, type StackDump } from './stacks.js';
import type { NodeContext, NodePart } from './types.js';

export interface NodeWatchOptions {
  target: string;
  node: NodeConfig;
  exec: Exec;
  metrics: NodeMetrics;
  logger: Logger;
  onSignal: (s: NodeSignal) => void;
  now?: () => number;
  /** Where /proc and the cgroup root are (default the host's; tests lay out their own). */
  env?: FindEnv;
}

export class NodeWatch {
  private readonly ctx: NodeContext;
  private readonly parts: NodePart[];
  private timers: NodeJS.Timeout[] = [];
  private busy = new Set<NodePart>();
  private stopped = false;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly o: NodeWatchOptions) {
    this.now = o.now ?? Date.now;
    this.log = o.logger.child({ component: 'node', target: o.target });
    this.ctx = {
      target: o.target,
      node: o.node,
      exec: o.exec,
      samplers: new Map<string, ServiceSampler>(),
      ...(o.env !== undefined ? { env: o.env } : {}),
    };
    this.parts = Object.values(NODE_SOURCES).flatMap((s) => s.parts(this.ctx));
    for (const p of this.parts) o.metrics.nodeReadErrors.inc({ target: o.target, source: p.source }, 0);
    if (o.node.stacks.enabled) o.metrics.nodeReadErrors.inc({ target: o.target, source: 'stacks' }, 0);
  }

  start(): void {
    for (const p of this.parts) {
      void this.round(p);
      this.timers.push(setInterval(() => void this.round(p), p.every));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.allSettled(this.parts.map((p) => p.close?.()));
  }

  /** One read of a part; returns when it is done or its deadline passed (the read may go on, and is waited for). */
  async round(p: NodePart): Promise<void> {
    if (this.busy.has(p) || this.stopped) return;
    this.busy.add(p);
    const at = this.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), p.timeout);
    });
    const read = p.read(at).then(
      (signals) => ({ signals }),
      (err: unknown) => ({ error: String((err as Error)?.message ?? err).slice(0, 300) }),
    );
    void read.finally(() => this.busy.delete(p));
    const r = await Promise.race([read, deadline]);
    clearTimeout(timer);
    if (this.stopped) return;
    if (r === 'deadline' || 'error' in r) {
      const error =
        r === 'deadline' ? `${p.source} read of ${p.name} took longer than ${p.timeout} ms` : r.error;
      this.o.metrics.nodeReadErrors.inc({ target: this.o.target, source: p.source });
      this.log.warn({ source: p.source, name: p.name, error }, 'node reading failed');
      this.o.onSignal({
        kind: 'node',
        target: this.o.target,
        service: p.source === 'processes' ? p.name : p.source,
        source: p.source,
        time: this.now(),
        error,
      });
      // A late reading still says what happened (a thread lost is not read twice): it is delivered when it comes.
      if (r === 'deadline')
        void read.then((late) => {
          if ('signals' in late && !this.stopped) this.deliver(late.signals);
        });
      return;
    }
    this.deliver(r.signals);
  }

  private deliver(signals: NodeSignal[]): void {
    for (const s of signals) {
      if (s.error !== undefined)
        this.o.metrics.nodeReadErrors.inc({ target: this.o.target, source: s.source });
      this.export(s);
      this.o.onSignal(s);
    }
  }

  /** Stacks of every engine Python process, for the incident capture (within `withinMs`). */
  stacks(withinMs: number): Promise<StackDump[]> {
    return dumpStacks(this.ctx, withinMs, this.now);
  }

  /** The sampler of a service (its pids, thread names and idle times), for the status and tests. */
  sampler(service: string): ServiceSampler | undefined {
    return this.ctx.samplers.get(service);
  }

  get stacksEnabled(): boolean {
    return this.o.node.stacks.enabled;
  }

  private export(s: NodeSignal): void {
    const m = this.o.metrics;
    const t = this.o.target;
    if (s.source === 'processes' && s.processes !== undefined) {
      const labels = { target: t, service: s.service };
      m.nodeThreads.set(
        labels,
        s.processes.reduce((a, p) => a + p.threads, 0),
      );
      m.nodeResident.set(
        labels,
        s.processes.reduce((a, p) => a + (p.rssBytes ?? 0), 0),
      );
      const cpu = s.processes.filter((p) => p.cpu !== undefined);
      if (cpu.length > 0)
        m.nodeCpu.set(
          labels,
          cpu.reduce((a, p) => a + p.cpu!, 0),
        );
      m.nodeThreadsLost.inc(labels, s.lost?.length ?? 0);
      m.nodeRestarts.inc(labels, s.restarted !== undefined ? 1 : 0);
    }
    for (const g of s.gpus ?? []) {
      m.nodeGpuXid.set({ target: t, gpu: g.gpu }, g.xid ?? 0);
      if (g.util !== undefined) m.nodeGpuUtil.set({ target: t, gpu: g.gpu }, g.util);
    }
    if (s.source === 'nccl' && s.missing !== undefined)
      m.nodeNcclMissing.set({ target: t }, s.missing.length);
  }
}
