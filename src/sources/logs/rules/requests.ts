// Per-request de-duplication and loops, the matcher's collaborator: one request's line again within
// REQUEST_WINDOW_MS is the same event (TP0..TP7 print it together), and more than LOOP_COUNT copies of it from one
// process within LOOP_WINDOW_MS are a loop (one event of its own).
import { processKey } from '../loggers.js';
import type { CompiledRule } from './compile.js';

/** One request's line again within this long is the same event (TP0..TP7 print it together). */
export const REQUEST_WINDOW_MS = 5_000;
/** More than LOOP_COUNT copies of one request's line from one process within LOOP_WINDOW_MS is a loop. */
export const LOOP_COUNT = 20;
export const LOOP_WINDOW_MS = 10_000;
/** Request ids remembered for per-request de-duplication (oldest forgotten first). */
const PER_REQUEST_KEEP = 4096;

interface RequestSeen {
  /** When the last event for this request was raised. */
  raised: number;
  loopStart: number;
  loopCount: number;
  looped: boolean;
}

/** What a request's line is: its first event, a repeat of it (no event), or its loop event. */
export type RequestVerdict = 'first' | 'repeat' | 'loop';

export class Requests {
  private readonly seen = new Map<string, RequestSeen>();

  constructor(
    private readonly window = REQUEST_WINDOW_MS,
    readonly loopCount = LOOP_COUNT,
    readonly loopWindow = LOOP_WINDOW_MS,
  ) {}

  /** The loop an event stands for when `check` said 'loop'. */
  get loop(): { count: number; seconds: number } {
    return { count: this.loopCount + 1, seconds: this.loopWindow / 1000 };
  }

  /** 'first' (raise it), 'repeat' (within the window of the last event) or 'loop' (its loop event). */
  check(rule: CompiledRule, fields: Record<string, string>, line: string, time: number): RequestVerdict {
    const id = fields[rule.perRequest!];
    if (id === undefined || id === '') return 'first';
    const key = `${rule.name}\u0000${id}`;
    const seen = this.seen.get(key);
    // Loops are counted per process: eight ranks printing one line together are one line, not eight.
    // SGLang's per-request lines name their TP rank (`rank=N`): no need to read the prefix for it.
    const loopKey = `${key}\u0000${fields.rank ?? processKey(line)}`;
    const loop = this.seen.get(loopKey);
    if (loop === undefined || time - loop.loopStart > this.loopWindow) {
      this.remember(loopKey, { raised: time, loopStart: time, loopCount: 1, looped: false });
    } else if (++loop.loopCount > this.loopCount && !loop.looped) {
      loop.looped = true;
      return 'loop';
    }
    if (seen !== undefined && time - seen.raised <= this.window && time >= seen.raised) return 'repeat';
    this.remember(key, { raised: time, loopStart: time, loopCount: 1, looped: false });
    return 'first';
  }

  clear(): void {
    this.seen.clear();
  }

  private remember(key: string, v: RequestSeen): void {
    this.seen.delete(key);
    this.seen.set(key, v);
    if (this.seen.size > PER_REQUEST_KEEP) this.seen.delete(this.seen.keys().next().value!);
  }
}
