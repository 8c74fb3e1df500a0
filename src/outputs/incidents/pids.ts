// Which processes a capture command is about: a pid file's integer, or the processes whose command line
// matches a configured pattern. Only integers read here reach an argv, so neither a log line nor an HTTP request
// can put text on a capture command's command line.
import { readdir, readFile } from 'node:fs/promises';
import type { CaptureCommandConfig } from '../../config/schema.js';

const MAX_PIDS = 16;

export interface PidLookup {
  pids: number[];
  /** Why none was found (the command is then skipped and the bundle says so). */
  problem?: string;
}

export async function readPidFile(path: string): Promise<PidLookup> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return { pids: [], problem: `pid file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  const t = text.trim();
  if (!/^\d{1,10}$/.test(t) || Number(t) < 1) {
    return { pids: [], problem: `pid file ${path} does not hold a process id` };
  }
  return { pids: [Number(t)] };
}

/** Processes whose /proc/<pid>/cmdline (arguments joined by spaces) matches, own process excluded. */
export async function matchProcesses(pattern: string, procDir = '/proc'): Promise<PidLookup> {
  const re = new RegExp(pattern);
  let entries: string[];
  try {
    entries = await readdir(procDir);
  } catch (err) {
    return { pids: [], problem: `${procDir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  const pids: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = await readFile(`${procDir}/${e}/cmdline`, 'utf8');
    } catch {
      continue; // exited meanwhile, or not ours to read
    }
    if (cmdline === '') continue;
    if (re.test(cmdline.replace(/\0+$/, '').split('\0').join(' '))) pids.push(Number(e));
    if (pids.length >= MAX_PIDS) break;
  }
  return pids.length > 0 ? { pids } : { pids: [], problem: `no process matches ${JSON.stringify(pattern)}` };
}

export async function lookupPids(cmd: CaptureCommandConfig): Promise<PidLookup> {
  if (cmd.pidFile !== undefined) return readPidFile(cmd.pidFile);
  if (cmd.processMatch !== undefined) return matchProcesses(cmd.processMatch);
  return { pids: [] };
}

/** Fills ${PID}, ${TARGET} and ${INCIDENT_DIR} in each argument; other text is left as written. */
export function fillArgv(
  argv: readonly string[],
  vars: { PID?: number; TARGET: string; INCIDENT_DIR: string },
) {
  return argv.map((a) =>
    a.replace(/\$\{(PID|TARGET|INCIDENT_DIR)\}/g, (whole, k: 'PID' | 'TARGET' | 'INCIDENT_DIR') =>
      vars[k] === undefined ? whole : String(vars[k]),
    ),
  );
}
