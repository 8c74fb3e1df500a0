// The context length the deployment serves, for the long-input probe's size: GET /v1/models, the model card's
// `max_model_len` (vLLM vllm/entrypoints/openai/engine/protocol.py @d7e5252 class ModelCard; SGLang
// python/sglang/srt/entrypoints/openai/protocol.py @004c82e class ModelCard), else llama.cpp's per-slot context,
// `data[].meta.n_ctx` of /v1/models or `default_generation_settings.n_ctx` of GET /props (ggml-org/llama.cpp
// tools/server server-context.cpp get_res_model_info, get_res_props; src/verify/server-info.ts cites the lines).
// Bounded reads, a positive safe integer or nothing: the engine chooses the number it reports, so the caller caps
// what it does with it. A deployment that answers neither is sized by the probe's fallback, not failed.
import { readCapped, send } from './request.js';
import type { ProbeContext } from './types.js';

/** /v1/models and /props are a few KB; a model list of thousands of LoRA adapters stays under this. */
const BODY_CAP = 256 * 1024;

export interface ContextLength {
  tokens: number;
  /** Where it was read, for the run's message. */
  source: string;
}

const size = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

async function getJson(ctx: ProbeContext, path: string): Promise<unknown> {
  try {
    const res = await send(ctx, { method: 'GET', path, bodyPhase: 'stream' });
    const text = (await readCapped(ctx, res, BODY_CAP)).toString('utf8');
    return res.status === 200 ? (JSON.parse(text) as unknown) : undefined;
  } catch (err) {
    // The run's own timeout ends the run; anything else (a 404, no JSON, an oversized list) is "not reported".
    if (ctx.signal.aborted) throw err;
    return undefined;
  }
}

/** The context one request of `ctx.model` can use, as the deployment reports it; undefined when it does not. */
export async function readContextLength(ctx: ProbeContext): Promise<ContextLength | undefined> {
  const models = obj(await getJson(ctx, '/v1/models'));
  const data = Array.isArray(models?.data) ? (models.data as unknown[]).map(obj) : [];
  const card = data.find((m) => m?.id === ctx.model) ?? (data.length === 1 ? data[0] : undefined);
  const maxLen = size(card?.max_model_len);
  if (maxLen !== undefined) return { tokens: maxLen, source: 'max_model_len of /v1/models' };
  const metaCtx = size(obj(card?.meta)?.n_ctx);
  if (metaCtx !== undefined) return { tokens: metaCtx, source: 'meta.n_ctx of /v1/models (llama.cpp)' };
  const props = obj(await getJson(ctx, '/props'));
  const propsCtx = size(obj(props?.default_generation_settings)?.n_ctx);
  if (propsCtx !== undefined)
    return { tokens: propsCtx, source: 'default_generation_settings.n_ctx of /props (llama.cpp)' };
  return undefined;
}
