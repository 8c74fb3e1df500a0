// The redactor runs synchronously over untrusted text (prompts echoed in engine logs, HTTP bodies, bundle files),
// so every shape it looks for must cost time linear in the text. The regex it had restarted a greedy prefix at
// every word boundary: `'a-'.repeat(32000)` took seconds and froze the daemon through an incident capture.
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor, redactShapes, type ScanStats } from '../../src/lib/redact.js';
import { mulberry32 as rng } from '../../src/sim/prng.js';

const KB64 = 64 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(KB64 / unit.length)).slice(0, KB64);

/** Hostile 64 KB lines: long runs of each shape's classes, keywords and schemes without a credential after them. */
const ADVERSARIAL: Record<string, string> = {
  'a-a-a-': fill('a-'),
  a_a_a_: fill('a_'),
  tokentoken: fill('token'),
  'token=token=': fill('token='),
  'token: ': fill('token: '),
  'password="': fill('password="'),
  api_key: fill('api_key'),
  'Bearer Bearer ': fill('Bearer '),
  'Bearer+run': 'Bearer ' + fill('a-'),
  'Basic    ': fill('Basic' + ' '.repeat(40)),
  'token=tabs': 'token' + '\t'.repeat(KB64),
  'secret=a1a1 short': fill('secret=a1 '),
  'x-token-x': fill('x-token-x-'),
  digits: fill('1-'),
  ':////': fill('://'),
  'url userinfo run': 'http://' + fill('a:'),
  'url no at': fill('http://u:p '),
};

// The regexes the scanner replaced, kept as the oracle of what is redacted (fine on short inputs).
const OLD: Array<[RegExp, string]> = [
  [/\b(Bearer|Basic)(\s+)(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{8,}/g, `$1$2${REDACTED}`],
  [
    /\b([A-Za-z0-9_-]*(?:api[_-]?key|token|secret|password|passwd)["']?\s*[=:]\s*["']?)(?=[^\s"'&,;}<]*[A-Za-z])(?=[^\s"'&,;}<]*[0-9])[^\s"'&,;}<]{6,}/gi,
    `$1${REDACTED}`,
  ],
];
const oldShapes = (text: string) => OLD.reduce((t, [re, to]) => t.replace(re, to), text);

const PIECES = [
  'token',
  'TOKEN',
  'api_key',
  'apikey',
  'Api-Key',
  'secret',
  'password',
  'passwd',
  'Bearer',
  'Basic',
  'bearer',
  '=',
  ':',
  ' ',
  '\t',
  '\n',
  '"',
  "'",
  '&',
  ',',
  ';',
  '}',
  '<',
  'a',
  'Z',
  '1',
  '9',
  '-',
  '_',
  '.',
  '~',
  '+',
  '/',
  'x1y2z3',
  'abc123def',
  '#',
  'é',
  '\u00a0',
  'xBearer',
  '_token',
];

describe('credential shapes are linear', () => {
  it('looks at each character of an adversarial 64 KB line a bounded number of times', () => {
    for (const [name, text] of Object.entries(ADVERSARIAL)) {
      const st: ScanStats = { steps: 0 };
      redactShapes(text, st);
      // Two passes, each looking at a character a few times (a keyword compare, a run measured once).
      expect(st.steps, name).toBeLessThanOrEqual(16 * text.length);
    }
  });

  it('stays within a generous factor of a plain scan of the same text', () => {
    const r = new Redactor();
    r.set(['configured-secret-1234']);
    // The quadratic regex took 0.5–2 s per line here; a plain scan takes well under a millisecond.
    const best = (fn: () => void) => {
      let min = Infinity;
      for (let k = 0; k < 5; k++) {
        const t0 = performance.now();
        fn();
        min = Math.min(min, performance.now() - t0);
      }
      return min;
    };
    for (const [name, text] of Object.entries(ADVERSARIAL)) {
      let sink = 0;
      const plain = best(() => {
        // A plain scan: every character read once, and the searches redact() itself starts with.
        for (let i = 0; i < text.length; i++) sink += text.charCodeAt(i) & 1;
        sink += text.indexOf('token') + text.indexOf('Bearer') + (text.includes('configured') ? 1 : 0);
      });
      const redacting = best(() => void r.redact(text));
      expect(sink).toBeGreaterThan(-Infinity);
      // Generous: 200 times a plain scan, plus 20 ms for a loaded machine; the old regex was 1000s of times over.
      expect(redacting, name).toBeLessThan(200 * plain + 20);
    }
  });

  it('redacts exactly what the regexes it replaced redacted', () => {
    const next = rng(24);
    for (let n = 0; n < 4000; n++) {
      let text = '';
      const len = 1 + Math.floor(next() * 14);
      for (let k = 0; k < len; k++) text += PIECES[Math.floor(next() * PIECES.length)];
      expect(redactShapes(text), JSON.stringify(text)).toBe(oldShapes(text));
    }
  });

  it('keeps the known cases', () => {
    const cases = [
      'Authorization: Bearer abcdEFGH1234',
      'Basic dXNlcjpwYXNzMTIz',
      'Basic authentication failed',
      'x_api_key=ab12cd34&y=1',
      '{"password": "hunter22x"}',
      "token: 'q1w2e3r4'",
      '#token: 123456',
      'bearerToken: environment variable WW_TOKEN is not set',
      'passwd="a"=b passwd"=abc123',
      'token=token=token=abc123',
    ];
    for (const text of cases) expect(redactShapes(text), text).toBe(oldShapes(text));
    expect(redactShapes('Authorization: Bearer abcdEFGH1234')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactShapes('x_api_key=ab12cd34&y=1')).toBe(`x_api_key=${REDACTED}&y=1`);
  });
});
