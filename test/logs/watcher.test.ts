import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { steppedPoll } from '../helpers/stepped-poll.js';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';

let dir: string;
const stops: (() => Promise<void>)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-logs-'));
});
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  rmSync(dir, { recursive: true, force: true });
});

async function started(h: ReturnType<typeof harness>) {
  await h.watcher.start();
  stops.push(() => h.watcher.stop());
  return h;
}

const ABORT = (n: number) =>
  `[2026-02-19 16:32:51 TP0] Prefill bootstrap failed for request rank=0 req.rid='r${n}' req.bootstrap_room=${n} with exception KVTransferError(bootstrap_room=${n}): Aborted by AbortReq.\n`;

describe('LogWatcher', () => {
  it('starts at the end by default, then reports appended lines as events with file and offset', async () => {
    const f = join(dir, 'prefill.log');
    writeFileSync(f, ABORT(1) + ABORT(2));
    const h = await started(harness({ sources: [source({ path: f, service: 'prefill' })], stateDir: dir }));
    const before = fs.statSync(f).size;
    appendFileSync(f, `[t TP0] Decode batch, #running-req: 4, #queue-req: 2, \n${ABORT(3)}`);
    await waitFor(() => h.events.length === 1, { what: 'one event' });
    const e = h.events[0]!;
    expect(e).toMatchObject({
      kind: 'log',
      target: 't1',
      service: 'prefill',
      rule: 'sglang_prefill_bootstrap_aborted',
      severity: 'warning',
      file: f,
    });
    expect(e.offset).toBe(before + '[t TP0] Decode batch, #running-req: 4, #queue-req: 2, \n'.length);
    expect(await h.value('logLines')).toBe(2);
    expect(await h.value('logEvents', { rule: 'sglang_prefill_bootstrap_aborted', service: 'prefill' })).toBe(
      1,
    );
    expect(await h.value('engineRunning', { service: 'prefill' })).toBe(4);
    expect(h.engine.at(-1)).toMatchObject({
      kind: 'engine',
      source: 'log',
      running: 4,
      queued: 2,
      service: 'prefill',
    });
  });

  it('from: start reads existing content; a glob picks up files created later, from their start', async () => {
    writeFileSync(join(dir, 'a.log'), ABORT(1));
    writeFileSync(join(dir, 'other.txt'), ABORT(9));
    const h = await started(
      harness({ sources: [source({ path: join(dir, '*.log'), from: 'start' })], stateDir: dir }),
    );
    await waitFor(() => h.events.length === 1, { what: 'existing line' });
    writeFileSync(join(dir, 'b.log'), ABORT(2) + ABORT(3));
    await waitFor(() => h.events.length === 3, { what: 'new file lines' });
    expect(h.events.map((e) => (e.file.endsWith('b.log') ? 'b' : 'a'))).toEqual(['a', 'b', 'b']);
  });

  it('after a restart, counts lines written while stopped exactly once', async () => {
    const f = join(dir, 'decode.log');
    writeFileSync(f, '');
    const src = [source({ path: f })];
    const a = harness({ sources: src, stateDir: dir });
    await a.watcher.start();
    appendFileSync(f, ABORT(1) + 'x\n');
    await waitFor(async () => (await a.value('logLines')) === 2, { what: 'first lines' });
    await a.watcher.stop();
    appendFileSync(f, ABORT(2) + ABORT(3) + 'y\npartial');
    const b = await started(harness({ sources: src, stateDir: dir }));
    await waitFor(() => b.events.length === 2, { what: 'lines written while down' });
    appendFileSync(f, ' end\n');
    await waitFor(async () => (await b.value('logLines')) === 4, { what: 'partial completed' });
    expect(b.events.map((e) => e.line)).toEqual([ABORT(2).trimEnd(), ABORT(3).trimEnd()]);
    await b.watcher.stop();
    // Restarting again with nothing new reads nothing.
    const c = await started(harness({ sources: src, stateDir: dir }));
    appendFileSync(f, ABORT(4));
    await waitFor(() => c.events.length === 1, { what: 'the new line only' });
    expect(await c.value('logLines')).toBe(1);
  });

  it('a backlog over maxCatchUpBytes is cut to its last whole lines, never starting mid-line', async () => {
    const f = join(dir, 'decode.log');
    writeFileSync(f, '');
    const src = [source({ path: f, maxCatchUpBytes: ABORT(10).length + 7 })];
    const a = harness({ sources: src, stateDir: dir });
    await a.watcher.start();
    await a.watcher.stop();
    appendFileSync(f, ABORT(10) + ABORT(11) + ABORT(12));
    const b = await started(harness({ sources: src, stateDir: dir }));
    await waitFor(() => b.events.length >= 1, { what: 'the backlog tail' });
    appendFileSync(f, ABORT(13));
    await waitFor(() => b.events.length === 2, { what: 'the next line' });
    // The limit lands 7 bytes into line 11: that line is skipped whole, 12 and 13 are read intact.
    expect(b.events.map((e) => e.line)).toEqual([ABORT(12).trimEnd(), ABORT(13).trimEnd()]);
    expect(await b.value('logLines')).toBe(2);
    // The skipped bytes are counted, not only logged: all of line 10 and the 7 bytes the limit fell short by.
    expect(await b.value('logSkippedBytes')).toBe(ABORT(10).length + ABORT(11).length - 7);
  });

  it('a file renamed while stopped resumes at its saved offset under the new name (glob covering both)', async () => {
    const f = join(dir, 'a.log');
    writeFileSync(f, '');
    const src = [source({ path: join(dir, 'a.log*') })];
    const a = harness({ sources: src, stateDir: dir });
    await a.watcher.start();
    appendFileSync(f, ABORT(1) + ABORT(2));
    await waitFor(() => a.events.length === 2, { what: 'the first lines' });
    await a.watcher.stop();
    appendFileSync(f, ABORT(3)); // written while down, then rotated away by rename
    renameSync(f, `${f}.1`);
    writeFileSync(f, ABORT(4));
    const b = await started(harness({ sources: src, stateDir: dir }));
    await waitFor(() => b.events.length === 2, { what: 'line 3 from a.log.1 and line 4 from the new a.log' });
    expect(b.events.map((e) => e.line).sort()).toEqual([ABORT(3).trimEnd(), ABORT(4).trimEnd()].sort());
  });

  it("at a rename, the old file's last lines come before the new file's (events keep file order)", async () => {
    const f = join(dir, 'decode.log');
    writeFileSync(f, '');
    const h = await started(harness({ sources: [source({ path: f })], stateDir: dir }));
    appendFileSync(f, ABORT(1));
    await waitFor(() => h.events.length === 1, { what: 'the first line' });
    // In one turn, as a writer reopening after logrotate would: rename, a late write to the old inode, a new file.
    renameSync(f, `${f}.1`);
    appendFileSync(`${f}.1`, ABORT(2));
    writeFileSync(f, ABORT(3));
    await waitFor(() => h.events.length === 3, { what: 'both files read' });
    expect(h.events.map((e) => e.line)).toEqual([ABORT(1), ABORT(2), ABORT(3)].map((l) => l.trimEnd()));
  });

  it('reads a file replaced while stopped from its start', async () => {
    const f = join(dir, 'decode.log');
    writeFileSync(f, ABORT(1).repeat(20));
    const src = [source({ path: f })];
    const a = harness({ sources: src, stateDir: dir });
    await a.watcher.start();
    await a.watcher.stop();
    unlinkSync(f);
    writeFileSync(f, ABORT(2));
    const b = await started(harness({ sources: src, stateDir: dir }));
    await waitFor(() => b.events.length === 1, { what: 'replaced file read from 0' });
    expect(b.events[0]!.offset).toBe(0);
  });

  it('a missing file is an error metric, then followed from its start once it appears', async () => {
    const f = join(dir, 'later.log');
    const h = await started(harness({ sources: [source({ path: f })], stateDir: dir }));
    await waitFor(async () => (await h.value('logReadErrors', { reason: 'missing' })) === 1, {
      what: 'missing metric',
    });
    writeFileSync(f, ABORT(1));
    await waitFor(() => h.events.length === 1, { what: 'line of the new file' });
  });

  it('a glob that matches nothing is one error for the whole streak, not one per poll', async () => {
    const empty = join(dir, 'empty');
    const other = join(dir, 'other');
    mkdirSync(empty);
    mkdirSync(other);
    const h = await started(
      harness({
        sources: [
          source({ path: join(empty, '*.log') }),
          source({ path: join(other, '*.log'), service: 'x' }),
        ],
        stateDir: dir,
      }),
    );
    await waitFor(
      async () => (await h.value('logReadErrors', { reason: 'missing', service: 'decode' })) === 1,
      {
        what: 'the first missing error',
      },
    );
    // Many polls later (a file picked up by the other source proves they ran), still one.
    writeFileSync(join(other, 'a.log'), ABORT(1));
    await waitFor(() => h.events.length === 1, { what: 'the other source to read its new file' });
    writeFileSync(join(other, 'b.log'), ABORT(2));
    await waitFor(() => h.events.length === 2, { what: 'a second new file' });
    expect(await h.value('logReadErrors', { reason: 'missing', service: 'decode' })).toBe(1);
  });

  it('a directory at the path is an unreadable error, an open that fails is a permission error; no crash', async () => {
    mkdirSync(join(dir, 'isdir.log'));
    const locked = join(dir, 'locked.log');
    writeFileSync(locked, ABORT(1));
    let denied = true;
    let opens = 0;
    const failingFs = {
      ...fs,
      openSync: ((p: fs.PathLike, flags: fs.OpenMode) => {
        if (String(p) === locked) {
          opens++;
          if (denied) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
        }
        return fs.openSync(p, flags);
      }) as typeof fs.openSync,
    };
    const clock = steppedPoll();
    const h = await started(
      harness({
        sources: [
          source({ path: join(dir, 'isdir.log'), service: 'a' }),
          source({ path: locked, service: 'b', from: 'start' }),
        ],
        stateDir: dir,
        follow: { fs: failingFs, poll: clock.poll },
      }),
    );
    // start() polls once.
    expect(await h.value('logReadErrors', { reason: 'unreadable', service: 'a' })).toBe(1);
    expect(await h.value('logReadErrors', { reason: 'permission', service: 'b' })).toBe(1);
    // Five more polls: each retries the open (counted here), none counts the error again.
    const before = opens;
    clock.step(5);
    expect(opens - before).toBe(5);
    expect(await h.value('logReadErrors', { reason: 'permission', service: 'b' })).toBe(1);
    expect(await h.value('logReadErrors', { reason: 'unreadable', service: 'a' })).toBe(1);
    // The retry is real: once the open succeeds, the file is read.
    denied = false;
    clock.step();
    expect(h.events.map((e) => e.line)).toEqual([ABORT(1).trimEnd()]);
  });

  it('a binary file is an error metric; a 10 MB single line is truncated, counted, and reading goes on', async () => {
    const bin = join(dir, 'bin.log');
    const big = join(dir, 'big.log');
    writeFileSync(bin, '');
    writeFileSync(big, '');
    const h = await started(
      harness({
        sources: [source({ path: bin, service: 'bin' }), source({ path: big, service: 'big' })],
        stateDir: dir,
      }),
    );
    appendFileSync(bin, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 2, 3, 10, 0, 0]));
    await waitFor(async () => (await h.value('logReadErrors', { reason: 'binary', service: 'bin' })) === 1, {
      what: 'binary',
    });
    appendFileSync(big, `ERR ${'q'.repeat(10 * 1024 * 1024)}\n${ABORT(5)}`);
    await waitFor(() => h.events.length === 1, { what: 'line after the huge one' });
    expect(await h.value('logReadErrors', { reason: 'line_too_long', service: 'big' })).toBe(1);
    expect(await h.value('logLinesTruncated', { service: 'big' })).toBe(1);
    expect(await h.value('logLines', { service: 'big' })).toBe(2);
  });

  it('holds a partial last line until its newline, however long it stays idle (issue 16 item 4)', async () => {
    const f = join(dir, 'p.log');
    writeFileSync(f, '');
    let t = 1_000_000;
    let feeds = 0;
    const h = await started(
      harness({
        sources: [source({ path: f })],
        userRules: [
          { name: 'whole', severity: 'info', class: 'custom', match: 'seq=(?<seq>\\d+) (?<tail>\\w+)$' },
        ],
        stateDir: dir,
        now: () => t,
        // Called on every read, a partial line's too.
        onRead: () => void feeds++,
      }),
    );
    const opened = feeds;
    appendFileSync(f, 'seq=5 hal');
    await waitFor(() => feeds > opened, { what: 'the partial line read' });
    // Ten idle times later (the harness flushes after 300 ms of quiet), as seen by a poll.
    t += 3000;
    await waitFor(async () => (await h.value('logFollowerTick')) === t / 1000, { what: 'a poll after idle' });
    expect(await h.value('logLines')).toBe(0);
    appendFileSync(f, 'ves\n');
    await waitFor(() => h.events.length === 1, { what: 'the whole line' });
    expect(h.events[0]!.fields).toMatchObject({ seq: '5', tail: 'halves' });
    expect(await h.value('logLines')).toBe(1);
  });

  it('polls on the clock it is given: one subscription per follower, a read per step, let go at stop', async () => {
    const f = join(dir, 'c.log');
    writeFileSync(f, '');
    const clock = steppedPoll();
    const h = harness({ sources: [source({ path: f })], stateDir: dir, follow: { poll: clock.poll } });
    await h.watcher.start();
    expect(clock.subscribers).toBe(1);
    appendFileSync(f, ABORT(1));
    clock.step();
    expect(h.events).toHaveLength(1);
    await h.watcher.stop();
    expect(clock.subscribers).toBe(0);
  });

  it('follows a rename: lines written to the old inode after the rename are not lost', async () => {
    const f = join(dir, 'r.log');
    writeFileSync(f, '');
    const clock = steppedPoll();
    // A fixed time: the renamed file is never quiet long enough to be let go between these polls.
    const h = await started(
      harness({
        sources: [source({ path: f })],
        stateDir: dir,
        now: () => 1_000_000,
        follow: { poll: clock.poll },
      }),
    );
    const fd = fs.openSync(f, 'a');
    fs.writeSync(fd, ABORT(1));
    renameSync(f, `${f}.1`);
    // One poll: the rename is seen and the old inode retired before the writer writes to it again.
    clock.step();
    expect(await h.value('logRotations', { kind: 'rename' })).toBe(1);
    expect(h.events).toHaveLength(1);
    fs.writeSync(fd, ABORT(2));
    fs.closeSync(fd);
    writeFileSync(f, ABORT(3));
    clock.step();
    expect(h.events.map((e) => e.line)).toEqual([ABORT(1), ABORT(2), ABORT(3)].map((l) => l.trimEnd()));
    expect(await h.value('logRotations', { kind: 'rename' })).toBe(1);
  });
});
