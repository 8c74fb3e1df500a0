// Reads at most `maxBytes` of a response body, then drops the rest: an error page (or a hostile server that
// never stops sending) must not grow memory or hold the run until the request timeout.
import type { Dispatcher } from 'undici';

export const ERROR_BODY_MAX_BYTES = 64 * 1024;

export async function readCapped(
  body: Dispatcher.ResponseData['body'],
  maxBytes = ERROR_BODY_MAX_BYTES,
): Promise<string> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    parts.push(total + b.length > maxBytes ? b.subarray(0, maxBytes - total) : b);
    total += b.length;
    if (total >= maxBytes) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).toString('utf8');
}
