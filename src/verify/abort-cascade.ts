// abort-cascade: the stress that broke NIXL PD deployments. S long streaming sessions are cut off hard after T
// (their sockets destroyed, as when a client process is killed), so the engine aborts them all at once; after a
// settle pause, liveness probes must still complete, and no critical signature (thread death, GUARD assertion)
// may appear in the logs during the whole window.
import { Client } from '../lib/http/undici.js';
import { CriticalScanner, describeHit } from './critical-rules.js';
import { runLivenessProbes, roundLine } from './liveness.js';
import { streamChat, type StreamResult } from './load-client.js';
import { LogWindow } from './log-window.js';
import { secs } from './stats.js';
import { durationKnob, intKnob, maxTokensKnob } from './knob-specs.js';
import { defineStep } from './types.js';

export interface AbortKnobs {
  sessions: number;
  afterMs: number;
  settleMs: number;
  maxTokens: number;
  /** Liveness probes per connection kind after the settle pause. */
  probes: number;
  livenessTimeoutMs: number;
}

const PROMPT = [{ role: 'user', content: 'Write a very long essay on the history of the printing press.' }];

export const abortCascadeStep = defineStep<AbortKnobs>({
  name: 'abort-cascade',
  flagPrefix: 'abort',
  summary: 'S streaming sessions cut off hard after T, settle, then liveness; no critical log signature',
  knobs: {
    sessions: intKnob('sessions', 60, 'streaming sessions cut off together'),
    afterMs: durationKnob('after', 22_000, 'cut the sessions off after this long'),
    settleMs: durationKnob('settle', 10_000, 'pause after the cut before probing'),
    maxTokens: maxTokensKnob(16_384, 'per session (long enough to outlast --abort.after)'),
    probes: intKnob('probes', 2, 'liveness probes per connection kind after the settle'),
    livenessTimeoutMs: durationKnob('liveness-timeout', 25_000, 'limit per liveness probe'),
  },
  async run(ctx, k) {
    const window = new LogWindow(ctx.logs).mark();
    const scanner = new CriticalScanner();

    // One client per session: destroying it destroys the socket mid-stream, with no orderly close.
    const clients = Array.from(
      { length: k.sessions },
      () => new Client(ctx.target.origin, { pipelining: 1 }),
    );
    let streaming = 0;
    const cut = new AbortController();
    const sessions: Promise<StreamResult>[] = clients.map((c) =>
      streamChat(c, ctx.target, {
        messages: PROMPT,
        maxTokens: k.maxTokens,
        extra: { ignore_eos: true },
        // The cut is the end of these requests; the timeout only guards against a hang past it.
        timeoutMs: k.afterMs + 60_000,
        signal: cut.signal,
        onFirstToken: () => streaming++,
      }),
    );
    await new Promise((r) => setTimeout(r, k.afterMs));
    const finishedEarly = (await settledSoFar(sessions)).filter((r) => r?.ok).length;
    const midStream = streaming - finishedEarly;
    cut.abort(new Error('hard cut'));
    await Promise.all(clients.map((c) => c.destroy().catch(() => {})));
    const results = await Promise.all(sessions);
    // Failed before the cut, or still waiting for a first token when it came: either way, never streamed.
    const failedBeforeCut = results.filter((r) => !r.ok && r.chunks === 0);
    ctx.progress(
      `cut ${k.sessions} sessions after ${secs(k.afterMs)}: ${midStream} mid-stream, ${finishedEarly} had finished, ` +
        `${failedBeforeCut.length} never streamed`,
    );

    await new Promise((r) => setTimeout(r, k.settleMs));
    window.read((line, path) => scanner.line(line, path));
    ctx.progress(`settled ${secs(k.settleMs)}; ${scanner.hits.length} critical log hits so far`);

    const rounds = await runLivenessProbes(
      ctx.target,
      { n: k.probes, timeoutMs: k.livenessTimeoutMs, maxTokens: 16 },
      ctx.progress,
    );
    window.read((line, path) => scanner.line(line, path));

    const probes = rounds.flatMap((r) => r.results);
    const probesOk = probes.filter((r) => r.ok).length;
    const problems: string[] = [];
    if (midStream === 0)
      problems.push(`no session was mid-stream at the cut (raise --abort.max-tokens or lower --abort.after)`);
    if (probesOk < probes.length)
      problems.push(`${probes.length - probesOk}/${probes.length} liveness probes failed after the cut`);
    if (scanner.hits.length)
      problems.push(`${scanner.hits.length} critical log signature(s): ${scanner.hits[0]!.rule}`);
    const first = scanner.hits[0];
    return {
      ok: problems.length === 0,
      summary: problems.length
        ? problems.join('; ') + (first ? ` — ${describeHit(first)}` : '')
        : `${midStream}/${k.sessions} sessions cut mid-stream; ${probesOk}/${probes.length} probes completed after ${secs(k.settleMs)} settle; no critical log lines${ctx.logs.length ? '' : ' (no --log given)'}`,
      details: [
        `sessions=${k.sessions} cut after ${secs(k.afterMs)}: mid-stream=${midStream} finished-early=${finishedEarly} never-streamed=${failedBeforeCut.length}`,
        ...rounds.map((r) => roundLine(r.conn, r.results, r.newConnections)),
        ...scanner.hits.map(describeHit),
        ...(first?.traceback ? ['traceback found:', ...first.traceback.map((l) => `  ${l}`)] : []),
        ...(scanner.droppedHits ? [`(${scanner.droppedHits} more critical hits not kept)`] : []),
      ],
      figures: {},
      data: {
        midStream,
        finishedEarly,
        neverStreamed: failedBeforeCut.length,
        probes: rounds,
        criticalHits: scanner.hits,
      },
    };
  },
});

/** The results of the promises that have already settled (undefined for the pending ones). */
async function settledSoFar<T>(ps: Promise<T>[]): Promise<(T | undefined)[]> {
  const pending = Symbol('pending');
  return Promise.all(
    ps.map(async (p) => {
      const v = await Promise.race([p, Promise.resolve(pending)]);
      return v === pending ? undefined : (v as T);
    }),
  );
}
