// Generated prompt text of a given length in tokens, and request bodies that carry it. A long-context prompt is
// never built as one string: the body is written in pieces as it is sent (with its exact Content-Length), so a
// prompt of millions of tokens costs the client a 64 KiB piece at a time, not the prompt's size three times
// over (the text, the JSON, the bytes).
import { Readable } from 'node:stream';

const WORDS =
  'the keeper climbed the stairs of the old light and looked out over the grey sea at night'.split(' ');
const PIECE_CHARS = 64 * 1024;

/**
 * A user message of about `tokens` tokens: common English words are about one token each for the usual BPE
 * vocabularies (the server's usage.prompt_tokens is reported, so the real count is visible).
 */
export class GeneratedPrompt {
  /** Its length in bytes (ASCII: also in characters). */
  readonly length: number;

  constructor(readonly tokens: number) {
    const full = Math.floor(tokens / WORDS.length);
    const part = WORDS.slice(0, tokens % WORDS.length);
    const chars = (ws: readonly string[]) => ws.reduce((n, w) => n + w.length, 0);
    // Every word, and a space between each two.
    this.length = full * chars(WORDS) + chars(part) + Math.max(0, tokens - 1);
  }

  /** The text in pieces of about 64 KiB, in order. */
  *pieces(): Generator<string> {
    let piece = '';
    for (let i = 0; i < this.tokens; i++) {
      piece += (i === 0 ? '' : ' ') + WORDS[i % WORDS.length]!;
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = '';
      }
    }
    if (piece !== '') yield piece;
  }

  /** The whole text: for prompts small enough to hold (a conversation's round). */
  toString(): string {
    return [...this.pieces()].join('');
  }
}

export function promptOfTokens(tokens: number): string {
  return new GeneratedPrompt(tokens).toString();
}

/** Stands in for a GeneratedPrompt in the JSON text; JSON-safe, and no text verify sends contains it. */
const SLOT = '@@wedgewatch:generated-prompt@@';

export interface RequestBody {
  /** Bytes, for Content-Length. */
  length: number;
  /** A fresh pass over the body (a retried request sends it again). */
  open(): Readable | string;
}

/** `payload` as JSON; a GeneratedPrompt in it (one at most) is streamed in place instead of built. */
export function requestBody(payload: unknown): RequestBody {
  let prompt: GeneratedPrompt | undefined;
  const json = JSON.stringify(payload, (_k, v: unknown) => {
    if (!(v instanceof GeneratedPrompt)) return v;
    if (prompt) throw new Error('one generated prompt per request');
    prompt = v;
    return SLOT;
  });
  const p = prompt;
  if (!p) return { length: Buffer.byteLength(json), open: () => json };
  const at = json.indexOf(SLOT);
  const head = json.slice(0, at);
  const tail = json.slice(at + SLOT.length);
  return {
    length: Buffer.byteLength(head) + p.length + Buffer.byteLength(tail),
    open: () =>
      Readable.from(
        (function* () {
          yield head;
          yield* p.pieces();
          yield tail;
        })(),
        { objectMode: false },
      ),
  };
}
