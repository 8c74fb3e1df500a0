// The router's worker view as evidence (issue 41 item 6), on a virtual clock: the router holding circuits open or
// marking workers unhealthy while the engines answer their own probes is the router's fault (router_circuit_open,
// router_workers_unhealthy); the same router view while an engine refuses its probes is the engine's fault, and the
// engine's evidence names it.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import type { EngineSignal } from '../../src/core/signals.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, health: { kind: 'health' } },
  detect: detectSchema.parse({ stallAfter: '20s', hangAfter: '20s' }),
};

/** One 5 s round: the router's scrape, both legs' scrapes and health probes, chat through the router. */
function round(
  r: Run,
  router: Partial<EngineSignal>,
  chat: 'ok' | 'http_error',
  decode: 'up' | 'refused' = 'up',
): void {
  r.engine({ service: 'router', routerInflight: 0, running: 0, ...router }, 500);
  r.engine({ service: 'prefill', running: 0, generatedTokensTotal: 10 }, 100);
  if (decode === 'up') r.engine({ service: 'decode', running: 0, generatedTokensTotal: 10 }, 100);
  else r.engine({ service: 'decode', scrapeOk: false }, 100);
  r.probe({ endpoint: 'prefill', probe: 'health', probeKind: 'health' }, 100);
  r.probe(
    {
      endpoint: 'decode',
      probe: 'health',
      probeKind: 'health',
      result: decode === 'up' ? 'ok' : 'connect_error',
    },
    100,
  );
  r.probe({ endpoint: 'router', probe: 'health', probeKind: 'health' }, 100);
  for (const conn of ['fresh', 'keepalive'] as const)
    r.probe({ endpoint: 'router', conn, result: chat, ...(chat === 'ok' ? {} : { status: 503 }) }, 2000);
}

describe('router worker evidence', () => {
  it('an open circuit for a decode that answers directly → wedged/router_circuit_open, the cause naming both', () => {
    const r = new Run(cfg);
    for (let i = 0; i < 3; i++) round(r, {}, 'ok');
    expect(r.s.state).toBe('ok');
    for (let i = 0; i < 4; i++) round(r, { circuitOpen: 1, workersUnhealthy: 0 }, 'http_error');
    expect(r.verdict).toBe('wedged/router_circuit_open');
    expect(r.s.cause).toBe(
      'router holds 1 worker circuit breaker(s) open (smg_worker_cb_state 1) and completions through it fail, while prefill, decode answer directly and report progress',
    );
    // It was named as soon as the completions failed: no completions_failing first.
    expect(r.transitions().filter((t) => t.startsWith('wedged'))).toEqual(['wedged/router_circuit_open']);
    for (let i = 0; i < 3; i++) round(r, { circuitOpen: 0 }, 'ok');
    expect(r.s.state).toBe('ok');
  });

  it("the router's health checker failing a worker that answers → wedged/router_workers_unhealthy", () => {
    const r = new Run(cfg);
    for (let i = 0; i < 3; i++) round(r, {}, 'ok');
    for (let i = 0; i < 4; i++) round(r, { circuitOpen: 0, workersUnhealthy: 1 }, 'http_error');
    expect(r.verdict).toBe('wedged/router_workers_unhealthy');
  });

  it('the same router view while decode refuses its own probes is the engine: no router_* label', () => {
    const r = new Run(cfg);
    for (let i = 0; i < 3; i++) round(r, {}, 'ok');
    for (let i = 0; i < 4; i++) round(r, { circuitOpen: 1, workersUnhealthy: 1 }, 'http_error', 'refused');
    expect(r.s.state).not.toBe('ok');
    expect(r.s.diagnosis).not.toMatch(/^router_/);
    expect(r.transitions().some((t) => t.includes('router_'))).toBe(false);
  });

  it('open circuits while completions through the router pass name nothing (the breaker doing its job)', () => {
    const r = new Run(cfg);
    for (let i = 0; i < 6; i++) round(r, { circuitOpen: 1, workersUnhealthy: 1 }, 'ok');
    expect(r.verdict).toBe('ok/null');
  });

  it('without a direct probe of the engines the router view names nothing: it cannot be told from an engine fault', () => {
    const r = new Run(cfg);
    for (let i = 0; i < 3; i++) {
      r.engine({ service: 'router', routerInflight: 0, running: 0 }, 500);
      r.round();
    }
    for (let i = 0; i < 4; i++) {
      r.engine({ service: 'router', routerInflight: 0, running: 0, circuitOpen: 1 }, 500);
      r.engine({ service: 'decode', running: 0, generatedTokensTotal: 10 }, 100);
      r.round('http_error');
    }
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).not.toMatch(/^router_/);
  });
});
