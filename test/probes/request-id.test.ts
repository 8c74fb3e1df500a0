// Probes send a request id the engine logs (issue 13 item 7): SGLang's body `rid` and the X-Request-Id header,
// random per request, reported with the run so the detector can discount the aborts our own probes cause.
import { afterEach, describe, expect, it } from 'vitest';
import { healthyHandler, startServer, type TestServer } from './hostile.js';
import { runOnce } from './fixtures.js';

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe('probe request ids', () => {
  it('chat sends one random id as body rid and X-Request-Id, and reports it', async () => {
    s = await startServer(healthyHandler);
    const a = await runOnce(s.url, 'chat');
    const b = await runOnce(s.url, 'chat');
    const [ra, rb] = s.requests.map((r) => JSON.parse(r.body) as { rid?: string });
    expect(ra!.rid).toMatch(/^wedgewatch-[0-9a-f]{24}$/);
    expect(s.requests[0]!.requestId).toBe(ra!.rid);
    expect(a.signal.requestIds).toEqual([ra!.rid]);
    expect(rb!.rid).not.toBe(ra!.rid);
    expect(b.signal.requestIds).toEqual([rb!.rid]);
  });

  it('requestId: header sends only the header (vLLM warns about unknown body fields); off sends neither', async () => {
    s = await startServer(healthyHandler);
    const h = await runOnce(s.url, 'chat', { probe: { requestId: 'header' } });
    expect(JSON.parse(s.requests[0]!.body)).not.toHaveProperty('rid');
    expect(s.requests[0]!.requestId).toMatch(/^wedgewatch-/);
    expect(h.signal.requestIds).toEqual([s.requests[0]!.requestId]);
    const off = await runOnce(s.url, 'chat', { probe: { requestId: 'off' } });
    expect(JSON.parse(s.requests[1]!.body)).not.toHaveProperty('rid');
    expect(s.requests[1]!.requestId).toBeUndefined();
    expect(off.signal.requestIds).toBeUndefined();
  });

  it('health sends no id', async () => {
    s = await startServer(healthyHandler);
    const r = await runOnce(s.url, 'health');
    expect(s.requests[0]!.requestId).toBeUndefined();
    expect(r.signal.requestIds).toBeUndefined();
  });
});
