// Kubernetes pod logs as the kubelet's runtime writes them, through the real watcher: a directory glob over
// pods, CRI unwrapping, kubelet-style rotation, pods coming and going, a daemon restart mid-line.
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logSourceSchema, LOG_PACKS } from '../../src/config/schema.js';
import { DirGlobFollower } from '../../src/sources/logs/tail/dir-glob.js';
import { expandDirs } from '../../src/sources/logs/tail/resolve.js';
import type { FileReader } from '../../src/sources/logs/tail/types.js';
import { waitFor } from '../helpers/wait.js';
import { harness } from './helpers.js';
import { NUMBERED, criBytes, dockerBytes, engineLine } from './wrapped-lines.js';

let dir: string;
const stops: (() => Promise<void> | void)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-pods-'));
});
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 11, 1, 5, 0, 0);

/** CRI bytes for numbered lines [from, to]: every 7th over 16 KiB (split into P parts), every 3rd on stderr. */
function lines(from: number, to: number): Buffer {
  const out: Buffer[] = [];
  for (let n = from; n <= to; n++) {
    out.push(criBytes(engineLine(n, 20_000), T0 + n, n % 3 === 0 ? 'stderr' : 'stdout'));
  }
  return Buffer.concat(out);
}

type H = ReturnType<typeof harness>;

function exact(runs: H[], total: number) {
  const c = new Map<number, number>();
  for (const h of runs) {
    for (const e of h.events) {
      if (e.rule === 'numbered') c.set(Number(e.fields.n), (c.get(Number(e.fields.n)) ?? 0) + 1);
    }
  }
  const lost: number[] = [];
  const duplicated: number[] = [];
  for (let n = 1; n <= total; n++) {
    if (!c.has(n)) lost.push(n);
    else if (c.get(n)! > 1) duplicated.push(n);
  }
  return { lost, duplicated, extra: [...c.keys()].filter((n) => n < 1 || n > total).sort() };
}

const seen = (runs: H[]) =>
  runs.reduce((k, h) => k + h.events.filter((e) => e.rule === 'numbered').length, 0);

describe('Kubernetes pod logs (format: cri, directory glob)', () => {
  it('follows pods through rotation, new and removed pods and a restart mid-line: 0 lost, 0 duplicated', async () => {
    const pods = join(dir, 'pods');
    const podA = join(pods, 'llm_prefill-a_0001', 'sglang');
    const podB = join(pods, 'llm_prefill-b_0002', 'sglang');
    const other = join(pods, 'llm_decode-c_0003', 'sglang');
    mkdirSync(podA, { recursive: true });
    mkdirSync(other, { recursive: true });
    writeFileSync(join(podA, '0.log'), lines(1, 50));
    writeFileSync(join(other, '0.log'), lines(1001, 1010));
    const src = logSourceSchema.parse({
      service: 'prefill',
      packs: [...LOG_PACKS],
      from: 'start',
      format: 'cri',
      path: join(pods, 'llm_prefill-*', 'sglang', '*.log'),
    });
    const start = async () => {
      const h = harness({
        sources: [src],
        stateDir: join(dir, 'state'),
        userRules: [NUMBERED],
        follow: { pollMs: 50, idleFlushMs: 300, retireQuietMs: 500, rescanMs: 100 },
      });
      await h.watcher.start();
      stops.push(() => h.watcher.stop());
      return h;
    };
    const a = await start();
    await waitFor(() => seen([a]) === 50, { what: 'the first 50 lines' });
    // The runtime's timestamp is the event time; the stream is a field; offsets are file offsets.
    const e3 = a.events.find((e) => e.fields.n === '3')!;
    expect(e3).toMatchObject({ time: T0 + 3, fields: { stream: 'stderr' } });
    expect(e3.offset).toBe(lines(1, 2).length);

    // Kubelet rotation: 0.log renamed to 0.log.<time> (the runtime writes to it until it reopens), a new
    // 0.log, and an older rotated file compressed (never read: the glob asks for *.log).
    appendFileSync(join(podA, '0.log'), lines(51, 60));
    renameSync(join(podA, '0.log'), join(podA, '0.log.20261201-050000'));
    appendFileSync(join(podA, '0.log.20261201-050000'), lines(61, 65));
    writeFileSync(join(podA, '0.log.20261201-040000.gz'), lines(2001, 2005));
    writeFileSync(join(podA, '0.log'), lines(66, 80));
    await waitFor(() => seen([a]) === 80, { what: 'lines around the rotation' });
    expect(await a.value('logRotations', { kind: 'rename' })).toBe(1);

    // A new pod: read from its start. Then pod A goes away: what it wrote last is still read.
    mkdirSync(podB, { recursive: true });
    writeFileSync(join(podB, '0.log'), lines(81, 100));
    await waitFor(() => seen([a]) === 100, { what: 'the new pod' });
    appendFileSync(join(podA, '0.log'), lines(101, 110));
    rmSync(join(pods, 'llm_prefill-a_0001'), { recursive: true });
    await waitFor(() => seen([a]) === 110, { what: 'the removed pod drained' });

    // Stop with the first parts of a split line written, its last part and more lines written while down.
    const split = criBytes(engineLine(112, 40_000), T0 + 112, 'stdout');
    const cut = split.indexOf('\n') + 1;
    appendFileSync(join(podB, '0.log'), Buffer.concat([lines(111, 111), split.subarray(0, cut)]));
    await waitFor(() => seen([a]) === 111, { what: 'line 111' });
    await a.watcher.stop();
    appendFileSync(join(podB, '0.log'), Buffer.concat([split.subarray(cut), lines(113, 130)]));

    const b = await start();
    await waitFor(() => seen([a, b]) >= 130, { what: 'lines written while down' });
    expect(exact([a, b], 130)).toEqual({ lost: [], duplicated: [], extra: [] });
    expect(b.events.find((e) => e.fields.n === '112')!.line).toBe(engineLine(112, 40_000));
    expect(await b.value('logReadErrors')).toBe(0);
  });

  it('forgets a pod directory that went away, after draining it', async () => {
    const pods = join(dir, 'pods');
    mkdirSync(join(pods, 'ns_p-1_u', 'c'), { recursive: true });
    mkdirSync(join(pods, 'ns_p-2_u', 'c'), { recursive: true });
    mkdirSync(join(pods, 'ns_q-3_u', 'c'), { recursive: true });
    expect(expandDirs(join(pods, 'ns_p-*', 'c'))).toEqual([
      join(pods, 'ns_p-1_u', 'c'),
      join(pods, 'ns_p-2_u', 'c'),
    ]);
    writeFileSync(join(pods, 'ns_p-1_u', 'c', '0.log'), 'x\n');
    let fed = 0;
    let flushed = 0;
    const reader = (): FileReader => ({
      feed: (_b, n) => void (fed += n),
      flush: () => void flushed++,
      settle: () => undefined,
      reset: () => undefined,
      hasPartial: false,
      committed: 0,
    });
    const f = new DirGlobFollower({
      path: join(pods, 'ns_p-*', 'c', '*.log'),
      from: 'start',
      maxCatchUpBytes: 1 << 20,
      openReader: reader,
      pollMs: 50,
      rescanMs: 50,
    });
    f.start();
    stops.push(() => f.stop());
    await waitFor(() => fed === 2, { what: 'the first pod read' });
    expect(f.dirs()).toHaveLength(2);
    appendFileSync(join(pods, 'ns_p-1_u', 'c', '0.log'), 'yy\n');
    rmSync(join(pods, 'ns_p-1_u'), { recursive: true });
    await waitFor(() => f.dirs().length === 1, { what: 'the pod forgotten' });
    expect(fed).toBe(5);
    expect(flushed).toBe(1);
    expect(f.dirs()).toEqual([join(pods, 'ns_p-2_u', 'c')]);
  });
});

describe('Docker json-file logs (format: auto)', () => {
  it('unwraps escapes, joins partial entries, and sees a traceback split across entries once', async () => {
    const f = join(dir, 'abc-json.log');
    const tb = [
      'Exception in thread Thread-3 (bootstrap_thread):',
      'Traceback (most recent call last):',
      '  File "/sgl/disaggregation/nixl/conn.py", line 620, in bootstrap_thread',
      'RuntimeError: Bootstrap "room" failed',
    ];
    const N = 80;
    const entries = (from: number, to: number) =>
      Buffer.concat(
        Array.from({ length: to - from + 1 }, (_, i) =>
          dockerBytes(engineLine(from + i, 20_000), T0 + from + i),
        ),
      );
    writeFileSync(f, entries(1, 40));
    const h = harness({
      sources: [
        logSourceSchema.parse({
          service: 'decode',
          packs: [...LOG_PACKS],
          from: 'start',
          format: 'auto',
          path: f,
        }),
      ],
      stateDir: join(dir, 'state'),
      userRules: [NUMBERED],
    });
    await h.watcher.start();
    stops.push(() => h.watcher.stop());
    appendFileSync(f, Buffer.concat([...tb.map((l, i) => dockerBytes(l, T0 + 100 + i)), entries(41, N)]));
    await waitFor(() => seen([h]) === N, { what: 'every docker line' });
    expect(exact([h], N)).toEqual({ lost: [], duplicated: [], extra: [] });
    expect(h.events.find((e) => e.fields.n === '14')!.line).toBe(engineLine(14, 20_000));
    const ev = h.events.filter((e) => e.rule === 'python_thread_exception');
    expect(ev).toHaveLength(1);
    expect(ev[0]!.fields).toMatchObject({
      exception: 'RuntimeError',
      message: 'Bootstrap "room" failed',
      stream: 'stderr',
    });
    expect(ev[0]!.time).toBe(T0 + 100);
  });
});
