// The engines' learned objectives and crawl baselines in stateDir/baselines.json (issue 41 item 3): a restart
// keeps them, so an engine that crawls when the daemon starts is judged against its past instead of being learned
// as its new normal. Saved whole through state-store.ts (temp file, fsync, rename) at most once a minute per
// target; a missing or corrupt file is an empty one (the engines learn again).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoredBaseline } from '../../core/objective-memory.js';
import { removeStaleTemps, writeFileAtomic } from '../../lib/state-store.js';

export const BASELINES_FILE = 'baselines.json';
/** A target's baselines reach the disk at most this often (they move slowly: an average over many samples). */
export const BASELINES_SAVE_EVERY_MS = 60_000;
/** Targets × services kept: a file an operator edited into something huge is cut, never grown further. */
const MAX_ENTRIES = 10_000;

export type TargetBaselines = Record<string, StoredBaseline>;

export class BaselineStore {
  private data: Record<string, TargetBaselines> = {};
  private readonly file: string | undefined;
  private readonly savedAt = new Map<string, number>();

  constructor(dir: string | undefined) {
    if (dir === undefined) return;
    try {
      mkdirSync(dir, { recursive: true });
      this.file = join(dir, BASELINES_FILE);
      removeStaleTemps(this.file);
      this.data = sanitize(JSON.parse(readFileSync(this.file, 'utf8')));
    } catch {
      // No file yet, or unreadable: start empty (rewritten whole on the next save).
    }
  }

  /** The stored baselines of a target's engines, by service (a copy). */
  get(target: string): TargetBaselines {
    return structuredClone(this.data[target] ?? {});
  }

  /** Records a target's baselines; written to disk when `now` is a save period past the last write. */
  set(target: string, b: TargetBaselines, now: number): void {
    this.data[target] = { ...this.data[target], ...b };
    const last = this.savedAt.get(target);
    if (last !== undefined && now - last < BASELINES_SAVE_EVERY_MS) return;
    this.savedAt.set(target, now);
    this.flush();
  }

  flush(): void {
    if (this.file === undefined) return;
    try {
      writeFileAtomic(this.file, JSON.stringify(this.data));
    } catch {
      // A full disk: kept in memory, written whole on the next save.
    }
  }
}

/** Only records of the stored shape: numbers where numbers belong (the file is ours, but may have been edited). */
function sanitize(raw: unknown): Record<string, TargetBaselines> {
  const out: Record<string, TargetBaselines> = {};
  if (raw === null || typeof raw !== 'object') return out;
  let n = 0;
  for (const [target, services] of Object.entries(raw as Record<string, unknown>)) {
    if (services === null || typeof services !== 'object') continue;
    for (const [service, b] of Object.entries(services as Record<string, unknown>)) {
      if (++n > MAX_ENTRIES || b === null || typeof b !== 'object') continue;
      const rec = b as Record<string, unknown>;
      const num = (k: string) =>
        typeof rec[k] === 'number' && Number.isFinite(rec[k]) ? (rec[k] as number) : undefined;
      const at = num('at');
      if (at === undefined) continue;
      const clean: StoredBaseline = { at };
      for (const k of ['itlMs', 'queueMs', 'crawlBaseline', 'crawlSamples'] as const) {
        const v = num(k);
        if (v !== undefined) clean[k] = v;
      }
      (out[target] ??= {})[service] = clean;
    }
  }
  return out;
}
