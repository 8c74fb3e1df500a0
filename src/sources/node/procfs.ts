// Bounded reads of /proc (issue 42). Every read has a size cap (a /proc/net/tcp of a busy host is megabytes; a
// thread list can be 10,000 entries) and the files read here are the ones the kernel answers without the target's
// memory lock: stat, comm, task/, children, cgroup, fd links — never cmdline, environ or maps, which wait on a
// process whose mmap lock is held (a process in D state can hold it forever, and the read would hang one of libuv's
// four threadpool threads with it). A round that still hangs is abandoned by its caller's deadline (./processes.ts).
import { open, readdir, readlink } from 'node:fs/promises';

/** Reads at most `max` bytes of a file; undefined when it cannot be read (gone, no permission). */
export async function readCapped(path: string, max: number): Promise<string | undefined> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(Math.min(max, 64 * 1024));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const want = Math.min(buf.length, max - total);
      if (want <= 0) break;
      const { bytesRead } = await fh.read(buf, 0, want, null);
      if (bytesRead === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, bytesRead)));
      total += bytesRead;
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** Numeric entries of a /proc directory, sorted, at most `max` of them (and how many there were). */
export async function numericEntries(
  dir: string,
  max: number,
): Promise<{ ids: number[]; total: number } | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  const ids: number[] = [];
  for (const n of names) if (/^\d{1,10}$/.test(n)) ids.push(Number(n));
  ids.sort((a, b) => a - b);
  return { ids: ids.slice(0, max), total: ids.length };
}

export async function linkOf(path: string): Promise<string | undefined> {
  try {
    return await readlink(path);
  } catch {
    return undefined;
  }
}

/** What /proc/<pid>/stat (or task/<tid>/stat) says, parsed; see proc(5). */
export interface ProcStat {
  comm: string;
  state: string;
  ppid: number;
  /** utime + stime, clock ticks. */
  cpuTicks: number;
  threads: number;
  /** Clock ticks after boot: with the pid, a process's identity (a reused pid has another). */
  startTime: number;
  rssPages: number;
}

/** Parses a stat line; the comm sits in parentheses and may itself hold spaces and parentheses. */
export function parseStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  if (rest.length < 22) return undefined;
  const num = (i: number) => Number(rest[i]);
  const st: ProcStat = {
    // comm is at most 15 bytes in the kernel; a longer text is not a stat line.
    comm: text.slice(open + 1, close).slice(0, 64),
    state: rest[0]!.slice(0, 1),
    ppid: num(1),
    cpuTicks: num(11) + num(12),
    threads: num(17),
    startTime: num(19),
    rssPages: num(21),
  };
  return [st.ppid, st.cpuTicks, st.threads, st.startTime, st.rssPages].every(Number.isFinite)
    ? st
    : undefined;
}

/** USER_HZ: 100 on every Linux architecture the daemon runs on (sysconf(_SC_CLK_TCK)). */
export const CLOCK_TICKS = 100;
/** The page size of x86-64 and most arm64 kernels; RSS is read in pages. */
export const PAGE_BYTES = 4096;
