// Incremental Server-Sent Events parser (WHATWG framing), strict enough to tell a broken stream from a
// healthy one: engines only ever send `data:` lines separated by blank lines (SGLang serving_chat.py writes
// each chunk as `data: {json}` and a blank line), so anything else is reported as a framing problem instead
// of being silently skipped.
import { redactor } from '../../lib/redact.js';

export interface SseEvent {
  /** The `data:` lines of the event joined with "\n". */
  data: string;
  event?: string;
}

const KNOWN_FIELDS = new Set(['data', 'event', 'id', 'retry']);

export class SseFramingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SseFramingError';
  }
}

export class SseParser {
  private buf = '';
  private data: string[] = [];
  private dataBytes = 0;
  private event: string | undefined;
  private sawCr = false;

  constructor(private readonly maxLineBytes = 256 * 1024) {}

  /** Feeds decoded text; returns the events completed by it. Throws SseFramingError on bad framing. */
  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // "\r\n" is one line ending: skip the "\n" that follows a "\r" (possibly split across chunks).
      if (c === 10 && this.sawCr && i === start && this.buf === '') {
        this.sawCr = false;
        start = i + 1;
        continue;
      }
      const line = this.buf + text.slice(start, i);
      this.buf = '';
      this.sawCr = c === 13;
      start = i + 1;
      this.line(line, out);
    }
    if (start < text.length) {
      this.sawCr = false;
      this.buf += text.slice(start);
      if (this.buf.length > this.maxLineBytes) {
        throw new SseFramingError(`SSE line longer than ${this.maxLineBytes} bytes`);
      }
    }
    return out;
  }

  /** Called at end of stream: an unterminated event or line means the stream was cut short. */
  end(): void {
    if (this.buf !== '' || this.data.length > 0) {
      throw new SseFramingError('stream ended inside an SSE event (no blank line after it)');
    }
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ data: this.data.join('\n'), event: this.event });
      this.data = [];
      this.dataBytes = 0;
      this.event = undefined;
      return;
    }
    if (line.startsWith(':')) return; // comment / keep-alive ping
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (!KNOWN_FIELDS.has(field)) {
      throw new SseFramingError(`not an SSE field line: ${JSON.stringify(redactor.clip(line, 80))}`);
    }
    if (field === 'data') {
      this.dataBytes += value.length;
      if (this.dataBytes > this.maxLineBytes) {
        throw new SseFramingError(`SSE event longer than ${this.maxLineBytes} bytes`);
      }
      this.data.push(value);
    } else if (field === 'event') this.event = value;
  }
}
