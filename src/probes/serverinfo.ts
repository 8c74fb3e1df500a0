// serverinfo: GET /get_server_info (or /server_info). It makes a scheduler round-trip, so it blocks when the
// scheduler is stuck while /health still answers (engine-signals.md §3, sglang #4191).
import type { ProbeOf } from '../config/schema.js';
import { readCapped, readSnippet, send } from './request.js';
import { ProbeFailure, type ProbeFn } from './types.js';

const SERVERINFO_BODY_CAP = 4 * 1024 * 1024;

export const serverinfoProbe: ProbeFn<ProbeOf<'serverinfo'>> = async (ctx) => {
  const res = await send(ctx, {
    method: 'GET',
    path: ctx.probe.path ?? '/get_server_info',
    bodyPhase: 'stream',
  });
  if (res.status !== ctx.probe.expectStatus) {
    const snippet = await readSnippet(res);
    throw new ProbeFailure('http_error', `HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`, res.status);
  }
  const body = await readCapped(ctx, res, SERVERINFO_BODY_CAP);
  if (body.length === 0) throw new ProbeFailure('empty', 'empty server info body', res.status);
  let info: unknown;
  try {
    info = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ProbeFailure('bad_response', 'server info is not valid JSON', res.status);
  }
  if (info === null || typeof info !== 'object' || Array.isArray(info)) {
    throw new ProbeFailure('bad_response', 'server info is not a JSON object', res.status);
  }
  return { result: 'ok', status: res.status };
};
