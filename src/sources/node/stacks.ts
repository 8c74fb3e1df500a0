// Stacks of the engine's Python processes (issue 42). At a wedge the incident capture calls `dumpStacks`: one
// `py-spy dump` per Python process the samplers last saw (at most stacks.maxProcesses, each within stacks.timeout
// and what is left of the capture's deadline), each read back into a one-line summary with how long each thread has
// used no CPU and which threads the process had and lacks now. When a process is first seen, `learnNames` takes one
// non-blocking dump (the process is not paused) to learn its threads' Python names. Skipped with a reason, never
// failed, when py-spy or the ptrace right is missing.
import { basename, join } from 'node:path';
import { dumpProcess, parseDump, summarize, type DumpResult } from './pyspy.js';
import { linkOf } from './procfs.js';
import type { ServiceSampler } from './processes.js';
import type { NodeContext } from './types.js';

export interface StackDump extends DumpResult {
  service: string;
  summary?: string;
}

/** Whether /proc/<pid>/exe is a Python interpreter (python, python3, python3.11, …). */
export async function isPython(pid: number, proc = '/proc'): Promise<boolean> {
  const exe = await linkOf(join(proc, String(pid), 'exe'));
  // Unreadable (another user's process without CAP_SYS_PTRACE): py-spy is tried and says what it lacks.
  if (exe === undefined) return true;
  return /^python[\d.]*$/.test(basename(exe.replace(/ \(deleted\)$/, '')));
}

async function pythonPids(ctx: NodeContext, sampler: ServiceSampler): Promise<number[]> {
  if (sampler.cfg.python === false) return [];
  const out: number[] = [];
  for (const pid of sampler.pids()) if (sampler.cfg.python === true || (await isPython(pid))) out.push(pid);
  return out.slice(0, ctx.node.stacks.maxProcesses);
}

const learning = new WeakSet<ServiceSampler>();

/** Learns the Python thread names of processes not named yet (one at a time per service). */
export async function learnNames(
  ctx: NodeContext,
  sampler: ServiceSampler,
  named: Set<string>,
): Promise<void> {
  if (learning.has(sampler)) return;
  learning.add(sampler);
  try {
    for (const pid of await pythonPids(ctx, sampler)) {
      if (named.has(String(pid))) continue;
      named.add(String(pid));
      const st = ctx.node.stacks;
      const r = await dumpProcess(ctx.exec, pid, {
        pySpy: st.pySpy,
        native: false,
        nonblocking: true,
        timeoutMs: st.timeout,
        maxBytes: st.maxBytes,
      });
      if (!r.ok) continue;
      sampler.nameThreads(
        pid,
        new Map(
          parseDump(r.text)
            .threads.filter((t) => t.name !== '')
            .map((t) => [t.tid, t.name]),
        ),
      );
    }
  } finally {
    learning.delete(sampler);
  }
}

/** Dumps every engine Python process within `withinMs`; each result says what it got or why not. */
export async function dumpStacks(
  ctx: NodeContext,
  withinMs: number,
  now: () => number = Date.now,
): Promise<StackDump[]> {
  const st = ctx.node.stacks;
  const deadline = now() + withinMs;
  const jobs: Promise<StackDump>[] = [];
  let left = st.maxProcesses;
  for (const [service, sampler] of ctx.samplers) {
    const pids = (await pythonPids(ctx, sampler)).slice(0, left);
    left -= pids.length;
    for (const pid of pids) {
      jobs.push(
        (async () => {
          const timeoutMs = Math.max(1, Math.min(st.timeout, deadline - now()));
          const r = await dumpProcess(ctx.exec, pid, {
            pySpy: st.pySpy,
            native: st.native,
            timeoutMs,
            maxBytes: st.maxBytes,
          });
          if (!r.ok) return { ...r, service };
          const dump = parseDump(r.text);
          sampler.nameThreads(
            pid,
            new Map(dump.threads.filter((t) => t.name !== '').map((t) => [t.tid, t.name])),
          );
          const at = now();
          const summary = summarize(
            dump,
            (tid) => sampler.threadIdleMs(pid, tid, at),
            sampler.lostNames(pid),
          );
          return { ...r, service, summary };
        })(),
      );
    }
  }
  return Promise.all(jobs);
}
