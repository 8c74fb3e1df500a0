// bcrypt compares on a worker thread. A compare is tens of milliseconds of pure CPU (bcryptjs is JavaScript);
// on the main thread a flood of wrong passwords stalled every request, every probe's timing and the log
// followers (issue 16 item 6: chat TTFT 20 ms → 533 ms). One worker: the main thread keeps the other core.
import { createRequire } from 'node:module';
import { threadId, Worker } from 'node:worker_threads';

export interface CompareResult {
  ok: boolean;
  /** The thread that ran the compare (tests check it is not the main one). */
  threadId: number;
}

export type Compare = (password: string, hash: string) => Promise<CompareResult>;

// Plain CommonJS evaluated in the worker: no build step, works from src/ (tests) and dist/ alike.
const WORKER_SOURCE = `
const { parentPort, workerData, threadId } = require('node:worker_threads');
const bcrypt = require(workerData.bcrypt);
parentPort.on('message', ({ id, password, hash }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  parentPort.postMessage({ id, ok, threadId });
});
`;

/** A single worker thread that runs bcrypt compares in order; started on first use, unref'd (never holds exit). */
export class BcryptWorker {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, (r: CompareResult) => void>();

  compare: Compare = (password, hash) =>
    new Promise<CompareResult>((resolve) => {
      const w = this.start();
      const id = this.nextId++;
      this.pending.set(id, resolve);
      w.postMessage({ id, password, hash });
    });

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { bcrypt: createRequire(import.meta.url).resolve('bcryptjs') },
      // A compare needs little memory; keep the worker small.
      resourceLimits: { maxOldGenerationSizeMb: 32 },
    });
    w.unref();
    w.on('message', (m: { id: number; ok: boolean; threadId: number }) => {
      const resolve = this.pending.get(m.id);
      this.pending.delete(m.id);
      resolve?.({ ok: m.ok, threadId: m.threadId });
    });
    // A dead worker fails its compares closed (401) and is replaced on the next one.
    const fail = () => {
      if (this.worker === w) this.worker = undefined;
      for (const resolve of this.pending.values()) resolve({ ok: false, threadId });
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', fail);
    this.worker = w;
    return w;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}

/** The process-wide worker: every BasicAuth (one per web config) shares it. */
export const bcryptWorker = new BcryptWorker();
