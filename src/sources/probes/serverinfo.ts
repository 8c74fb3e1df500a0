// serverinfo: GET a JSON endpoint of the engine. One that answers from the scheduler blocks when the
// scheduler is stuck while /health still answers (SGLang entrypoints/http_server.py get_server_info →
// get_internal_state, sglang #4191); `expect` checks fields of the answer (a small JSON-path subset,
// ./serverinfo-path.ts). Any JSON object or array fits:
//   SGLang    GET /get_server_info  an object (server args, internal_states): a scheduler round trip
//   llama.cpp GET /slots            an array, one object per slot ({id, n_ctx, speculative, is_processing, …},
//                                   server_slot::to_json in tools/server/server-context.cpp); the handler posts
//                                   a METRICS task to the server queue and waits for the main loop to answer
//   vLLM      GET /load             {"server_load": N} (vllm/entrypoints/openai/api_server.py,
//                                   get_server_load_metrics): requests in flight in the API server, counted
//                                   with --enable-server-load-tracking. It does not wait for the engine core,
//                                   so it does not hang; `expect: [{path: $.server_load, lt: N}]` catches a pile-up
import type { ProbeOf, ServerinfoExpect } from '../../config/schema.js';
import { readCapped, readSnippet, send } from './request.js';
import { parseJsonPath, selectJsonPath } from '../../lib/json-path.js';
import { ProbeFailure, type ProbeFn } from './types.js';
import { redactor } from '../../lib/redact.js';

const SERVERINFO_BODY_CAP = 4 * 1024 * 1024;

/** A value from the server, quoted short: it lands in an error message. */
function quote(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${redactor.clip(s, 77)}...` : s;
}

function test(e: ServerinfoExpect): string {
  if (e.equals !== undefined) return quote(e.equals);
  const parts: string[] = [];
  if (e.gt !== undefined) parts.push(`> ${e.gt}`);
  if (e.lt !== undefined) parts.push(`< ${e.lt}`);
  return parts.join(' and ');
}

function passes(e: ServerinfoExpect, v: unknown): boolean {
  if (e.equals !== undefined) return v === e.equals;
  if (e.lt === undefined && e.gt === undefined) return true;
  if (typeof v !== 'number') return false;
  return (e.lt === undefined || v < e.lt) && (e.gt === undefined || v > e.gt);
}

/** What is wrong with `doc` under one expectation; undefined when it holds. */
export function checkExpectation(doc: unknown, e: ServerinfoExpect): string | undefined {
  const values = selectJsonPath(doc, parseJsonPath(e.path));
  if (e.exists === false) {
    return values.length === 0 ? undefined : `${e.path}: present (${quote(values[0])}), expected absent`;
  }
  if (values.length === 0) return `${e.path}: not found`;
  const bad = values.filter((v) => !passes(e, v));
  if (bad.length === 0) return undefined;
  const of = values.length > 1 ? ` (${bad.length} of ${values.length} values)` : '';
  return `${e.path}: expected ${test(e)}, got ${quote(bad[0])}${of}`;
}

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
  if (info === null || typeof info !== 'object') {
    throw new ProbeFailure(
      'bad_response',
      `server info is not a JSON object or array (got ${quote(info)})`,
      res.status,
    );
  }
  const problems = ctx.probe.expect.flatMap((e) => checkExpectation(info, e) ?? []);
  if (problems.length > 0) throw new ProbeFailure('bad_response', problems.join('; '), res.status);
  return { result: 'ok', status: res.status };
};
