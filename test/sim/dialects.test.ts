// Both SGLang dialects the simulator speaks (current: SGLang main 2026-08; legacy: mid-2025), replayed through the
// built-in rule packs: a healthy run raises nothing, the wedge and the lost prefill are caught as critical, and
// each dialect prints its own lines (heartbeat before `Lost connection`, `requests` vs `transfers affected`).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { replayFiles } from '../../src/commands/replay-files.js';
import { startSim, type Sim, type SglangFormat } from '../../src/sim/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, openStream, streamChat } from './client.js';

const replay = (sim: Sim) =>
  replayFiles({ files: [sim.logFiles.prefill, sim.logFiles.decode], packs: [...LOG_PACKS] }).events;

describe.each(['current', 'legacy'] as SglangFormat[])('sglang %s dialect', (format) => {
  let sim: Sim | undefined;
  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  it('healthy lines are silent; the dead bootstrap thread and the lost prefill are critical', async () => {
    sim = await startSim({ sglangFormat: format, heartbeatIntervalMs: 50, faults: ['nixl_abort_unhandled'] });
    for (let i = 0; i < 3; i++)
      expect((await streamChat(sim.urls.router, chatBody({ max_tokens: 45 }))).done).toBe(true);
    const decode = () => readFileSync(sim!.logFiles.decode, 'utf8');
    expect(decode()).toMatch(/\] Decode batch, #running-req: /);
    expect(replay(sim)).toEqual([]);

    // A client leaves: AbortReq, the unguarded ABORT frame kills prefill's bootstrap thread.
    const cut = openStream(sim.urls.router, chatBody({ max_tokens: 500 }));
    await cut.firstData;
    cut.cut();
    await waitFor(() => !sim!.state().bootstrapThreadAlive, { what: 'bootstrap thread death' });
    // A request now waits in bootstrap; then the prefill process dies under it.
    const stuck = streamChat(sim.urls.router, chatBody(), 10_000);
    await waitFor(() => (sim!.state().prefillBootstrapQueue as number) > 0, {
      what: 'a request in bootstrap',
    });
    sim.enableFault('crash', { service: 'prefill' });
    await waitFor(() => /Lost connection with prefill instance/.test(decode()), { what: 'Lost connection' });
    await stuck;

    const text = decode();
    if (format === 'current') {
      // common/conn.py heartbeat_checker: reconnect attempts first, then the node failure, per TP rank.
      expect(text.indexOf('Attempting to reconnect to')).toBeGreaterThanOrEqual(0);
      expect(text.indexOf('Attempting to reconnect to')).toBeLessThan(text.indexOf('Lost connection'));
      expect(text).toMatch(
        /TP1\] Lost connection with prefill instance \(bootstrap_addr: \S+\), 1 requests affected/,
      );
      expect(text).toMatch(
        /TP1\] Decode transfer failed for request rank=1 .*Lost connection with prefill instance/,
      );
      expect(text).not.toContain('waiting_timeout');
    } else {
      expect(text).not.toContain('Attempting to reconnect');
      expect(text).toMatch(
        /TP0\] Lost connection with prefill instance \(bootstrap_addr: \S+\), 1 transfers affected/,
      );
    }
    const events = replay(sim);
    const critical = new Set(events.filter((e) => e.severity === 'critical').map((e) => e.rule));
    expect(critical).toEqual(
      new Set(['nixl_bootstrap_thread_dead', 'sglang_disagg_lost_prefill_connection']),
    );
    // The abort is one request, whatever the number of ranks printing it.
    const aborts = events.filter((e) => e.class === 'abort');
    expect(aborts.length).toBeGreaterThan(0);
    expect(new Set(aborts.map((e) => e.fields.rid)).size).toBe(1);
  });
});
