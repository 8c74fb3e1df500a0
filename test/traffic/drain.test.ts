// Drain as a remediation action against the simulated model gateway's worker API (src/sim/gateway.ts, which
// follows sgl-model-gateway's /workers): out while not in rotation, back on recovery, capped per window, dry run,
// retried after a failure. Policy time runs on a virtual clock; the gateway calls are real HTTP on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import { drainSchema } from '../../src/config/traffic-schema.js';
import { createMetrics } from '../../src/metrics.js';
import { Drainer, type DrainRecord } from '../../src/outputs/traffic/drainer.js';
import { SglangGateway } from '../../src/outputs/traffic/sglang-gateway.js';
import type { TrafficAnswer } from '../../src/outputs/traffic/view.js';
import { startGateway, type SimGateway } from '../../src/sim/gateway.js';
import { quietLogger } from '../helpers/logger.js';

const A = 'http://127.0.0.1:31001';
const B = 'http://127.0.0.1:31002';

const answer = (inRotation: boolean): TrafficAnswer => ({
  target: 'a',
  backend: 'a',
  ready: inRotation,
  inRotation,
  held: false,
  pool: 'engines',
  state: inRotation ? 'ok' : 'wedged',
  diagnosis: inRotation ? null : 'completions_hung',
  since: 0,
  cause: '',
  changedAt: 0,
});

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup) await c();
  cleanup = [];
});

async function setup(over: Record<string, unknown> = {}, gatewayUp = true) {
  const gw: SimGateway | undefined = gatewayUp ? await startGateway([A, B]) : undefined;
  if (gw) cleanup.push(() => gw.stop());
  const cfg = drainSchema.parse({
    url: gw?.url ?? 'http://127.0.0.1:9',
    worker: A,
    dryRun: false,
    timeout: '2s',
    ...over,
  });
  const client = new SglangGateway(cfg);
  cleanup.push(() => client.close());
  let now = 1_000_000;
  const records: DrainRecord[] = [];
  const metrics = createMetrics({ defaults: false });
  const drainer = new Drainer({
    target: 'a',
    backend: 'a',
    config: cfg,
    gateway: client,
    metrics,
    logger: quietLogger(),
    onRecord: (r) => records.push(r),
    now: () => now,
  });
  const listed = () => gw!.workers.list().map((w) => w.url);
  const step = async (inRotation: boolean) => {
    drainer.consider(answer(inRotation));
    await drainer.idle();
  };
  return { gw, drainer, records, metrics, listed, step, advance: (ms: number) => (now += ms) };
}

describe('drain through the SGLang gateway worker API', () => {
  it('removes the worker while out of rotation and adds it back (with its type) on recovery', async () => {
    const { drainer, records, listed, step, metrics } = await setup({ workerType: 'regular' });
    await step(false);
    expect(listed()).toEqual([B]);
    expect(drainer.status().out).toBe(true);
    await step(false); // reconciled: nothing more to do
    await step(true);
    expect(listed().sort()).toEqual([A, B]);
    expect(records.map((r) => `${r.action}:${r.result}`)).toEqual(['drain:success', 'undrain:success']);
    expect(records[0]).toMatchObject({
      pool: 'engines',
      state: 'wedged',
      diagnosis: 'completions_hung',
      worker: A,
    });
    const drains = await metrics.drainsTotal.get();
    expect(
      drains.values.find((v) => v.labels.action === 'drain' && v.labels.result === 'success')?.value,
    ).toBe(1);
  });

  it('stops at maxPerWindow: the worker stays in, the skip is journaled once; a new window drains again', async () => {
    const { records, listed, step, advance } = await setup({ maxPerWindow: 2, window: '1h' });
    for (let i = 0; i < 2; i++) {
      await step(false);
      await step(true);
    }
    await step(false);
    await step(false);
    expect(listed().sort()).toEqual([A, B]);
    expect(records.filter((r) => r.result === 'capped')).toHaveLength(1);
    advance(3_600_001);
    await step(false);
    expect(listed()).toEqual([B]);
  });

  it('a dry run calls nothing and journals what it would do, both ways', async () => {
    const { records, listed, step, drainer } = await setup({ dryRun: true });
    await step(false);
    expect(listed().sort()).toEqual([A, B]);
    expect(drainer.status()).toMatchObject({ out: true, dryRun: true });
    await step(true);
    expect(records.map((r) => `${r.action}:${r.result}`)).toEqual(['drain:dry_run', 'undrain:dry_run']);
  });

  it('a gateway that cannot be reached is a failure journaled once, retried after a backoff', async () => {
    const { records, step, advance, drainer } = await setup({}, false);
    await step(false);
    await step(false); // within the backoff: not called again
    expect(records.map((r) => `${r.action}:${r.result}`)).toEqual(['drain:failure']);
    expect(drainer.status().out).toBe(false);
    advance(2_001);
    await step(false);
    expect(records).toHaveLength(1);
  });
});

describe('the simulated gateway worker API (sgl-model-gateway /workers)', () => {
  it('answers with upstream shapes: UUID ids, 400 for a bad one, 404 for an unknown one, 202 on delete', async () => {
    const gw = await startGateway([A]);
    cleanup.push(() => gw.stop());
    const list = (await (await fetch(`${gw.url}/workers`)).json()) as {
      workers: Array<{ id: string; url: string; worker_type: string }>;
      total: number;
    };
    expect(list.total).toBe(1);
    expect(list.workers[0]).toMatchObject({ url: A, worker_type: 'regular' });
    const id = list.workers[0]!.id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await fetch(`${gw.url}/workers/not-a-uuid`, { method: 'DELETE' })).status).toBe(400);
    expect(
      (await fetch(`${gw.url}/workers/00000000-0000-4000-8000-000000000000`, { method: 'DELETE' })).status,
    ).toBe(404);
    const del = await fetch(`${gw.url}/workers/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(202);
    expect(await del.json()).toMatchObject({ status: 'accepted', worker_id: id });
    // With no worker the gateway refuses at once (503), it does not hang.
    const chat = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(chat.status).toBe(503);
    const add = await fetch(`${gw.url}/workers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: A, worker_type: 'regular' }),
    });
    expect(add.status).toBe(202);
    expect(((await add.json()) as { worker_id: string }).worker_id).toBe(id);
  });
});
