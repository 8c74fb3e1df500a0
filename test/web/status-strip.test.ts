// The status page's history (issue 30): the probe history's buckets and bound, the strip rebuilt from journal
// events, and both drawn as SVG that escapes what came from logs.
import { describe, expect, it } from 'vitest';
import type { JournalEvent } from '../../src/outputs/journal/journal.js';
import { readJournalEntry } from '../../src/outputs/journal/events.js';
import { BYTES_PER_SLOT, ProbeHistory, TIERS } from '../../src/sources/probes/history.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { renderStatusPage } from '../../src/outputs/server/status-page.js';
import { MIN_WINDOW_MS, parseRange, windowStart } from '../../src/outputs/server/status-page-route.js';
import { buildStrip } from '../../src/outputs/server/status-strip.js';
import { sparklines } from './sparklines.js';

const H = 3_600_000;
const NOW = Date.UTC(2026, 0, 2, 12, 0, 0);

function result(over: Partial<ProbeResultSignal>): ProbeResultSignal {
  return {
    kind: 'probe',
    target: 't',
    probe: 'chat',
    probeKind: 'chat',
    endpoint: 'router',
    conn: 'fresh',
    result: 'ok',
    start: NOW,
    durationMs: 100,
    ttftMs: 40,
    ...over,
  };
}

let seq = 0;
/** A journal entry as a file holds it (read back the way the journal reads its file). */
function ev(time: number, type: string, summary: string, data?: Record<string, unknown>): JournalEvent {
  return readJournalEntry({ seq: ++seq, time, target: 't', type, summary, data })!;
}

describe('probe history', () => {
  it('keeps per bucket the slowest passing run and counts failures; an overlap skip is not a run', () => {
    const h = new ProbeHistory();
    const t0 = Math.floor((NOW - 60_000) / 2500) * 2500;
    h.record(result({ start: t0, durationMs: 100, ttftMs: 40 }));
    h.record(result({ start: t0 + 1000, durationMs: 300, ttftMs: 20 }));
    h.record(result({ start: t0 + 2000, result: 'timeout', durationMs: 30_000, ttftMs: undefined }));
    h.record(result({ start: t0 + 2100, result: 'skipped_overlap', durationMs: 0 }));
    const [s] = h.series('t', NOW - 120_000, NOW);
    expect(s!.bucketMs).toBe(2500);
    expect(s!.points).toEqual([{ t: t0, durationMs: 300, ttftMs: 40, runs: 3, fails: 1 }]);
  });

  it('is bounded: a day of runs every second leaves at most one tier of buckets per window', () => {
    const h = new ProbeHistory();
    for (let t = NOW - 24 * H; t < NOW; t += 1000)
      h.record(result({ start: t, durationMs: (t / 1000) % 500 }));
    expect(h.slotCount()).toBe(1);
    expect(BYTES_PER_SLOT).toBeLessThan(10_000);
    for (const tier of TIERS) {
      const [s] = h.series('t', NOW - tier.spanMs, NOW);
      expect(s!.points.length).toBeLessThanOrEqual(tier.buckets);
      expect(s!.points.length).toBeGreaterThanOrEqual(tier.buckets - 1);
      expect(s!.lastBucket - s!.firstBucket + 1).toBeLessThanOrEqual(tier.buckets);
    }
  });

  it('forgets slots a reload removed', () => {
    const h = new ProbeHistory();
    h.record(result({ conn: 'fresh' }));
    h.record(result({ conn: 'keepalive' }));
    h.record(result({ target: 'gone' }));
    h.retain((target, _p, _e, conn) => target === 't' && conn === 'fresh');
    expect(h.slotCount()).toBe(1);
    expect(h.series('gone', NOW - H, NOW)).toEqual([]);
  });
});

describe('state strip from the journal', () => {
  const incident = [
    ev(NOW - 5 * H, 'transition', 'unknown → ok', {
      from: 'unknown',
      to: 'ok',
      diagnosis: null,
      cause: 'fine',
    }),
    ev(NOW - 2 * H, 'transition', 'ok → degraded', {
      from: 'ok',
      to: 'degraded',
      diagnosis: 'abort_storm',
      cause: 'aborts',
    }),
    ev(NOW - 2 * H + 60_000, 'critical_confirmed', 'nixl confirmed', { rule: 'nixl' }),
    ev(NOW - 2 * H + 60_000, 'transition', 'degraded → wedged', {
      from: 'degraded',
      to: 'wedged',
      diagnosis: 'kv_bootstrap_thread_dead',
      cause: 'thread died',
    }),
    ev(NOW - 2 * H + 61_000, 'incident', 'bundle', { id: '20260102T100101.000Z-t', result: 'captured' }),
    ev(NOW - 2 * H + 70_000, 'remediation', 'restart', { result: 'success' }),
    ev(NOW - 2 * H + 71_000, 'remediation', 'cooldown', { result: 'cooldown' }),
    ev(NOW - 2 * H + 90_000, 'transition', 'wedged → ok', {
      from: 'wedged',
      to: 'ok',
      diagnosis: null,
      cause: 'fine',
    }),
  ];
  const current = { state: 'ok' as const, since: NOW - 2 * H + 90_000 };

  it('draws ok → degraded → wedged → ok at the transitions, with the diagnosis, and marks what ran', () => {
    const s = buildStrip({ events: incident, coveredFrom: NOW - 5 * H, current, from: NOW - 6 * H, to: NOW });
    expect(s.segments.map((x) => [x.state, x.from, x.to, x.diagnosis])).toEqual([
      ['no_history', NOW - 6 * H, NOW - 5 * H, undefined],
      ['ok', NOW - 5 * H, NOW - 2 * H, undefined],
      ['degraded', NOW - 2 * H, NOW - 2 * H + 60_000, 'abort_storm'],
      ['wedged', NOW - 2 * H + 60_000, NOW - 2 * H + 90_000, 'kv_bootstrap_thread_dead'],
      ['ok', NOW - 2 * H + 90_000, NOW, undefined],
    ]);
    // The cooldown skip ran nothing and is not marked.
    expect(s.marks.map((m) => [m.kind, m.time, m.href])).toEqual([
      ['critical', NOW - 2 * H + 60_000, undefined],
      ['bundle', NOW - 2 * H + 61_000, '/api/incidents/20260102T100101.000Z-t'],
      ['remediation', NOW - 2 * H + 70_000, undefined],
    ]);
  });

  it('starts the window in the state the journal last held before it', () => {
    const s = buildStrip({ events: incident, coveredFrom: NOW - 5 * H, current, from: NOW - H, to: NOW });
    expect(s.segments).toEqual([
      { from: NOW - H, to: NOW, state: 'ok', cause: 'fine', diagnosis: undefined },
    ]);
    expect(s.marks).toEqual([]);
  });

  it('shows a restart (a transition from a state other than the one held) as no history, never guessed', () => {
    const events = [
      ev(NOW - 3 * H, 'transition', 'unknown → wedged', { from: 'unknown', to: 'wedged', diagnosis: 'x' }),
      ev(NOW - 3 * H + 1000, 'probe_failing', 'chat failing'),
      ev(NOW - H, 'transition', 'unknown → ok', { from: 'unknown', to: 'ok' }),
    ];
    const s = buildStrip({
      events,
      coveredFrom: NOW - 3 * H,
      current: { state: 'ok', since: NOW - H },
      from: NOW - 3 * H,
      to: NOW,
    });
    expect(s.segments.map((x) => [x.state, x.from, x.to])).toEqual([
      ['wedged', NOW - 3 * H, NOW - 3 * H + 1000],
      ['no_history', NOW - 3 * H + 1000, NOW - H],
      ['ok', NOW - H, NOW],
    ]);
  });

  it('ignores a bundle id that is not an incident id and states outside the closed set', () => {
    const s = buildStrip({
      events: [
        ev(NOW - 1000, 'incident', 'x', { id: '../../etc/passwd', result: 'captured' }),
        ev(NOW - 900, 'transition', 'x', { from: 'ok', to: 'on_fire' }),
      ],
      coveredFrom: NOW - H,
      current: { state: 'ok', since: NOW - 2 * H },
      from: NOW - H,
      to: NOW,
    });
    expect(s.marks).toEqual([]);
    expect(s.segments.map((x) => x.state)).toEqual(['ok']);
  });
});

describe('range and window', () => {
  it('takes 1h, 6h, 24h and nothing else', () => {
    expect(parseRange('1h')).toBe('1h');
    expect(parseRange('24h')).toBe('24h');
    expect(parseRange('7d')).toBe('6h');
    expect(parseRange(['1h', '24h'])).toBe('6h');
    expect(parseRange(undefined)).toBe('6h');
  });

  it('cuts the window to the history held, but never below a minute', () => {
    expect(windowStart('6h', NOW, NOW - 24 * H)).toBe(NOW - 6 * H);
    expect(windowStart('6h', NOW, NOW - H)).toBe(NOW - H);
    expect(windowStart('6h', NOW, NOW - 1000)).toBe(NOW - MIN_WINDOW_MS);
    expect(windowStart('1h', NOW, undefined)).toBe(NOW - MIN_WINDOW_MS);
  });
});

describe('drawn as SVG', () => {
  const HOSTILE = `<script>alert(1)</script><img src=x onerror=alert(2)>`;
  const history = new ProbeHistory();
  for (let t = NOW - H; t < NOW; t += 15_000) {
    history.record(result({ start: t, conn: 'fresh', ttftMs: 40, durationMs: 100 }));
    history.record(
      result({
        start: t,
        conn: 'keepalive',
        ttftMs: 900,
        durationMs: 1000,
        result: t % 60_000 ? 'ok' : 'timeout',
      }),
    );
  }
  const strip = buildStrip({
    events: [
      ev(NOW - 30 * 60_000, 'transition', 't', {
        from: 'ok',
        to: 'degraded',
        diagnosis: 'keepalive_slow',
        cause: HOSTILE,
      }),
      ev(NOW - 20 * 60_000, 'critical_confirmed', HOSTILE),
    ],
    coveredFrom: NOW - 2 * H,
    current: { state: 'degraded', since: NOW - 30 * 60_000, diagnosis: 'keepalive_slow', cause: HOSTILE },
    from: NOW - H,
    to: NOW,
  });
  const page = renderStatusPage(
    [
      {
        target: 't',
        state: 'degraded',
        since: NOW - 30 * 60_000,
        diagnosis: 'keepalive_slow',
        endpoints: ['router'],
        probes: [
          { probe: 'chat', endpoint: 'router', conn: 'fresh', result: 'ok', durationMs: 100 },
          { probe: 'chat', endpoint: 'router', conn: 'keepalive', result: 'ok', durationMs: 1000 },
        ],
        events: [],
        changes: [],
        remediationPaused: false,
        strip,
        history: history.series('t', NOW - H, NOW),
      },
    ],
    { now: NOW, range: '1h' },
  );

  it('escapes log text in titles and the text fallback; no element or script from it', () => {
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img/i);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('labels the states, not only colours them, and links the ranges', () => {
    expect(page).toMatch(/<text [^>]*class="sl">DEGRADED<\/text>/);
    expect(page).toContain('fill="url(#p-degraded)"');
    expect(page).toContain('<pattern id="p-degraded"');
    expect(page).toContain('<a href="/?range=6h">6h</a>');
    expect(page).toContain('<b aria-current="page">1h</b>');
  });

  it('draws both connection kinds on one scale, with the keep-alive failures crossed', () => {
    const sparks = sparklines(page);
    expect(sparks.size).toBe(2);
    const fresh = sparks.get('chat router fresh')!.svg;
    const keep = sparks.get('chat router keepalive')!.svg;
    // A 1 h window is 60 buckets of 1 min, the current one (empty here) included.
    expect(fresh).toContain('data-points="59"');
    expect(fresh).not.toContain('class="f"');
    // One block (a dash of the failure line) per bucket holding a failure: a failure a minute is one per bucket.
    const dashes = /class="f" d="[^"]*" stroke-dasharray="([^"]*)"/.exec(keep)?.[1]?.split(' ') ?? [];
    expect(dashes.length / 2 - 1).toBe(59);
    // One scale (the probe's slowest passing run, 1 s): the fresh line sits low, the keep-alive one high.
    expect(page).toContain('(top of each sparkline: chat 1.0 s)');
    const firstY = (s: string, cls: string) =>
      Number(new RegExp(`class="${cls}" d="M\\d+ (\\d+)`).exec(s)?.[1]);
    expect(firstY(fresh, 't')).toBeGreaterThan(firstY(keep, 't'));
  });
});
