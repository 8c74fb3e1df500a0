// Issue 30's acceptance in a real browser (Debian chromium, headless): `wedgewatch demo` runs through its incident
// and the status page draws it: the strip goes ok → degraded/wedged → ok at the journal's times, with the wedge's
// diagnosis, the remediation and the bundle marked inside the incident, and every probe slot has a sparkline with
// points. A screenshot is kept in test-artifacts/ for a person to look at.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { chromium, requireChromium } from './chromium.js';
import { sparklines } from './sparklines.js';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');

interface Ev {
  time: number;
  type: string;
  data?: Record<string, unknown>;
}

let demo: ChildProcess | undefined;
const out = { stdout: '', stderr: '' };
let base = '';
let events: Ev[] = [];
let dom = '';

async function json<T>(path: string): Promise<T> {
  return (await (await request(`${base}${path}`)).body.json()) as T;
}

beforeAll(async () => {
  requireChromium();
  demo = spawn(
    process.execPath,
    [CLI, 'demo', '--web.listen-address', '127.0.0.1:0', '--replay-after', '3s'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  demo.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  demo.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString()));
  base = await waitFor(() => /status page\s+(http:\/\/127\.0\.0\.1:\d+)\//.exec(out.stdout)?.[1], {
    timeoutMs: 20_000,
    what: () => `the status page line (stdout: ${out.stdout}, stderr: ${out.stderr})`,
  });
  await waitFor(() => /remediation \S+ success[\s\S]*state wedged → ok/.test(out.stdout), {
    timeoutMs: 120_000,
    intervalMs: 500,
    what: () => `remediation and recovery (stdout: ${out.stdout})`,
  });
  events = (await json<{ events: Ev[] }>('/api/events?target=sim-pd&limit=1000')).events;
  // Every slot's sparkline has its points before the page is read: how many runs a slot had by the recovery is the
  // machine's speed (a slow slot, every minute, could have three), so the page is polled (server-rendered, no
  // script: the HTML is what Chromium shows) until each has more than three, with a deadline.
  await waitFor(
    async () => {
      const status = await json<{
        targets: Array<{ target: string; probes: Array<Record<string, string>> }>;
      }>('/api/status');
      const slots = status.targets.find((t) => t.target === 'sim-pd')!.probes;
      const sparks = sparklines(await (await request(`${base}/?range=1h`)).body.text());
      return slots.every((sl) => (sparks.get(`${sl.probe} ${sl.endpoint} ${sl.conn}`)?.points ?? 0) > 3);
    },
    { timeoutMs: 120_000, intervalMs: 1000, what: 'more than three points on every sparkline' },
  );
  dom = await chromium(['--dump-dom'], `${base}/?range=1h`);
}, 300_000);

afterAll(async () => {
  if (demo && demo.exitCode === null && demo.signalCode === null) {
    const gone = new Promise((r) => demo!.once('exit', r));
    demo.kill('SIGINT');
    await gone;
  }
});

/** The attributes of every element `tag` with class `cls` in the card of sim-pd. */
function elements(tag: string, attr: string): Array<Record<string, string>> {
  const card = /<section class="card"[^>]*data-target="sim-pd"[^>]*>[\s\S]*?<\/section>/.exec(dom)?.[0] ?? '';
  const out: Array<Record<string, string>> = [];
  for (const m of card.matchAll(new RegExp(`<${tag}\\b([^>]*\\b${attr}="[^"]*"[^>]*)>`, 'g'))) {
    const attrs: Record<string, string> = {};
    for (const a of m[1]!.matchAll(/([\w-]+)="([^"]*)"/g)) attrs[a[1]!] = a[2]!.replace(/&amp;/g, '&');
    out.push(attrs);
  }
  return out;
}

describe('the status page draws the demo incident (chromium)', () => {
  it('strip: ok → degraded/wedged → ok at the journal times, with the diagnosis', () => {
    const segs = elements('rect', 'data-state').map((r) => ({
      state: r['data-state']!,
      from: Number(r['data-from']),
      to: Number(r['data-to']),
      diagnosis: r['data-diagnosis'],
    }));
    const known = segs.filter((s) => s.state !== 'no_history' && s.state !== 'unknown');
    // One run of states: ok, then the incident (degraded and/or wedged), then ok again.
    const shape = known.map((s) => (s.state === 'ok' ? 'ok' : 'bad')).filter((s, i, a) => s !== a[i - 1]);
    expect(shape, JSON.stringify(segs)).toEqual(['ok', 'bad', 'ok']);
    expect(known.some((s) => s.state === 'wedged')).toBe(true);

    const transitions = events.filter((e) => e.type === 'transition');
    const wedge = transitions.find((e) => e.data?.to === 'wedged')!;
    const recovery = transitions.find((e) => e.data?.from === 'wedged' && e.data?.to === 'ok')!;
    const incidentStart = transitions.find((e) => e.data?.from === 'ok' && e.data?.to !== 'ok')!;
    const wedged = known.find((s) => s.state === 'wedged')!;
    expect(wedged.from).toBe(wedge.time);
    expect(wedged.diagnosis).toBe(wedge.data?.diagnosis);
    expect(wedged.diagnosis).toBeTruthy();
    const bad = known.filter((s) => s.state !== 'ok');
    expect(bad[0]!.from).toBe(incidentStart.time);
    expect(bad.at(-1)!.to).toBe(recovery.time);
    expect(known.at(-1)!.from).toBe(recovery.time);
    // The text fallback says the same.
    expect(dom).toMatch(new RegExp(`<b>wedged</b> <code>${wedged.diagnosis}</code>`));
  });

  it('marks: the remediation and the bundle inside the incident, the bundle linking to it', () => {
    const marks = elements('g', 'data-kind').map((g) => ({
      kind: g['data-kind']!,
      time: Number(g['data-time']),
    }));
    const remediation = events.find((e) => e.type === 'remediation' && e.data?.result === 'success')!;
    const wedge = events.find((e) => e.type === 'transition' && e.data?.to === 'wedged')!;
    const recovery = events.find((e) => e.type === 'transition' && e.data?.from === 'wedged')!;
    const r = marks.find((m) => m.kind === 'remediation');
    expect(r?.time).toBe(remediation.time);
    expect(r!.time).toBeGreaterThanOrEqual(wedge.time);
    expect(r!.time).toBeLessThanOrEqual(recovery.time);
    const incident = events.find((e) => e.type === 'incident' && e.data?.result === 'captured')!;
    expect(marks.find((m) => m.kind === 'bundle')?.time).toBe(incident.time);
    expect(dom).toContain(`<a href="/api/incidents/${String(incident.data?.id)}">`);
    expect(marks.some((m) => m.kind === 'critical')).toBe(true);
  });

  it('sparklines: one with points for every probe slot', async () => {
    const status = await json<{ targets: Array<{ target: string; probes: Array<Record<string, string>> }> }>(
      '/api/status',
    );
    const slots = status.targets.find((t) => t.target === 'sim-pd')!.probes;
    expect(slots.length).toBeGreaterThanOrEqual(7);
    const sparks = sparklines(dom);
    for (const s of slots) {
      const spark = sparks.get(`${s.probe} ${s.endpoint} ${s.conn}`);
      expect(spark, `${s.probe} ${s.endpoint} ${s.conn}`).toBeDefined();
      expect(spark!.points).toBeGreaterThan(3);
    }
    // The wedge's hung or failed chat runs are marked (blocks under the line) on the chat sparklines.
    const chat = [...sparks].filter(([k]) => k.startsWith('chat ')).map(([, v]) => v.svg);
    expect(chat.length).toBe(4);
    expect(chat.some((c) => c.includes('class="f"'))).toBe(true);
  });

  it('offers 1h/6h/24h, runs no script, and keeps a screenshot', async () => {
    for (const r of ['6h', '24h']) expect(dom).toContain(`<a href="/?range=${r}">${r}</a>`);
    expect(dom).toContain('<b aria-current="page">1h</b>');
    expect(dom).not.toMatch(/<script/i);
    const res = await request(`${base}/?range=1h`);
    await res.body.dump();
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'status-strip.png');
    await chromium(
      [`--screenshot=${shot}`, '--window-size=1280,1000', '--hide-scrollbars'],
      `${base}/?range=1h`,
    );
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(readFileSync(shot).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
  });
});
