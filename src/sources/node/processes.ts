// One service's engine processes read from /proc on a timer (issue 42): the processes found (./find.ts) and their
// descendants (the scheduler ranks an engine forks), then per process its state, RSS, zombie children and, per
// thread, its name and CPU time. Compared with the previous reading: a thread gone while its process lives on, the
// main process replaced (a restart: its pid or start time changed), CPU used per thread over the interval (one thread
// spinning, or every thread waiting and since when). Bounded: maxThreads threads per process, MAX_FOUND processes.
import { join } from 'node:path';
import type { NodeProcessConfig } from '../../config/node-schema.js';
import type { LostThread, ProcessReading } from '../../core/node-signals.js';
import { DEFAULT_ENV, findProcesses, MAX_FOUND, type FindEnv } from './find.js';
import { CLOCK_TICKS, numericEntries, PAGE_BYTES, parseStat, readCapped, type ProcStat } from './procfs.js';

/** A thread must have been seen this many readings in a row before its end counts as a loss (pools come and go). */
export const LOST_AFTER_READINGS = 3;
/** CPU under this many cores over an interval is no progress (a poll loop's wake-ups round to it). */
export const IDLE_CPU = 0.01;
/** A thread using this much of a core over an interval spins, whatever its state. */
export const SPIN_CPU = 0.5;
/** Runnable at two readings in a row and using at least this much: a spin on a host with other work. */
export const SPIN_MIN_CPU = 0.05;
/** Lost threads reported per reading, at most. */
const MAX_LOST = 8;

interface ThreadState {
  name: string;
  ticks: number;
  /** The thread's state letter at this reading (R: running or runnable). */
  state: string;
  seen: number;
  lastActiveAt: number;
}

interface ProcState {
  startTime: number;
  ticks: number;
  at: number;
  state: string;
  stateSince: number;
  idleSince?: number;
  threads: Map<number, ThreadState>;
}

export interface ServiceReading {
  processes: ProcessReading[];
  lost: LostThread[];
  restarted?: { from: number; to: number };
  error?: string;
}

export class ServiceSampler {
  private procs = new Map<number, ProcState>();
  private main?: { pid: number; startTime: number };
  /** Python thread names by pid and tid, from the last stack dump (./pyspy.ts): they name a lost thread. */
  private pyNames = new Map<number, Map<number, string>>();
  /** Names of the threads each process lost, newest last (bounded): what a later stack dump lacks. */
  private lost = new Map<number, string[]>();

  constructor(
    readonly cfg: NodeProcessConfig,
    private readonly maxThreads: number,
    private readonly env: FindEnv = DEFAULT_ENV,
  ) {}

  get service(): string {
    return this.cfg.service;
  }

  /** The pids of the last reading (what a stack dump is taken of). */
  pids(): number[] {
    return [...this.procs.keys()];
  }

  /** How long a thread has used no CPU, as of the last reading (undefined: not read). */
  threadIdleMs(pid: number, tid: number, now: number): number | undefined {
    const t = this.procs.get(pid)?.threads.get(tid);
    return t === undefined ? undefined : now - t.lastActiveAt;
  }

  /** How many readings in a row have seen thread `tid` of `pid` (0: not in the last reading). */
  threadSeen(pid: number, tid: number): number {
    return this.procs.get(pid)?.threads.get(tid)?.seen ?? 0;
  }

  /** Every thread name the last reading saw in `pid` (to say which a dump lacks). */
  threadNames(pid: number): Map<number, string> {
    const out = new Map<number, string>();
    for (const [tid, t] of this.procs.get(pid)?.threads ?? [])
      out.set(tid, this.pyNames.get(pid)?.get(tid) ?? t.name);
    return out;
  }

  lostNames(pid: number): string[] {
    return this.lost.get(pid) ?? [];
  }

  /** Python names from a stack dump (tid → name); kept until the process goes. */
  nameThreads(pid: number, names: Map<number, string>): void {
    this.pyNames.set(pid, new Map([...(this.pyNames.get(pid) ?? []), ...names]));
  }

  async read(now: number): Promise<ServiceReading> {
    const found = await findProcesses(this.cfg, this.env);
    if (found.pids.length === 0) {
      this.procs.clear();
      return { processes: [], lost: [], error: found.problem ?? 'no process found' };
    }
    const pids = await this.withDescendants(found.pids);
    const stats = new Map<number, ProcStat>();
    for (const pid of pids) {
      const st = parseStat((await readCapped(join(this.env.proc, String(pid), 'stat'), 4096)) ?? '');
      if (st !== undefined) stats.set(pid, st);
    }
    if (stats.size === 0) {
      this.procs.clear();
      return { processes: [], lost: [], error: `process ${found.pids.join(', ')} is gone` };
    }
    const restarted = this.checkRestart(found.pids[0]!, stats.get(found.pids[0]!));
    const out: ServiceReading = { processes: [], lost: [], ...(restarted ? { restarted } : {}) };
    const next = new Map<number, ProcState>();
    for (const [pid, st] of stats) {
      const prev = this.procs.get(pid);
      const same = prev !== undefined && prev.startTime === st.startTime;
      const threads = await this.readThreads(pid, same ? prev.threads : undefined, now);
      const p: ProcState = {
        startTime: st.startTime,
        ticks: st.cpuTicks,
        at: now,
        state: st.state,
        stateSince: same && prev.state === st.state ? prev.stateSince : now,
        threads: threads.map,
      };
      const reading: ProcessReading = {
        pid,
        name: st.comm,
        state: st.state,
        stateSince: p.stateSince,
        threads: threads.total,
        rssBytes: st.rssPages * PAGE_BYTES,
        zombies: [...stats.values()].filter((c) => c.ppid === pid && c.state === 'Z').length,
      };
      if (same && now > prev.at) {
        const cpu = (st.cpuTicks - prev.ticks) / CLOCK_TICKS / ((now - prev.at) / 1000);
        reading.cpu = Math.max(0, cpu);
        p.idleSince = cpu < IDLE_CPU ? (prev.idleSince ?? prev.at) : undefined;
        if (p.idleSince !== undefined) reading.idleSince = p.idleSince;
        if (threads.busiest !== undefined) reading.spinning = threads.busiest;
      }
      if (same)
        for (const t of this.lostThreads(pid, prev, threads.map, now)) {
          const names = this.lost.get(pid) ?? [];
          names.push(t.name);
          this.lost.set(pid, names.slice(-16));
          if (out.lost.length < MAX_LOST) out.lost.push(t);
        }
      next.set(pid, p);
      out.processes.push(reading);
    }
    for (const pid of this.pyNames.keys()) if (!next.has(pid)) this.pyNames.delete(pid);
    for (const pid of this.lost.keys()) if (!next.has(pid)) this.lost.delete(pid);
    this.procs = next;
    return out;
  }

  /** The found processes and what they forked (task/<pid>/children), breadth first, at most MAX_FOUND. */
  private async withDescendants(roots: number[]): Promise<number[]> {
    const out: number[] = [];
    const queue = [...roots];
    while (queue.length > 0 && out.length < MAX_FOUND) {
      const pid = queue.shift()!;
      if (out.includes(pid)) continue;
      out.push(pid);
      const kids = await readCapped(
        join(this.env.proc, String(pid), 'task', String(pid), 'children'),
        16 * 1024,
      );
      for (const k of (kids ?? '').trim().split(/\s+/)) if (/^\d{1,10}$/.test(k)) queue.push(Number(k));
    }
    return out;
  }

  private checkRestart(pid: number, st: ProcStat | undefined): { from: number; to: number } | undefined {
    if (st === undefined) return undefined;
    const before = this.main;
    this.main = { pid, startTime: st.startTime };
    if (before === undefined || (before.pid === pid && before.startTime === st.startTime)) return undefined;
    return { from: before.pid, to: pid };
  }

  private async readThreads(
    pid: number,
    prev: Map<number, ThreadState> | undefined,
    now: number,
  ): Promise<{
    map: Map<number, ThreadState>;
    total: number;
    busiest?: { tid: number; name: string; cpu: number };
  }> {
    const map = new Map<number, ThreadState>();
    const task = join(this.env.proc, String(pid), 'task');
    const list = await numericEntries(task, this.maxThreads);
    let busiest: { tid: number; name: string; cpu: number } | undefined;
    for (const tid of list?.ids ?? []) {
      const st = parseStat((await readCapped(join(task, String(tid), 'stat'), 4096)) ?? '');
      if (st === undefined) continue;
      const old = prev?.get(tid);
      const active = old === undefined || st.cpuTicks > old.ticks;
      map.set(tid, {
        name: st.comm,
        ticks: st.cpuTicks,
        state: st.state,
        seen: (old?.seen ?? 0) + 1,
        lastActiveAt: active ? now : old.lastActiveAt,
      });
      const at = this.procs.get(pid)?.at;
      if (old !== undefined && at !== undefined && now > at) {
        const cpu = (st.cpuTicks - old.ticks) / CLOCK_TICKS / ((now - at) / 1000);
        // A spin: most of a core, or runnable at both readings and using CPU between them (on a loaded host a
        // spinning thread gets what the scheduler gives it, not a core).
        const spins = cpu >= SPIN_CPU || (cpu >= SPIN_MIN_CPU && st.state === 'R' && old.state === 'R');
        if (spins && (busiest === undefined || cpu > busiest.cpu))
          busiest = { tid, name: this.pyNames.get(pid)?.get(tid) ?? st.comm, cpu };
      }
    }
    return { map, total: list?.total ?? map.size, ...(busiest !== undefined ? { busiest } : {}) };
  }

  /** Threads read last time, long-lived, and gone now while their process lives on (within the threads read). */
  private lostThreads(pid: number, prev: ProcState, now: Map<number, ThreadState>, at: number): LostThread[] {
    // Past maxThreads the list is cut by tid order: a thread beyond the cut was not read, not lost.
    const maxRead = now.size >= this.maxThreads ? Math.max(...now.keys()) : Infinity;
    const out: LostThread[] = [];
    for (const [tid, t] of prev.threads) {
      if (now.has(tid) || t.seen < LOST_AFTER_READINGS || tid > maxRead) continue;
      out.push({ pid, tid, name: this.pyNames.get(pid)?.get(tid) ?? t.name, at });
    }
    return out;
  }
}
