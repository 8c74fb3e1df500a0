// health: GET a path and expect a status. Cheap, and blind to wedges on its own: it tells down from wedged.
import type { ProbeOf } from '../../config/schema.js';
import { readCapped, send } from './request.js';
import { ProbeFailure, type ProbeFn } from './types.js';

const HEALTH_BODY_CAP = 64 * 1024;

export const healthProbe: ProbeFn<ProbeOf<'health'>> = async (ctx) => {
  const res = await send(ctx, { method: 'GET', path: ctx.probe.path ?? '/health', bodyPhase: 'stream' });
  // The body is read (and capped) even when unused: the connection must end cleanly for reuse.
  await readCapped(ctx, res, HEALTH_BODY_CAP);
  if (res.status !== ctx.probe.expectStatus) {
    throw new ProbeFailure(
      'http_error',
      `HTTP ${res.status}, expected ${ctx.probe.expectStatus}`,
      res.status,
    );
  }
  return { result: 'ok', status: res.status };
};
