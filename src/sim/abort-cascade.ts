// An abort cascade as clients produce it: a burst of streaming completions, each cut off once its first
// bytes arrive (or after `cutAfterMs` when none come). Every cut is a client disconnect → AbortReq → ABORT.
import { request } from 'node:http';

export interface CascadeResult {
  sent: number;
  cutAfterData: number;
  cutWithoutData: number;
  failed: number;
}

export async function abortCascade(
  baseUrl: string,
  opts: { requests?: number; cutAfterMs?: number; model?: string } = {},
) {
  const n = opts.requests ?? 16;
  const cutAfterMs = opts.cutAfterMs ?? 3000;
  const result: CascadeResult = { sent: n, cutAfterData: 0, cutWithoutData: 0, failed: 0 };
  const body = JSON.stringify({
    model: opts.model ?? 'sim-model',
    messages: [{ role: 'user', content: 'Write a long story about a GPU.' }],
    stream: true,
    max_tokens: 256,
  });
  const url = new URL('/v1/chat/completions', baseUrl);
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve) => {
          let settled = false;
          const settle = (outcome?: 'cutAfterData' | 'cutWithoutData' | 'failed') => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            if (outcome) result[outcome]++;
            resolve();
          };
          const req = request(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
            agent: false,
          });
          const timer = setTimeout(() => {
            settle('cutWithoutData');
            req.destroy();
          }, cutAfterMs);
          req.on('response', (res) => {
            res.once('data', () => {
              settle('cutAfterData');
              req.destroy();
            });
            res.on('end', () => settle());
            res.on('error', () => settle());
          });
          req.on('error', () => settle('failed'));
          req.end(body);
        }),
    ),
  );
  return result;
}
