// Issue 24 finding 5: the follower stat()ed a path, saw a regular file, then opened it without O_NONBLOCK. A FIFO
// swapped in between blocked open() until a writer came: the daemon froze for good, SIGTERM ignored. The race is
// made deterministic here: the injected statSync swaps the file for a FIFO right after answering.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LogWindows, type LogWindow } from '../../src/outputs/incidents/log-window.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';
import { harness, source } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ABORT = (n: number) =>
  `[2026-02-19 16:32:51 TP0] Prefill bootstrap failed for request rank=0 req.rid='r${n}' req.bootstrap_room=${n} with exception KVTransferError(bootstrap_room=${n}): Aborted by AbortReq.\n`;

const isFifo = (p: fs.PathLike) => {
  try {
    return fs.lstatSync(p).isFIFO();
  } catch {
    return false;
  }
};

it('a FIFO swapped in between the stat and the open: no freeze, skipped with a warning, the file read once regular again, and stop() returns', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ww-fifo-swap-'));
  dirs.push(dir);
  const f = join(dir, 'prefill.log');
  let swaps = 0;
  /** A blocking open() of the FIFO: what froze the daemon. Thrown instead of done, or the test runner froze too. */
  let blockingOpen = false;
  const racingFs = {
    ...fs,
    statSync: ((p: fs.PathLike, o?: fs.StatSyncOptions) => {
      const st = fs.statSync(p, o);
      if (String(p) === f && swaps === 0 && st?.isFile()) {
        swaps++;
        unlinkSync(f);
        execFileSync('mkfifo', [f]);
      }
      return st;
    }) as typeof fs.statSync,
    openSync: ((p: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
      const nonBlocking = typeof flags === 'number' && (flags & fs.constants.O_NONBLOCK) !== 0;
      if (isFifo(p) && !nonBlocking) {
        blockingOpen = true;
        throw Object.assign(new Error('open() of a FIFO without O_NONBLOCK: blocks until a writer comes'), {
          code: 'EFROZEN',
        });
      }
      return fs.openSync(p, flags ?? 'r', mode);
    }) as typeof fs.openSync,
  };
  const { logger, lines } = capturingLogger('warn');
  const h = harness({
    sources: [source({ path: f, service: 'prefill', from: 'start' })],
    stateDir: dir,
    logger,
    follow: { pollMs: 30, idleFlushMs: 300, retireQuietMs: 1000, fs: racingFs },
  });
  await h.watcher.start();
  try {
    // Appears as a regular file; the next poll's stat sees it, then the FIFO takes its place before the open.
    writeFileSync(f, ABORT(1));
    await waitFor(
      async () => (await h.value('logReadErrors', { reason: 'unreadable', service: 'prefill' })) === 1,
      {
        what: () => `the FIFO to be refused (blocking open: ${blockingOpen}; log: ${lines.join('')})`,
      },
    );
    expect(swaps).toBe(1);
    expect(blockingOpen).toBe(false);
    expect(lines.join('')).toMatch(/log source: not a regular file/);
    // Regular again: followed from its start as configured.
    unlinkSync(f);
    writeFileSync(f, ABORT(2));
    await waitFor(() => h.events.length === 1, { what: 'the regular file to be read' });
    expect(h.events[0]!.fields).toMatchObject({ rid: 'r2' });
  } finally {
    await h.watcher.stop();
  }
});

it("an incident's log window of a followed path that became a FIFO: skipped, no libuv pool thread stuck in open()", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ww-fifo-window-'));
  dirs.push(dir);
  const fifo = join(dir, 'prefill.log');
  const regular = join(dir, 'decode.log');
  execFileSync('mkfifo', [fifo]);
  writeFileSync(regular, ABORT(1));
  const windows = new LogWindows();
  windows.noteRead('prefill', fifo, 0, 1000);
  windows.noteRead('decode', regular, 0, 1000);
  let out: LogWindow[] | undefined;
  void windows.read(0, 1 << 20).then((w) => (out = w));
  try {
    const read = await waitFor(() => out, { timeoutMs: 5000, what: 'the windows to be read' });
    expect(read.map((w) => w.service)).toEqual(['decode']);
  } finally {
    // Had open() blocked, a writer releases the pool thread so the run can end (ENXIO: no reader, nothing to do).
    try {
      fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // no reader waiting
    }
  }
});
