// Issue 26 item 1: one incident, one diagnosis. The verdict recomputed each signal named whatever was visible
// that round (decode_stall flipped completions_hung ↔ engine_stalled 8 times in 2 minutes); the incident holds
// its diagnosis until stronger evidence arrives or the target is ok again.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({ stallAfter: '10s', confirmInterval: '5s' }),
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, health: { kind: 'health' }, info: { kind: 'serverinfo' } },
};

const changes = (r: Run): string[] => {
  const out: string[] = [];
  for (const st of r.steps) {
    const d = st.state.diagnosis;
    if (d !== null && out.at(-1) !== d) out.push(d);
  }
  return out;
};

const healthy = (r: Run, rounds = 10) => {
  for (let i = 0; i < rounds; i++) {
    r.round();
    r.probe({ endpoint: 'router', probe: 'health', probeKind: 'health' });
  }
};

describe('one incident, one diagnosis (issue 26)', () => {
  it('a stalled engine named after the hang holds when the stall evidence goes away; back to ok ends it', () => {
    const r = new Run(cfg);
    healthy(r);
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/completions_failing');
    // The engine's gauges show no progress: stronger evidence, one escalation.
    for (const gap of [1000, 5500, 5500]) r.engine({ running: 3, generatedTokensTotal: 100 }, gap);
    expect(r.verdict).toBe('wedged/engine_stalled');
    // The scrape now fails (the engine is busy dying): the stall can no longer be seen, only failing probes.
    r.engine({ scrapeOk: false }, 1000);
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/engine_stalled');
    expect(changes(r)).toEqual(['completions_failing', 'engine_stalled']);
    expect(r.s.incident?.seen.map((e) => e.diagnosis)).toEqual(['completions_failing', 'engine_stalled']);
    // Restarted: ok ends the incident, and the next one starts from nothing.
    for (let i = 0; i < 3; i++) r.round();
    expect(r.s.state).toBe('ok');
    expect(r.s.incident).toBeUndefined();
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    // The new incident remembers only its own evidence (the slot windows keep both episodes: on and off).
    expect(r.s.incident?.seen.map((e) => e.diagnosis)).not.toContain('engine_stalled');
  });

  it('down after a confirmed critical line keeps it and says so; down after bare failures names the refused port', () => {
    const r = new Run(cfg);
    healthy(r);
    r.log({
      severity: 'critical',
      rule: 'sglang_watchdog_timeout',
      class: 'watchdog_timeout',
      service: 'decode',
      line: 'Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)',
      time: r.now,
    });
    r.round('timeout');
    expect(r.verdict).toBe('wedged/log:sglang_watchdog_timeout');
    for (let i = 0; i < 3; i++) {
      r.round('connect_error');
      r.probe({ endpoint: 'router', probe: 'health', probeKind: 'health', result: 'connect_error' });
    }
    expect(r.verdict).toBe('down/log:sglang_watchdog_timeout');
    expect(r.s.cause).toMatch(
      /^down after log:sglang_watchdog_timeout \(.*\); now (connection_refused|health_failing): /,
    );

    const bare = new Run(cfg);
    healthy(bare);
    bare.round('timeout');
    bare.round('timeout');
    expect(bare.verdict).toBe('wedged/completions_failing');
    for (let i = 0; i < 3; i++) {
      bare.round('connect_error');
      bare.probe({ endpoint: 'router', probe: 'health', probeKind: 'health', result: 'connect_error' });
    }
    expect(bare.s.state).toBe('down');
    expect(['connection_refused', 'health_failing']).toContain(bare.s.diagnosis);
  });

  it('weaker evidence never replaces the held diagnosis: a hang named by the scheduler round trip stays engine_stalled', () => {
    const r = new Run(cfg);
    healthy(r);
    // get_server_info hangs and completions fail: the engine, from its own round trip.
    r.probe({ endpoint: 'router', probe: 'info', probeKind: 'serverinfo', result: 'timeout' });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/engine_stalled');
    // The round trip answers again while completions still fail: nothing stronger, the diagnosis holds.
    r.probe({ endpoint: 'router', probe: 'info', probeKind: 'serverinfo' });
    r.round('timeout');
    expect(r.verdict).toBe('wedged/engine_stalled');
    expect(r.s.cause).toContain('scheduler round trip hangs');
  });
});

describe('warnings name an incident no critical line explains (issue 26 item 6)', () => {
  const warn = (r: Run, cls: 'transfer_timeout' | 'retract' | 'cache_tier_unavailable', line: string) =>
    r.log({ severity: 'warning', rule: `some_${cls}`, class: cls, service: 'decode', line, time: r.now });

  it('a transfer timeout logged as completions start failing names the wedge; a retraction does not', () => {
    const r = new Run(cfg);
    healthy(r);
    warn(r, 'transfer_timeout', 'Request 42 timed out waiting for KV transfer');
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/warning:transfer_timeout');
    expect(r.s.cause).toContain('after some_transfer_timeout (transfer_timeout) on decode');

    const routine = new Run(cfg);
    healthy(routine);
    warn(routine, 'retract', 'KV cache pool is full. Retract requests.');
    routine.round('timeout');
    routine.round('timeout');
    expect(routine.verdict).toBe('wedged/completions_failing');

    // A cache tier that is down repeats its line every few seconds (LMCache's ping): it names no incident either.
    const tier = new Run(cfg);
    healthy(tier);
    warn(tier, 'cache_tier_unavailable', 'LMCache WARNING: Ping timeout');
    tier.round('timeout');
    tier.round('timeout');
    expect(tier.verdict).toBe('wedged/completions_failing');
  });

  it('a warning from before the last ok period names nothing, and a warning alone changes no state', () => {
    const r = new Run(cfg);
    healthy(r, 2);
    warn(r, 'transfer_timeout', 'Request 1 timed out waiting for KV transfer');
    expect(r.s.state).toBe('ok');
    // Long healthy: the target was ok well after the line (stallAfter of lookback is all it gets).
    for (let i = 0; i < 30; i++) r.round('ok');
    r.feed({ kind: 'tick', inflight: [] }, 60_000);
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/completions_failing');
  });
});

describe('keepalive_only needs reuse evidence (issue 26 item 2)', () => {
  const two: ClassifierConfig = { ...cfg, hops: ['engine'], probes: { chat: { kind: 'chat' } } };

  it('an intermittent fault that hits the keep-alive slot twice in a row while fresh passes is not keepalive_only', () => {
    const r = new Run(two);
    healthy(r);
    // Runs fail now and then on both slots; the keep-alive one happens to fail twice in a row.
    const plan: Array<[boolean, boolean]> = [
      [false, true],
      [true, false],
      [false, true],
      [false, true],
      [false, false],
      [true, false],
      [false, true],
      [false, true],
    ];
    for (const [fresh, ka] of plan) r.round('timeout', (_e, c) => (c === 'fresh' ? fresh : ka));
    expect(changes(r)).not.toContain('keepalive_only');
    expect(r.s.diagnosis).toBe('intermittent');
  });

  it('reused connections failing beside a full window of fresh passes is keepalive_only, and it holds', () => {
    const r = new Run(two);
    healthy(r);
    // As the runner does: after a failed run the keep-alive slot primes a new connection and goes second on it.
    for (let i = 0; i < 6; i++) {
      r.probe({ endpoint: 'engine', conn: 'fresh' });
      r.probe({
        endpoint: 'engine',
        conn: 'keepalive',
        result: 'timeout',
        reusedConnection: true,
        ...(i > 0 ? { primedConnection: true } : {}),
      });
      // Two reused failures in a row beside a clean fresh window are not yet the proxy: kv_transfer_failure (one
      // request in N fails) put two on the keep-alive slot by chance at the example cadence and named it.
      if (i === 1) expect(r.verdict).toBe('degraded/completions_failing');
      if (i === 2) expect(r.verdict).toBe('degraded/keepalive_only');
    }
    expect(r.verdict).toBe('degraded/keepalive_only');
    // Two failures are a failing slot; the third over a reused connection names the proxy: one escalation.
    expect(changes(r)).toEqual(['completions_failing', 'keepalive_only']);
  });
});

describe('what the hold must not keep (review of issue 26)', () => {
  const THREAD_DEATH = [
    'Exception in thread Thread-7 (bootstrap_thread):',
    'Traceback (most recent call last):',
    "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
  ].join('\n');

  it("a more specific signature confirmed later replaces a user rule's", () => {
    const r = new Run(cfg);
    healthy(r);
    r.log({
      severity: 'critical',
      rule: 'oom_killed',
      class: 'custom',
      user: true,
      line: 'CUDA out of memory',
      time: r.now,
    });
    r.round('timeout');
    expect(r.verdict).toBe('wedged/log:oom_killed');
    r.log({
      severity: 'critical',
      rule: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
      time: r.now,
    });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/kv_bootstrap_thread_dead');
  });

  it('a hop diagnosis does not follow the target into a wedge of every hop', () => {
    const two: ClassifierConfig = { ...cfg, hops: ['proxy', 'router'] };
    const r = new Run(two);
    healthy(r);
    r.round('timeout', (e) => e === 'proxy');
    r.round('timeout', (e) => e === 'proxy');
    expect(r.verdict).toBe('degraded/hop:proxy');
    for (let i = 0; i < 3; i++) r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).not.toBe('hop:proxy');
  });

  it("a user rule's warning names nothing (user rules see request-echo lines)", () => {
    const r = new Run(cfg);
    healthy(r);
    r.log({
      severity: 'warning',
      rule: 'my_timeouts',
      class: 'transfer_timeout',
      user: true,
      line: "Receive: obj=GenerateReqInput(text='timed out')",
      time: r.now,
    });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/completions_failing');
  });

  it('a hang in flight beside a failing /health on a live server is health_generate_failing; beside a warning, the warning', () => {
    const r = new Run(cfg);
    healthy(r);
    for (let i = 0; i < 2; i++)
      r.probe({
        endpoint: 'router',
        probe: 'health',
        probeKind: 'health',
        result: 'http_error',
        status: 503,
      });
    const startedAt = r.now;
    const hung = [{ probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt }];
    r.feed({ kind: 'tick', inflight: hung }, cfg.detect.hangAfter + 1000);
    expect(r.verdict).toBe('wedged/health_generate_failing');

    const w = new Run(cfg);
    healthy(w);
    w.log({
      severity: 'warning',
      rule: 'some_timeout',
      class: 'transfer_timeout',
      service: 'decode',
      line: 'x',
      time: w.now,
    });
    const at = w.now;
    w.feed(
      {
        kind: 'tick',
        inflight: [{ probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt: at }],
      },
      cfg.detect.hangAfter + 1000,
    );
    expect(w.verdict).toBe('wedged/warning:transfer_timeout');
    expect(w.s.cause).toContain('some_timeout (transfer_timeout) on decode');
  });

  it('keep-alive failures over new connections beside a full window of fresh passes are not keepalive_only', () => {
    const one: ClassifierConfig = { ...cfg, hops: ['engine'], probes: { chat: { kind: 'chat' } } };
    const r = new Run(one);
    for (let i = 0; i < 10; i++) r.round();
    for (let i = 0; i < 4; i++) {
      r.probe({ endpoint: 'engine', conn: 'fresh' });
      r.probe({ endpoint: 'engine', conn: 'keepalive', result: 'timeout', reusedConnection: false });
    }
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).not.toBe('keepalive_only');
  });
});

describe('the cause names the root cause of a confirmed chain (issue 27)', () => {
  it("a scheduler death's final exception is in the wedge's cause", () => {
    const r = new Run(cfg);
    healthy(r);
    r.log({
      severity: 'critical',
      rule: 'sglang_scheduler_exception',
      class: 'engine_death',
      service: 'decode',
      line: 'Scheduler hit an exception: Traceback (most recent call last):',
      time: r.now,
      incident: {
        members: [],
        absorbed: 0,
        rootCause: {
          exception: 'torch.AcceleratorError',
          message: 'CUDA error: an illegal memory access was encountered',
          rule: 'sglang_scheduler_exception',
        },
      },
    });
    r.round('timeout');
    expect(r.verdict).toBe('wedged/log:sglang_scheduler_exception');
    expect(r.s.cause).toContain(
      'sglang_scheduler_exception on decode (root cause: torch.AcceleratorError: CUDA error: an illegal memory access was encountered)',
    );
  });
});

describe('found by the fault matrix at the example cadence (issue 26)', () => {
  /** Chat and the tool-call matrix on the router, after ten passing rounds of both. */
  const healthyChatAndTools = () => {
    const r = new Run({ ...cfg, probes: { chat: { kind: 'chat' }, tools: { kind: 'toolcall' } } });
    for (let i = 0; i < 10; i++) {
      r.round();
      r.probe({ endpoint: 'router', probe: 'tools', probeKind: 'toolcall' });
    }
    return r;
  };

  it('an intermittent hang that lines up with the rounds fails keep-alive every time but also the tool-call matrix: not keepalive_only', () => {
    const r = healthyChatAndTools();
    for (let i = 0; i < 6; i++) {
      r.probe({ endpoint: 'router', conn: 'fresh' });
      r.probe({
        endpoint: 'router',
        conn: 'keepalive',
        result: 'timeout',
        reusedConnection: true,
        ...(i > 0 ? { primedConnection: true } : {}),
      });
      r.probe({
        endpoint: 'router',
        probe: 'tools',
        probeKind: 'toolcall',
        result: i % 2 === 0 ? 'timeout' : 'ok',
      });
    }
    expect(r.s.state).not.toBe('ok');
    expect(changes(r)).not.toContain('keepalive_only');
  });

  it('an incident opened by every completion hung becomes intermittent once the window shows the hangs come and go', () => {
    // intermittent_hang (every=3) at the example cadence: a chat run in flight 20 s while nothing else finished
    // opens the incident as completions_hung; the hangs then come and go. The pattern is the stronger reading
    // (EVIDENCE: pattern above failing, which holds hung): one escalation, not a label stuck on the first hang.
    const r = new Run(cfg);
    healthy(r);
    const startedAt = r.now;
    r.feed(
      { kind: 'tick', inflight: [{ probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt }] },
      cfg.detect.hangAfter + 1000,
    );
    expect(r.verdict).toBe('wedged/completions_hung');
    r.feed({ kind: 'tick', inflight: [] }, 100);
    // The hung run times out; then the hangs come and go, on one connection and then the other, so that no slot
    // fails twice in a row and no round passes everywhere.
    r.probe({ endpoint: 'router', conn: 'fresh', result: 'timeout', start: startedAt });
    for (let i = 0; i < 9; i++) r.round('timeout', { conn: i % 2 === 0 ? 'keepalive' : 'fresh' });
    expect(r.verdict).toBe('wedged/intermittent');
    expect(changes(r)).toEqual(['completions_hung', 'intermittent']);
  });

  it('one slot timing out, then every completion hung, is one incident getting worse: completions_failing holds', () => {
    // slow (factor 345): the chat-sized runs time out while short ones pass, then nothing finishes at all. Hung
    // and failing are one kind of evidence (how requests fail): the state escalates, the label stays, and the
    // cause says what is seen now.
    const r = healthyChatAndTools();
    for (let i = 0; i < 2; i++) {
      r.round();
      r.probe({ endpoint: 'router', probe: 'tools', probeKind: 'toolcall', result: 'timeout' });
    }
    expect(r.verdict).toBe('degraded/completions_failing');
    const startedAt = r.now;
    const hung = (['fresh', 'keepalive'] as const).map((conn) => ({
      probe: 'chat',
      endpoint: 'router',
      conn,
      startedAt,
    }));
    r.feed({ kind: 'tick', inflight: hung }, cfg.detect.hangAfter + 1000);
    expect(r.verdict).toBe('wedged/completions_failing');
    expect(r.s.cause).toContain('now also completions_hung: chat on router/');
    expect(changes(r)).toEqual(['completions_failing']);
  });

  it('structured output failing twice beside chat runs that fail now and then is not the grammar backend', () => {
    const withStructured: ClassifierConfig = {
      ...cfg,
      probes: { chat: { kind: 'chat' }, json: { kind: 'structured' } },
    };
    const run = (chatFails: boolean) => {
      const r = new Run(withStructured);
      for (let i = 0; i < 10; i++) {
        r.round();
        r.probe({ endpoint: 'router', probe: 'json', probeKind: 'structured' });
      }
      r.round(chatFails ? 'timeout' : 'ok', { conn: 'keepalive' });
      r.round();
      for (let i = 0; i < 2; i++) {
        r.probe({ endpoint: 'router', probe: 'json', probeKind: 'structured', result: 'timeout' });
        r.round();
      }
      return r;
    };
    // Only structured output fails: the grammar backend.
    expect(run(false).verdict).toBe('degraded/structured_output_stalled');
    // A chat run failed in the same window: what fails is not only structured output.
    const r = run(true);
    expect(r.s.state).toBe('degraded');
    expect(changes(r)).not.toContain('structured_output_stalled');
  });

  it('the label does not flip with a state that flaps wedged ↔ degraded', () => {
    const r = new Run(cfg);
    healthy(r);
    // /health 503 on a live server and completions failing: health_generate_failing (engine evidence).
    for (let i = 0; i < 2; i++)
      r.probe({
        endpoint: 'router',
        probe: 'health',
        probeKind: 'health',
        result: 'http_error',
        status: 503,
      });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/health_generate_failing');
    // Completions pass for a while (degraded), then fail again (wedged), twice.
    for (let k = 0; k < 2; k++) {
      for (let i = 0; i < 3; i++) r.round();
      for (let i = 0; i < 2; i++) r.round('timeout');
    }
    const states = new Set(r.steps.map((st) => st.state.state));
    expect(states).toContain('degraded');
    expect(changes(r).slice(changes(r).indexOf('health_generate_failing'))).toEqual([
      'health_generate_failing',
    ]);
  });
});
