import { describe, expect, it } from 'vitest';
import { SseFramingError, SseParser } from '../../src/sources/probes/sse.js';

function feedAll(parts: string[]) {
  const p = new SseParser(1024);
  const out = parts.flatMap((x) => p.push(x).map((e) => e.data));
  p.end();
  return out;
}

describe('SseParser', () => {
  it('splits events on blank lines with \\n, \\r\\n and \\r endings, across any chunk boundary', () => {
    const text = 'data: a\n\ndata: b\r\n\r\n: ping\r\rdata: c1\ndata: c2\n\ndata: [DONE]\r\n\r\n';
    const whole = feedAll([text]);
    expect(whole).toEqual(['a', 'b', 'c1\nc2', '[DONE]']);
    for (let cut = 1; cut < text.length; cut++) {
      expect(feedAll([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    }
    expect(feedAll(text.split(''))).toEqual(whole);
  });

  it('rejects non-SSE lines, overlong lines and a stream cut inside an event', () => {
    expect(() => new SseParser().push('HTTP/1.1 200 OK\n')).toThrow(SseFramingError);
    expect(() => new SseParser(16).push('data: ' + 'x'.repeat(40))).toThrow(/longer than 16/);
    const p = new SseParser();
    p.push('data: {"a":1}\n');
    expect(() => p.end()).toThrow(/ended inside an SSE event/);
  });
});
