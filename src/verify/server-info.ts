// What the server says about itself that sizes a step: its context length (long-context) and its slot count
// (batching), read where each engine reports them. Bounded reads, integers checked; a server that reports
// nothing (or nothing usable) leaves the step to its defaults.
//
// Where each engine reports them (upstream source):
// - vLLM and SGLang: GET /v1/models, the model card's `max_model_len` (SGLang ModelCard, sgl-project/sglang
//   python/sglang/srt/entrypoints/openai/protocol.py @004c82e ~line 80; vLLM's ModelCard has the same field).
// - llama.cpp (ggml-org/llama.cpp tools/server @80fb11a, unchanged in server-context.cpp @001d906a):
//   GET /v1/models `data[].meta.n_ctx` (server-context.cpp:4540, get_res_model_info), GET /props
//   `default_generation_settings.n_ctx` and `total_slots` (server-context.cpp:4590 and :4598, get_res_props), GET
//   /slots `[].n_ctx` (server-task.cpp:1505, server_slot::to_json; on unless --no-slots). All three are the
//   context of one slot (n_ctx_slot(), server-context.cpp:4011: the -c total split over --parallel slots and
//   capped at the model's training context), which is what one request can use.
import { Client } from '../lib/http/undici.js';
import { readCapped } from './read-capped.js';
import type { Target } from './target.js';

export interface Reported {
  value: number;
  /** Where it was read, for the step's report line. */
  source: string;
}

export interface ServerInfo {
  context?: Reported;
  slots?: Reported;
  /** URL path of llama.cpp's /slots when it answered (a running count without --metrics-url). */
  slotsPath?: string;
}

const BODY_MAX_BYTES = 4 * 1024 * 1024;

/**
 * How many requests a step runs at once: the flag when given (> 0), else `fallback` — or the slots the server
 * reports when there are fewer. llama.cpp runs at most --parallel requests at once and queues the rest, so more
 * than its slots measures its queue, not what the step asks (a batch, a round's first token).
 */
export function fitToSlots(
  flag: { value: number; name: string },
  fallback: number,
  slots: Reported | undefined,
): { n: number; source: string } {
  if (flag.value > 0) return { n: flag.value, source: flag.name };
  if (slots && slots.value < fallback) return { n: slots.value, source: `${slots.source} ${slots.value}` };
  return { n: fallback, source: 'default' };
}

/** A reported size: a positive integer (a JSON number), else nothing. */
function size(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;
}

type Card = { id?: unknown; max_model_len?: unknown; meta?: { n_ctx?: unknown } };

/** The context and slot count the server reports, asking /v1/models, then /props, then /slots as needed. */
export async function readServerInfo(target: Target, timeoutMs = 10_000): Promise<ServerInfo> {
  const client = new Client(target.origin);
  const base = target.modelsPath.replace(/\/v1\/models$/, '');
  const get = async (path: string): Promise<unknown> => {
    try {
      const res = await client.request({
        method: 'GET',
        path,
        headers: { ...target.headers, accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await readCapped(res.body, BODY_MAX_BYTES);
      return res.statusCode === 200 ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      return undefined;
    }
  };
  const info: ServerInfo = {};
  try {
    const models = (await get(target.modelsPath)) as { data?: unknown } | undefined;
    const data = Array.isArray(models?.data) ? (models.data as Card[]) : [];
    const card = data.find((m) => m?.id === target.model) ?? (data.length === 1 ? data[0] : undefined);
    const maxLen = size(card?.max_model_len);
    const metaCtx = size(card?.meta?.n_ctx);
    if (maxLen) info.context = { value: maxLen, source: `max_model_len of ${target.modelsPath}` };
    else if (metaCtx)
      info.context = { value: metaCtx, source: `meta.n_ctx of ${target.modelsPath} (llama.cpp)` };

    const props = (await get(`${base}/props`)) as
      { default_generation_settings?: { n_ctx?: unknown }; total_slots?: unknown } | undefined;
    const propsCtx = size(props?.default_generation_settings?.n_ctx);
    if (!info.context && propsCtx)
      info.context = {
        value: propsCtx,
        source: `default_generation_settings.n_ctx of ${base}/props (llama.cpp)`,
      };
    const totalSlots = size(props?.total_slots);
    if (totalSlots) info.slots = { value: totalSlots, source: `total_slots of ${base}/props (llama.cpp)` };

    if (props === undefined && info.context) return info;
    const slots = await get(`${base}/slots`);
    if (Array.isArray(slots) && slots.length > 0) {
      info.slotsPath = `${base}/slots`;
      const ctx = (slots as { n_ctx?: unknown }[]).map((s) => size(s?.n_ctx));
      const least = ctx.every((c) => c !== undefined) ? Math.min(...(ctx as number[])) : undefined;
      if (!info.context && least)
        info.context = { value: least, source: `n_ctx of ${base}/slots (llama.cpp)` };
      info.slots ??= { value: slots.length, source: `${slots.length} entries of ${base}/slots (llama.cpp)` };
    }
    return info;
  } finally {
    await client.destroy().catch(() => {});
  }
}
