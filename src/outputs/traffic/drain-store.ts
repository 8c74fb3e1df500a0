// Drain ledgers in stateDir/drains.json: a worker this daemon took out of its gateway must come back after a
// restart (or kill -9) too, and the per-window cap must hold across one. Rewritten whole, atomically, on change.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeStaleTemps, writeFileAtomic } from '../../lib/state-store.js';
import type { Logger } from '../../lib/logger.js';
import { newDrainLedger, type DrainLedger } from './drainer.js';

export const DRAINS_FILE = 'drains.json';

export class DrainStore {
  private readonly file: string | undefined;
  private readonly ledgers: Record<string, DrainLedger> = {};

  constructor(
    dir: string | undefined,
    private readonly logger: Logger,
  ) {
    if (dir === undefined) return;
    this.file = join(dir, DRAINS_FILE);
    try {
      mkdirSync(dir, { recursive: true });
      removeStaleTemps(this.file);
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, unknown>;
      for (const [target, v] of Object.entries(parsed)) {
        const l = v as Partial<DrainLedger> | null;
        if (l === null || typeof l !== 'object' || typeof l.out !== 'boolean') continue;
        this.ledgers[target] = {
          out: l.out,
          dryRun: l.dryRun === true,
          drains: Array.isArray(l.drains) ? l.drains.filter((t): t is number => typeof t === 'number') : [],
          ...(typeof l.outSince === 'number' ? { outSince: l.outSince } : {}),
        };
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        logger.warn(
          { err: String(err), file: this.file },
          'drain ledgers unreadable; starting with none out',
        );
    }
  }

  get(target: string): DrainLedger {
    return (this.ledgers[target] ??= newDrainLedger());
  }

  save(target: string, l: DrainLedger): void {
    this.ledgers[target] = l;
    if (this.file === undefined) return;
    try {
      writeFileAtomic(this.file, `${JSON.stringify(this.ledgers)}\n`);
    } catch (err) {
      this.logger.warn({ err: String(err), file: this.file }, 'drain ledgers not saved');
    }
  }
}
