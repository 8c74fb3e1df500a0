// Which processes are a service's engine (issue 42), one way per config entry: a pid file, a systemd unit's cgroup,
// a listening port (/proc/net/tcp{,6}, then the process holding that socket's inode), a cgroup directory, or a
// container id (the processes whose /proc/<pid>/cgroup names it). Only integers leave here. Bounded everywhere:
// processes scanned, fds per process, bytes per file.
import { readdir } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { NodeFinder, NodeProcessConfig } from '../../config/node-schema.js';
import { linkOf, numericEntries, readCapped } from './procfs.js';

/** Processes looked at when scanning /proc (port, container), at most. */
const MAX_SCAN = 4096;
/** fds read per process when looking for a socket. */
const MAX_FDS = 4096;
/** /proc/net/tcp of a host with many connections can be megabytes: past this it is read no further. */
const MAX_NET_BYTES = 8 * 1024 * 1024;
/** Processes found per entry, at most. */
export const MAX_FOUND = 64;

export interface Found {
  pids: number[];
  /** Why none was found. */
  problem?: string;
}

export interface FindEnv {
  proc: string;
  cgroupRoot: string;
}

export const DEFAULT_ENV: FindEnv = { proc: '/proc', cgroupRoot: '/sys/fs/cgroup' };

type FinderFn = (cfg: NodeProcessConfig, env: FindEnv) => Promise<Found>;

async function fromPidFile(cfg: NodeProcessConfig): Promise<Found> {
  const text = await readCapped(cfg.pidFile!, 64);
  if (text === undefined) return { pids: [], problem: `pid file ${cfg.pidFile} cannot be read` };
  const t = text.trim();
  if (!/^\d{1,10}$/.test(t) || Number(t) < 1)
    return { pids: [], problem: `pid file ${cfg.pidFile} does not hold a process id` };
  return { pids: [Number(t)] };
}

/** Every pid in a cgroup directory and its sub-cgroups (depth and count bounded). */
async function cgroupPids(dir: string, depth = 0, out: number[] = []): Promise<number[]> {
  if (depth > 4 || out.length >= MAX_FOUND) return out;
  const procs = await readCapped(join(dir, 'cgroup.procs'), 64 * 1024);
  for (const line of (procs ?? '').split('\n'))
    if (/^\d{1,10}$/.test(line) && out.length < MAX_FOUND) out.push(Number(line));
  let subs: string[];
  try {
    subs = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return out;
  }
  for (const s of subs.slice(0, 64)) await cgroupPids(join(dir, s), depth + 1, out);
  return out;
}

async function fromCgroupDir(dir: string, what: string): Promise<Found> {
  const pids = await cgroupPids(dir);
  return pids.length > 0 ? { pids } : { pids: [], problem: `no process in ${what} (${dir})` };
}

async function fromUnit(cfg: NodeProcessConfig, env: FindEnv): Promise<Found> {
  // A system unit sits under system.slice; a unit in another slice is given as its cgroup path instead.
  return fromCgroupDir(join(env.cgroupRoot, 'system.slice', cfg.systemdUnit!), `unit ${cfg.systemdUnit}`);
}

async function fromCgroup(cfg: NodeProcessConfig, env: FindEnv): Promise<Found> {
  const p = cfg.cgroup!;
  return fromCgroupDir(isAbsolute(p) ? p : join(env.cgroupRoot, p), `cgroup ${p}`);
}

/** The inodes of sockets listening on `port` (state 0A) in /proc/net/tcp and tcp6. */
export function listeningInodes(table: string, port: number): Set<string> {
  const out = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    // sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode
    if (f.length < 10 || f[3] !== '0A') continue;
    if (f[1]!.split(':')[1]?.toUpperCase() === hex && /^\d+$/.test(f[9]!) && f[9] !== '0') out.add(f[9]!);
  }
  return out;
}

async function fromPort(cfg: NodeProcessConfig, env: FindEnv): Promise<Found> {
  const tables = await Promise.all(
    // Through self/: a unit with ProcSubset=pid sees no top-level /proc/net, but its own net directory.
    ['tcp', 'tcp6'].map((t) => readCapped(join(env.proc, 'self', 'net', t), MAX_NET_BYTES)),
  );
  const inodes = new Set<string>();
  for (const t of tables) for (const i of listingOf(t, cfg.port!)) inodes.add(i);
  if (inodes.size === 0) return { pids: [], problem: `nothing listens on port ${cfg.port}` };
  const procs = await numericEntries(env.proc, MAX_SCAN);
  for (const pid of procs?.ids ?? []) {
    const fds = await numericEntries(join(env.proc, String(pid), 'fd'), MAX_FDS);
    for (const fd of fds?.ids ?? []) {
      const l = await linkOf(join(env.proc, String(pid), 'fd', String(fd)));
      const m = l !== undefined ? /^socket:\[(\d+)\]$/.exec(l) : null;
      if (m !== null && inodes.has(m[1]!)) return { pids: [pid] };
    }
  }
  return {
    pids: [],
    problem: `port ${cfg.port} listens, but no process it could read holds the socket (reading other users' fds needs CAP_DAC_READ_SEARCH or the same user)`,
  };
}

const listingOf = (t: string | undefined, port: number) =>
  t === undefined ? new Set<string>() : listeningInodes(t, port);

async function fromContainer(cfg: NodeProcessConfig, env: FindEnv): Promise<Found> {
  const id = cfg.container!;
  const procs = await numericEntries(env.proc, MAX_SCAN);
  const pids: number[] = [];
  for (const pid of procs?.ids ?? []) {
    const cg = await readCapped(join(env.proc, String(pid), 'cgroup'), 16 * 1024);
    if (cg !== undefined && cg.includes(id)) pids.push(pid);
    if (pids.length >= MAX_FOUND) break;
  }
  return pids.length > 0 ? { pids } : { pids: [], problem: `no process in container ${id.slice(0, 12)}` };
}

/** One finder per way of saying where the processes are (NODE_FINDERS in src/config/node-schema.ts). */
export const FINDERS: Record<NodeFinder, FinderFn> = {
  pidFile: fromPidFile,
  systemdUnit: fromUnit,
  port: fromPort,
  cgroup: fromCgroup,
  container: fromContainer,
};

export function finderOf(cfg: NodeProcessConfig): NodeFinder {
  return (Object.keys(FINDERS) as NodeFinder[]).find((k) => cfg[k] !== undefined)!;
}

export async function findProcesses(cfg: NodeProcessConfig, env: FindEnv = DEFAULT_ENV): Promise<Found> {
  return FINDERS[finderOf(cfg)](cfg, env);
}
