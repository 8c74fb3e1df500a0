// A secret the error snippet's 300-character cut went through used to escape redaction: the cut came first,
// and the 18 characters left no longer matched the 20-character token (issue 24 #10). Redaction now comes
// before every cut, and where text arrives already cut (a capped read) the fragment at the cut goes too.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { readSnippet, type ProbeResponse } from '../../src/sources/probes/request.js';
import { REDACTED, Redactor, redactor } from '../../src/lib/redact.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';
import { tempDir } from '../web/helpers.js';

const SECRET = 'Zq7xK2mP9vR4tW8yL3nB';
/** Every piece of the secret long enough to matter: none may show. */
const fragments = (s: string, min = 6) => {
  const out: string[] = [];
  for (let a = 0; a + min <= s.length; a++) out.push(s.slice(a, a + min));
  return out;
};
const leaks = (text: string) => fragments(SECRET).filter((f) => text.includes(f));

const response = (body: string): ProbeResponse =>
  ({
    status: 500,
    contentType: 'text/plain',
    body: Readable.from([Buffer.from(body)]),
  }) as unknown as ProbeResponse;

describe('a secret cut by a snippet', () => {
  afterAll(() => redactor.set([]));

  it('is redacted when it straddles the 300th character', async () => {
    redactor.set([SECRET]);
    for (let at = 280; at <= 300; at++) {
      const out = await readSnippet(response(`${'e'.repeat(at)}${SECRET} and more`));
      expect(leaks(out), `secret at ${at}: ${out.slice(270)}`).toEqual([]);
    }
  });

  it('is redacted when the 2048-byte read cap cuts it (whitespace collapsed, it lands inside 300)', async () => {
    redactor.set([SECRET]);
    for (let cut = 4; cut < SECRET.length; cut++) {
      const body = `${' '.repeat(2048 - 100 - cut)}${'w'.repeat(100)}${SECRET}${'z'.repeat(1000)}`;
      const out = await readSnippet(response(body));
      expect(out.endsWith(REDACTED), out).toBe(true);
      expect(leaks(out)).toEqual([]);
    }
  });

  it('a credential shape the cut went through is redacted without its digit', () => {
    const r = new Redactor();
    // The digits come after the cut: whole, this is a credential; cut, the old shape saw only letters.
    const line = 'upstream said: Authorization: Bearer abcdefghijklmnopqrstuvwx12 token=qwertyuiopas99';
    for (let max = 40; max < line.length; max++) {
      const out = r.clip(line, max);
      expect(out, out).not.toMatch(/Bearer [a-z]{3,}/);
      expect(out, out).not.toMatch(/token=[a-z]{3,}/);
    }
    // Whole text is left as it was when nothing was cut.
    expect(r.clip('Basic authentication failed', 100)).toBe('Basic authentication failed');
  });

  it('a fragment at a cut start or end goes; text without one is untouched', () => {
    const r = new Redactor();
    r.set([SECRET]);
    expect(r.redact(`x ${SECRET.slice(0, 12)}`, { end: true })).toBe(`x ${REDACTED}`);
    expect(r.redact(`${SECRET.slice(7)} y`, { start: true })).toBe(`${REDACTED} y`);
    expect(r.redact(`x ${SECRET.slice(0, 12)}`)).toBe(`x ${SECRET.slice(0, 12)}`);
    expect(r.redact('plain text', { start: true, end: true })).toBe('plain text');
  });
});

describe('/api/status', () => {
  let server: Server;
  let url = '';
  const dir = tempDir('ww-snippet-cut-');
  beforeAll(async () => {
    // An error page quoting the token so that it straddles the snippet's 300th character.
    server = createServer((req, res) => {
      req.resume();
      const auth = String(req.headers.authorization);
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end(`${'e'.repeat(300 - 'Bearer '.length - 9)}${auth} was refused`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows no fragment of a token the error snippet cut', async () => {
    const file = join(dir, 'cfg.yaml');
    writeFileSync(
      file,
      `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: t
    endpoints:
      - { name: api, url: "${url}", bearerToken: "\${SECRET}" }
    probes:
      - { name: info, kind: serverinfo, every: 1s, jitter: 0, timeout: 5s, path: /get_server_info }
`,
    );
    const { logger, lines } = capturingLogger('debug');
    const d = new Daemon({ configPath: file, logger, env: { SECRET }, plugins: routePlugins });
    await d.start();
    try {
      const get = async (path: string) => (await request(`http://${d.address()}${path}`)).body.text();
      let status = '';
      await waitFor(
        async () => {
          status = await get('/api/status');
          return status.includes('HTTP 503');
        },
        { what: 'the failed serverinfo probe in /api/status', timeoutMs: 20_000 },
      );
      const debug = await get('/probe?target=t&probe=info&debug=true');
      for (const [where, text] of Object.entries({ status, debug, logs: lines.join('') })) {
        expect(leaks(text), where).toEqual([]);
      }
      // Not vacuous: the snippet reached the status with its cut secret masked.
      expect(status).toContain(`Bearer ${REDACTED}`);
    } finally {
      await d.stop();
    }
  });
});
