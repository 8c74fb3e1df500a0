// Issue 16 item 11: a full state directory. Saves go through a temp file and a rename, so ENOSPC leaves the
// old file whole and no temp file behind; temp files a crash left are removed on load; a failed offsets save
// has its own counter and is no read error of any log source; a torn journal line swallows no event.
import * as realFs from 'node:fs';
import * as realFsp from 'node:fs/promises';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Journal } from '../../src/outputs/journal/journal.js';
import { OffsetStore } from '../../src/sources/logs/tail/offsets.js';
import { CursorStore } from '../../src/lib/state-store.js';
import { waitFor } from '../helpers/wait.js';
import { harness, source } from './helpers.js';
import { quietLogger } from '../helpers/logger.js';

/** While set, writes to matching files write half their bytes and fail with ENOSPC (a disk filling up). */
const full = { on: false, match: /./ };
const enospc = () => Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });

vi.mock('node:fs', async (orig) => {
  const fs = await orig<typeof realFs>();
  const paths = new Map<number, string>();
  const openSync = (p: realFs.PathLike, ...rest: unknown[]) => {
    const fd = (fs.openSync as (...a: unknown[]) => number)(p, ...rest);
    paths.set(fd, String(p));
    return fd;
  };
  const writeSync = (fd: number, buf: Buffer, ...rest: unknown[]) => {
    if (full.on && full.match.test(paths.get(fd) ?? '')) {
      fs.writeSync(fd, buf.subarray(0, Math.floor(buf.length / 2)));
      throw enospc();
    }
    return (fs.writeSync as (...a: unknown[]) => number)(fd, buf, ...rest);
  };
  const writeFileSync = (p: realFs.PathOrFileDescriptor, data: string, ...rest: unknown[]) => {
    if (full.on && full.match.test(String(p))) {
      fs.writeFileSync(p, data.slice(0, Math.floor(data.length / 2)));
      throw enospc();
    }
    return (fs.writeFileSync as (...a: unknown[]) => void)(p, data, ...rest);
  };
  return {
    ...fs,
    default: { ...fs, openSync, writeSync, writeFileSync },
    openSync,
    writeSync,
    writeFileSync,
  };
});

vi.mock('node:fs/promises', async (orig) => {
  const fsp = await orig<typeof realFsp>();
  const appendFile = async (p: string, data: string) => {
    if (full.on && full.match.test(p)) {
      await fsp.appendFile(p, data.slice(0, Math.floor(data.length / 2)));
      throw enospc();
    }
    return fsp.appendFile(p, data);
  };
  const open = async (p: string, flags: string) => {
    const fh = await fsp.open(p, flags);
    if (!(full.on && full.match.test(p))) return fh;
    // A handle whose writes land half and fail, as on a full disk.
    return new Proxy(fh, {
      get(target, key) {
        if (key === 'write')
          return async (buf: Buffer, off = 0, len = buf.length - off) => {
            await target.write(buf, off, Math.floor(len / 2));
            throw enospc();
          };
        const v = Reflect.get(target, key) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  return { ...fsp, default: { ...fsp, appendFile, open }, appendFile, open };
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-state-'));
  full.on = false;
});
afterEach(() => {
  full.on = false;
  rmSync(dir, { recursive: true, force: true });
});

describe('offsets and cursors stores', () => {
  it('a save on a full disk leaves the previous file whole and no temp file', () => {
    const s = new OffsetStore(dir, 't1');
    s.set('/a.log', { ino: 1, dev: 1, offset: 10, fp: 'ab', fpLen: 2 });
    s.save();
    const before = readFileSync(s.file, 'utf8');
    s.set('/a.log', { ino: 1, dev: 1, offset: 20, fp: 'ab', fpLen: 2 });
    full.match = /log-offsets/;
    full.on = true;
    expect(() => s.save()).toThrow(/ENOSPC/);
    expect(readFileSync(s.file, 'utf8')).toBe(before);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    full.on = false;
    s.save();
    const again = new OffsetStore(dir, 't1');
    expect(again.load()).toEqual({});
    expect(again.get('/a.log')?.offset).toBe(20);
  });

  it('a background save never lands over a newer synchronous one (a stop), and leaves no temp file', async () => {
    const s = new OffsetStore(dir, 't1');
    const errors: string[] = [];
    s.set('/a.log', { ino: 1, dev: 1, offset: 10 });
    s.saveThrottled(0, 1000, false, (m) => errors.push(m));
    // The stop's save, made while the background one is still writing its temp file.
    s.set('/a.log', { ino: 1, dev: 1, offset: 20 });
    s.saveThrottled(1, 1000, true, (m) => errors.push(m));
    await s.settled();
    const saved = JSON.parse(readFileSync(s.file, 'utf8')) as { files: Record<string, { offset: number }> };
    expect(saved.files['/a.log']!.offset).toBe(20);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a background save on a full disk is reported once, retried when due, and lands once there is room', async () => {
    const s = new OffsetStore(dir, 't1');
    const errors: string[] = [];
    const report = (m: string) => errors.push(m);
    full.match = /log-offsets/;
    full.on = true;
    s.set('/a.log', { ino: 1, dev: 1, offset: 10 });
    s.saveThrottled(0, 10, false, report);
    await s.settled();
    s.saveThrottled(5, 10, false, report); // not due yet
    s.saveThrottled(20, 10, false, report);
    await s.settled();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/ENOSPC/);
    expect(readdirSync(dir)).toEqual([]);
    full.on = false;
    s.saveThrottled(40, 10, false, report);
    await s.settled();
    expect(new OffsetStore(dir, 't1').load()).toEqual({});
    expect(
      (JSON.parse(readFileSync(s.file, 'utf8')) as { files: Record<string, { offset: number }> }).files[
        '/a.log'
      ]!.offset,
    ).toBe(10);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('temp files a crash left behind are removed on load', () => {
    writeFileSync(join(dir, 'log-offsets-t1.json.4242.tmp'), '{"version":1,"fi');
    writeFileSync(join(dir, 'journal-cursors-t1.json.4242.tmp'), '{');
    writeFileSync(join(dir, 'unrelated.tmp'), 'x');
    expect(new OffsetStore(dir, 't1').load()).toEqual({});
    expect(new CursorStore(dir, 't1').load()).toEqual({});
    expect(readdirSync(dir).sort()).toEqual(['unrelated.tmp']);
  });
});

describe('LogWatcher on a full state directory', () => {
  it('counts a failed offsets save once as a state save error, never as a read error of a source', async () => {
    const state = join(dir, 'state');
    mkdirSync(state);
    const a = join(dir, 'a.log');
    const b = join(dir, 'b.log');
    writeFileSync(a, '');
    writeFileSync(b, '');
    const h = harness({
      sources: [source({ path: a, service: 'a', packs: [] }), source({ path: b, service: 'b', packs: [] })],
      userRules: [{ name: 'seq', severity: 'info', class: 'custom', match: 'seq=(?<seq>\\d+)' }],
      stateDir: state,
      follow: { pollMs: 20, saveEveryMs: 20 },
    });
    full.match = /log-offsets/;
    full.on = true;
    await h.watcher.start();
    try {
      realFs.appendFileSync(a, 'seq=1\n');
      realFs.appendFileSync(b, 'seq=2\n');
      await waitFor(() => h.events.length === 2, { what: 'both lines' });
      await waitFor(async () => (await h.value('stateSaveErrors', { store: 'log_offsets' })) >= 1);
      realFs.appendFileSync(a, 'seq=3\n');
      await waitFor(() => h.events.length === 3, { what: 'reading goes on' });
      expect(await h.value('stateSaveErrors', { store: 'log_offsets' })).toBe(1);
      expect(await h.value('logReadErrors')).toBe(0);
    } finally {
      full.on = false;
      await h.watcher.stop();
    }
    // Saves run in the background: once stopped, none is in flight and none left its temp file.
    expect(readdirSync(state).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const saved = JSON.parse(readFileSync(join(state, 'log-offsets-t1.json'), 'utf8')) as {
      files: Record<string, { offset: number }>;
    };
    expect(saved.files[a]!.offset).toBe(12);
  });
});

describe('events journal on a full disk', () => {
  it('a torn line swallows no event: the failed write is cut back and retried', async () => {
    const errors: string[] = [];
    const j = new Journal({
      dir,
      logger: quietLogger('fatal'),
      retryMs: 20,
      onWriteError: (m) => errors.push(m),
    });
    const ev = (n: number) =>
      ({ time: n, target: 't', type: 'confirm', summary: `event ${n}`, data: { reason: 'r' } }) as const;
    j.append(ev(1));
    await j.flush();
    full.match = /events\.jsonl/;
    full.on = true;
    j.append(ev(2));
    await j.flush();
    full.on = false;
    j.append(ev(3));
    await waitFor(
      () => {
        const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean);
        return lines.length >= 3 ? lines : undefined;
      },
      { what: 'three lines' },
    );
    await j.flush();
    const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean);
    const parsed = lines.map((l) => JSON.parse(l) as { summary: string });
    expect(parsed.map((e) => e.summary).sort()).toEqual(['event 1', 'event 2', 'event 3']);
    expect(errors).toHaveLength(1);
    const again = new Journal({ dir, logger: quietLogger('fatal') });
    expect(
      again
        .query()
        .map((e) => e.summary)
        .sort(),
    ).toEqual(['event 1', 'event 2', 'event 3']);
  });
});
