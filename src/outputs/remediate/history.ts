// Remediation history in stateDir/remediation.json: last run, runs in the last hour, an operator's pause (who,
// when, until) and the pid of a command in flight. Cooldown, hourly cap and pause must survive a restart or a
// kill -9 during a wedge, or the watchdog restarts the engine again seconds after it just did.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeStaleTemps, writeFileAtomic } from '../../lib/state-store.js';

export interface PauseRecord {
  by: string;
  at: number;
  /** Unix ms; absent = until resumed. */
  until?: number;
}

/** A command in flight: the lock against overlapping runs, across restarts. */
export interface RunningLock {
  pid: number;
  startedAt: number;
  /** The process's start time (/proc/PID/stat field 22): a pid reused by another process after a reboot is no lock. */
  procStart?: string;
}

/** How the last command ended (`interrupted`: cut by a daemon shutdown). */
export interface LastRun {
  at: number;
  result: string;
  durationMs?: number;
}

export interface TargetHistory {
  lastRunAt?: number;
  runs: number[];
  paused?: PauseRecord;
  /** A command in flight: its process group id and when it started (the lock against overlapping runs). */
  running?: RunningLock;
  last?: LastRun;
}

export const HISTORY_FILE = 'remediation.json';

export class RemediationHistory {
  private data: Record<string, TargetHistory> = {};
  private readonly file: string | undefined;

  constructor(dir: string | undefined) {
    if (dir === undefined) return;
    try {
      mkdirSync(dir, { recursive: true });
      this.file = join(dir, HISTORY_FILE);
      // Temp files left by a crash mid-save: the rename never happened, the old file is whole.
      removeStaleTemps(this.file);
      this.data = JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, TargetHistory>;
    } catch {
      // No file yet, or unreadable: start empty (the file is rewritten whole on the next save).
    }
  }

  get(target: string): TargetHistory {
    const h = this.data[target];
    return h && Array.isArray(h.runs) ? h : { runs: [] };
  }

  /**
   * Saves one target's history the way every state file is saved (state-store.ts: temp file, fsync, rename,
   * fsync of the directory), so a crash or a power loss leaves the old or the new file, never an empty one.
   */
  set(target: string, h: TargetHistory): void {
    this.data[target] = h;
    if (this.file === undefined) return;
    try {
      writeFileAtomic(this.file, JSON.stringify(this.data));
    } catch {
      // A full disk: the history stays in memory and the next save writes it whole.
    }
  }
}

/** Whether a process (group leader) still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process's start time in clock ticks since boot (Linux /proc), or undefined where there is no /proc. */
export function procStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether a recorded command still runs: its pid is alive and, where known, is the same process. */
export function lockHeld(lock: RunningLock): boolean {
  if (!alive(lock.pid)) return false;
  if (lock.procStart === undefined) return true;
  const now = procStartTime(lock.pid);
  return now === undefined || now === lock.procStart;
}
