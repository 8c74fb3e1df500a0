import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/outputs/server/html.js';
import { renderStatusPage as render, type StatusView } from '../../src/outputs/server/status-page.js';

/** The page with whitespace runs collapsed: the template's indentation is not what is under test. */
const renderStatusPage = (...args: Parameters<typeof render>) => render(...args).replace(/\s+/g, ' ');

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

function view(over: Partial<StatusView> = {}): StatusView {
  return {
    target: 'dsv4-pd',
    state: 'wedged',
    since: NOW - 95_000,
    diagnosis: 'kv_bootstrap_thread_dead',
    endpoints: ['proxy', 'router'],
    probes: [
      { probe: 'chat', endpoint: 'proxy', conn: 'fresh', result: 'ok', durationMs: 420, ttftMs: 123 },
      {
        probe: 'chat',
        endpoint: 'proxy',
        conn: 'keepalive',
        result: 'timeout',
        durationMs: 30_000,
        phase: 'first_token',
        error: 'no first token within 30000 ms',
      },
      { probe: 'chat', endpoint: 'router', conn: 'fresh', result: 'timeout', durationMs: 30_000 },
    ],
    events: [
      {
        time: NOW - 5000,
        severity: 'critical',
        service: 'prefill',
        rule: 'nixl_bootstrap_thread_dead',
        text: 'Exception in thread Thread-3 (bootstrap_thread)',
      },
    ],
    changes: [{ time: NOW - 60_000, path: '/opt/sglang/serve_decode.sh', diff: '-  --tp 8\n+  --tp 4' }],
    remediationPaused: false,
    ...over,
  };
}

describe('html helpers', () => {
  it('escapes every interpolated value unless it is already SafeHtml', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\``)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;',
    );
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${['<x>', inner]}${undefined}${false}${0}</p>`.value).toBe(
      '<p><b>&lt;i&gt;</b>&lt;x&gt;<b>&lt;i&gt;</b>0</p>',
    );
  });
});

describe('renderStatusPage', () => {
  it('renders one card per target with state, since, diagnosis, grid with TTFT, events, changes', () => {
    const page = renderStatusPage(
      [
        view(),
        view({ target: 'vllm-a', state: 'ok', diagnosis: undefined, probes: [], events: [], changes: [] }),
      ],
      { now: NOW },
    );
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<meta http-equiv="refresh" content="10" />');
    const cards = page.split('<section class="card"').slice(1);
    expect(cards).toHaveLength(2);
    const [a, b] = cards as [string, string];
    expect(a).toContain('data-state="wedged"');
    expect(a).toContain('<span class="state" style="background:#b91c1c">wedged</span>');
    expect(a).toContain('wedged since <time>2026-01-02T03:02:30Z</time> (1m 35s ago)');
    expect(a).toContain('diagnosis: <code>kv_bootstrap_thread_dead</code>');
    // Grid: rows are hops in request order, columns the connection kinds.
    expect(a).toMatch(/<th>hop<\/th>\s*<th>fresh<\/th>\s*<th>keepalive<\/th>/);
    expect(a.search(/<tr>\s*<th>proxy<\/th>/)).toBeGreaterThan(-1);
    expect(a.search(/<tr>\s*<th>proxy<\/th>/)).toBeLessThan(a.search(/<tr>\s*<th>router<\/th>/));
    expect(a).toContain('TTFT 123 ms');
    expect(a).toContain('<span class="res">timeout</span> <span class="det">30.0 s · in first_token</span>');
    expect(a).toContain(
      'href="/probe?target=dsv4-pd&amp;probe=chat&amp;endpoint=proxy&amp;conn=keepalive&amp;debug=true"',
    );
    expect(a).toContain('Exception in thread Thread-3 (bootstrap_thread)');
    expect(a).toContain('<code>/opt/sglang/serve_decode.sh</code>');
    expect(a).not.toContain('remediation paused');
    expect(b).toContain('data-state="ok"');
    expect(b).toContain('No probe results yet.');
    expect(b).toContain('No watched files changed since the last ok.');
    expect(page).toContain('2 targets: 1 wedged, 1 ok');
  });

  it('shows the remediation pause', () => {
    expect(renderStatusPage([view({ remediationPaused: true })], { now: NOW })).toContain(
      '<span class="paused">remediation paused</span>',
    );
  });

  it('escapes everything that came from logs or remote servers', () => {
    const evil = `<script>document.title='pwned'</script><img src=x onerror=alert(1)>"'`;
    const page = renderStatusPage(
      [
        view({
          diagnosis: evil,
          cause: evil,
          probes: [
            {
              probe: 'chat',
              endpoint: 'router',
              conn: 'fresh',
              result: 'http_error',
              durationMs: 5,
              error: evil,
              status: 500,
            },
          ],
          events: [{ time: NOW, severity: 'critical', service: 'prefill', rule: 'user_alert', text: evil }],
          changes: [{ time: NOW, path: '/x', diff: evil }],
        }),
      ],
      { now: NOW },
    );
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('<img');
    expect(page).toContain(
      '&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;',
    );
    // Exactly the page's own elements: one <style>, no script, no img.
    expect(page.match(/<style>/g)).toHaveLength(1);
  });

  it('bounds long texts and the number of events', () => {
    const events = Array.from({ length: 100 }, (_, i) => ({
      time: NOW - i * 1000,
      text: `line ${i} ${'x'.repeat(5000)}`,
    }));
    const page = renderStatusPage([view({ events })], { now: NOW, maxEvents: 5 });
    expect(page.match(/<li class="sev-/g)).toHaveLength(5);
    expect(page).toContain('line 0 ');
    expect(page).not.toContain('line 5 ');
    expect(page).toContain('more characters)');
    expect(page.length).toBeLessThan(40_000);
  });

  it('says so when a target has no verdict yet', () => {
    const page = renderStatusPage([view({ state: 'unknown', since: Number.NaN, diagnosis: undefined })], {
      now: NOW,
    });
    expect(page).toContain('no verdict yet');
    expect(page).not.toContain('NaN');
  });

  it('renders an empty deployment', () => {
    expect(renderStatusPage([], { now: NOW })).toContain('No targets configured.');
  });
});
