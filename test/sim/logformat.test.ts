// The simulator's log lines against the format strings quoted in the reference (test/fixtures/sim).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type Sim } from '../../src/sim/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, openStream, streamChat } from './client.js';

interface FormatEntry {
  name: string;
  log: 'prefill' | 'decode' | 'router';
  prefix: 'scheduler' | 'http' | 'none' | 'router';
  format: string;
  example?: string;
}
const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/sim/sglang-formats.json', import.meta.url), 'utf8'),
) as { formats: FormatEntry[]; traceback: string[] };

const PREFIX: Record<FormatEntry['prefix'], string> = {
  // [%Y-%m-%d %H:%M:%S<rank parts>]: DP/PP/TP/EP parts only on scheduler lines.
  scheduler: String.raw`\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z_]+\d+)+\] `,
  http: String.raw`\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] `,
  none: '',
  router: String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +`,
};

const escape = (s: string) => s.replace(/[.*+?^$()|[\]\\/]/g, '\\$&');

/** A Python f-string becomes a regex: `{x:.2f}` a 2-decimal number, `{x:.1f}` 1 decimal, `{x}` any text. */
function formatToRegex(e: FormatEntry): RegExp {
  let re = '';
  let i = 0;
  for (const m of e.format.matchAll(/\{[^{}]*\}/g)) {
    re += escape(e.format.slice(i, m.index)).replace(/\{|\}/g, '\\$&');
    const spec = /:\.(\d)f\}$/.exec(m[0]);
    re += spec ? String.raw`-?\d+\.\d{${spec[1]}}` : '.+?';
    i = m.index + m[0].length;
  }
  re += escape(e.format.slice(i));
  // uvicorn's status is followed by the reason phrase.
  if (e.name === 'uvicorn_access') re += '(?: [A-Za-z ]+)?';
  return new RegExp(`^${PREFIX[e.prefix]}${re}$`);
}

describe('log formats', () => {
  let sim: Sim;
  const lines: Record<string, string[]> = {};
  beforeAll(async () => {
    // The reference formats are the mid-2025 ones (@01bb3c8): the legacy dialect.
    sim = await startSim({
      sglangFormat: 'legacy',
      faults: ['nixl_abort_unhandled'],
      waitingTimeoutMs: 400,
      bootstrapTimeoutMs: 300,
    });
    await streamChat(sim.urls.router, chatBody({ max_tokens: 45 })); // ≥ 40 decode steps: one Decode batch line
    const s = openStream(sim.urls.router, chatBody({ max_tokens: 500 }));
    await s.firstData;
    s.cut();
    await waitFor(() => !sim.state().bootstrapThreadAlive, { what: 'bootstrap thread death' });
    const stuck = await streamChat(sim.urls.router, chatBody(), 10_000); // ends at the waiting timeout
    expect(stuck.done).toBe(true);
    await waitFor(() => readFileSync(sim.logFiles.prefill, 'utf8').includes('KVPoll.Bootstrapping'), {
      what: 'the prefill timeout line',
    });
    for (const log of ['prefill', 'decode', 'router'] as const) {
      lines[log] = readFileSync(sim.logFiles[log], 'utf8').split('\n');
    }
  });
  afterAll(async () => {
    await sim.stop();
  });

  for (const entry of fixture.formats) {
    it(`${entry.name}: a ${entry.log}.log line matches the reference format`, () => {
      const re = formatToRegex(entry);
      if (entry.example) expect(entry.example).toMatch(re); // the regex is faithful to the reference
      expect(
        lines[entry.log]!.some((l) => re.test(l)),
        `no ${entry.log}.log line matches ${re}`,
      ).toBe(true);
    });
  }

  it('the thread-death traceback has the reference shape, with no timestamp prefix', () => {
    const start = lines.prefill!.findIndex((l) => l.startsWith('Exception in thread'));
    expect(start).toBeGreaterThanOrEqual(0);
    const block = lines.prefill!.slice(start, start + fixture.traceback.length);
    fixture.traceback.forEach((ref, i) => {
      const re = new RegExp(
        '^' +
          escape(ref)
            .replace(/\\\.\\\.\\\./g, '.+')
            .replace(/line N/, String.raw`line \d+`)
            .replace(/Thread-1/, String.raw`Thread-\d+`) +
          '$',
      );
      expect(block[i]).toMatch(re);
    });
  });

  it('every line of an engine log is framed like SGLang (timestamped) or is traceback text', () => {
    const framed = new RegExp(`^(?:${PREFIX.scheduler}|${PREFIX.http})`);
    const tb = new Set(fixture.traceback.map((_, i) => i));
    for (const log of ['prefill', 'decode'] as const) {
      const body = lines[log]!.filter((l) => l !== '');
      const start = body.findIndex((l) => l.startsWith('Exception in thread'));
      body.forEach((l, i) => {
        if (start >= 0 && tb.has(i - start)) return;
        expect(l).toMatch(framed);
      });
    }
  });
});
