// An incident bundle's log window can be megabytes of hostile text (30 logged 64 KB prompts blocked a capture
// for 297 s in issue 24 #2). The bundle writer redacts it in chunks with the event loop let through, and the
// chunked result is the whole-text result.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BundleWriter, type BundleFs } from '../../src/outputs/incidents/bundle.js';
import { REDACTED, redactInChunks, redactor } from '../../src/lib/redact.js';
import { mulberry32 as rng } from '../../src/sim/prng.js';

const SECRET = 'configured-Secret-42';
afterAll(() => redactor.set([]));

// Pieces that build credentials across newlines (`Bearer\n<token>`, `token:\n <value>`) and around them.
const PIECES = [
  'token',
  'Bearer',
  'Basic',
  'password',
  'api_key',
  '=',
  ':',
  '"',
  "'",
  ' ',
  '\n',
  '\n',
  '\n  ',
  'abc123xyz',
  'q9',
  'http://u:p4ss@h/',
  SECRET,
  'x',
  '.',
  '}',
  'é',
];

describe('redacting in chunks', () => {
  it('gives the same text as redacting the whole, at any chunk size', async () => {
    redactor.set([SECRET]);
    const r = (t: string) => redactor.redact(t);
    const next = rng(7);
    for (let n = 0; n < 1500; n++) {
      let text = '';
      const len = 5 + Math.floor(next() * 60);
      for (let k = 0; k < len; k++) text += PIECES[Math.floor(next() * PIECES.length)];
      const size = 1 + Math.floor(next() * 12);
      expect(await redactInChunks(text, r, size), JSON.stringify(text)).toBe(r(text));
    }
  });

  it('lets the event loop through while a bundle file of hostile prompts is written', async () => {
    redactor.set([SECRET]);
    let text = '';
    for (let k = 0; k < 30; k++) text += `Receive: obj=GenerateReqInput(text='${'a-'.repeat(32768)}')\n`;
    text += `Authorization: Bearer abcdef123456 ${SECRET}\n`;
    // A file system that answers at once (microtasks only): every turn of the loop counted below is one the
    // redaction gave back.
    const files = new Map<string, string>();
    const fs: BundleFs = {
      mkdir: () => Promise.resolve(),
      writeFile: (p, d) => {
        files.set(p, d);
        return Promise.resolve();
      },
      rename: () => Promise.resolve(),
      rm: () => Promise.resolve(),
      freeBytes: () => Promise.resolve(1e12),
    };
    const w = new BundleWriter('/bundle', (t) => redactor.redact(t), fs);
    await w.init();
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await w.write('logs/prefill.log', text);
    ticking = false;
    // 2 MB in 256 KB chunks: the loop ran between them (redacted whole, not once until the end).
    expect(turns).toBeGreaterThanOrEqual(4);
    const out = files.get(join('/bundle', 'logs/prefill.log'))!;
    expect(out).not.toContain(SECRET);
    expect(out).toContain(`Bearer ${REDACTED} ${REDACTED}`);
    expect(out).toBe(redactor.redact(text));
  });
});
