// Reads of the node memory both halves of the core use (the reducer while it journals, the verdict while it names):
// here, so that neither imports the other (as src/core/memory-read.ts).
import type { StuckCollective } from './node-signals.js';

/** T/t: stopped (a signal or a tracer); D: uninterruptible sleep (a driver call that does not return). */
export const stopped = (state: string): boolean => state === 'T' || state === 't' || state === 'D';

export const stuckText = (c: StuckCollective): string =>
  `NCCL communicator ${c.comm}: ${c.op} stuck, rank${c.behind.length > 1 ? 's' : ''} ${c.behind.join(', ')} at ${c.at} while others reached ${c.ahead}`;
