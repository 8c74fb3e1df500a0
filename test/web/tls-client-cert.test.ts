// Issue 15 item 5: the exporter-toolkit web config's TLS settings — client certificates (RequireAndVerifyClientCert
// with client_ca_file, allowed SANs), TLS versions, cipher suites — and http_server_config.headers, applied by a
// daemon bound to 127.0.0.1. Certificates are made here by the real openssl (a missing binary fails loudly).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions, type SecureVersion } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { loadWebConfig } from '../../src/outputs/server/web-config.js';
import { makeSelfSignedCert } from '../helpers/tls.js';
import { capturingLogger } from '../helpers/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-mtls-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function makeCa(name: string) {
  const key = join(dir, `${name}.key`);
  const crt = join(dir, `${name}.crt`);
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    key,
    '-out',
    crt,
  );
  return { key, crt };
}
function clientCert(name: string, issuer: { key: string; crt: string }, san: string) {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const crt = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=${san}\nextendedKeyUsage=clientAuth\n`);
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    key,
    '-out',
    csr,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    issuer.crt,
    '-CAkey',
    issuer.key,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    crt,
  );
  return { key: readFileSync(key), cert: readFileSync(crt) };
}

const server = makeSelfSignedCert(dir, 'server');
const trusted = makeCa('trusted-ca');
const other = makeCa('other-ca');
const scraper = clientCert('scraper', trusted, 'DNS:prometheus.example');
const stranger = clientCert('stranger', other, 'DNS:prometheus.example');
const wrongSan = clientCert('wrong-san', trusted, 'DNS:someone-else.example');

let daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
});

async function start(web: string, onDaemon?: (d: Daemon, webFile: string) => void) {
  const cfg = join(dir, `cfg-${daemons.length}.yaml`);
  writeFileSync(
    cfg,
    `web: { listenAddress: "127.0.0.1:0" }\nstateDir: ${dir}/state\ntargets:\n  - name: t\n    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]\n`,
  );
  const webFile = join(dir, `web-${daemons.length}.yaml`);
  writeFileSync(webFile, web);
  const d = new Daemon({ configPath: cfg, logger: capturingLogger().logger, webConfigFile: webFile });
  daemons.push(d);
  await d.start();
  onDaemon?.(d, webFile);
  return Number(d.address().split(':').pop());
}

interface Answer {
  status?: number;
  headers?: string;
  error?: string;
  cipher?: string;
  version?: string;
}

/** One GET /-/healthy over TLS; the status, or why there was none (handshake refused, connection closed). */
function get(port: number, opts: Partial<ConnectionOptions> = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: server.cert, ...opts });
    let data = '';
    let info: Answer = {};
    const done = (a: Answer) => {
      sock.destroy();
      resolve({ ...info, ...a });
    };
    sock.setTimeout(10_000, () => done({ error: 'timeout' }));
    sock.on('secureConnect', () => {
      info = { cipher: sock.getCipher().name, version: sock.getProtocol() ?? undefined };
      sock.write('GET /-/healthy HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    sock.on('data', (d: Buffer) => (data += d.toString()));
    sock.on('error', (err) => done({ error: err.message }));
    sock.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      done(
        m
          ? { status: Number(m[1]), headers: data.split('\r\n\r\n')[0] }
          : { error: 'closed without an answer' },
      );
    });
  });
}

const tlsBase = `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n`;

describe('web config: client certificates', () => {
  it('RequireAndVerifyClientCert: only a certificate from client_ca_file gets an answer', async () => {
    const port = await start(
      `${tlsBase}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: trusted-ca.crt\n`,
    );
    expect((await get(port, { cert: scraper.cert, key: scraper.key })).status).toBe(200);
    expect((await get(port)).status).toBeUndefined();
    expect((await get(port, { cert: stranger.cert, key: stranger.key })).status).toBeUndefined();
  });

  it('client_allowed_sans: a trusted certificate with another SAN is refused', async () => {
    const port = await start(
      `${tlsBase}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: trusted-ca.crt\n  client_allowed_sans: [prometheus.example]\n`,
    );
    expect((await get(port, { cert: scraper.cert, key: scraper.key })).status).toBe(200);
    expect((await get(port, { cert: wrongSan.cert, key: wrongSan.key })).status).toBeUndefined();
  });

  it('a changed client_auth_type applies to new connections without a restart', async () => {
    let daemon: Daemon | undefined;
    let webFile = '';
    const port = await start(tlsBase, (d, f) => {
      daemon = d;
      webFile = f;
    });
    expect((await get(port)).status).toBe(200);
    writeFileSync(
      webFile,
      `${tlsBase}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: trusted-ca.crt\n`,
    );
    await daemon!.web!.recheck();
    expect((await get(port)).status).toBeUndefined();
    expect((await get(port, { cert: scraper.cert, key: scraper.key })).status).toBe(200);
  });

  it('VerifyClientCertIfGiven: no certificate is fine, an unverifiable one is refused', async () => {
    const port = await start(
      `${tlsBase}  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: trusted-ca.crt\n`,
    );
    expect((await get(port)).status).toBe(200);
    expect((await get(port, { cert: scraper.cert, key: scraper.key })).status).toBe(200);
    expect((await get(port, { cert: stranger.cert, key: stranger.key })).status).toBeUndefined();
  });
});

describe('web config: versions, ciphers, headers', () => {
  it('min_version TLS13 refuses a TLS 1.2 client', async () => {
    const port = await start(`${tlsBase}  min_version: TLS13\n`);
    const v13 = await get(port);
    expect(v13.status).toBe(200);
    expect(v13.version).toBe('TLSv1.3');
    const v12 = await get(port, { maxVersion: 'TLSv1.2' as SecureVersion });
    expect(v12.status).toBeUndefined();
    expect(v12.error).toBeDefined();
  });

  it('cipher_suites (Go names) choose the TLS 1.2 cipher', async () => {
    const port = await start(
      `${tlsBase}  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]\n`,
    );
    const a = await get(port);
    expect(a.status).toBe(200);
    expect(a.version).toBe('TLSv1.2');
    expect(a.cipher).toBe('ECDHE-RSA-AES256-GCM-SHA384');
  });

  it('http_server_config.headers are on every answer', async () => {
    const port = await start(
      `${tlsBase}http_server_config:\n  headers:\n    X-Frame-Options: deny\n    Strict-Transport-Security: max-age=31536000\n`,
    );
    const a = await get(port);
    expect(a.status).toBe(200);
    expect(a.headers).toMatch(/^x-frame-options: deny$/im);
    expect(a.headers).toMatch(/^strict-transport-security: max-age=31536000$/im);
  });

  it('takes the certificate, key and client CA inline as well as from files', async () => {
    const block = (pem: string | Buffer) =>
      `|\n${String(pem)
        .trim()
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n')}\n`;
    const port = await start(
      `tls_server_config:\n  cert: ${block(server.cert)}  key: ${block(server.key)}  client_auth_type: RequireAndVerifyClientCert\n  client_ca: ${block(readFileSync(trusted.crt))}`,
    );
    expect((await get(port, { cert: scraper.cert, key: scraper.key })).status).toBe(200);
    expect((await get(port, { cert: stranger.cert, key: stranger.key })).status).toBeUndefined();
  });

  it('rate_limit: a token bucket for every request, 429 when empty', async () => {
    const port = await start(`${tlsBase}rate_limit:\n  interval: 1h\n  burst: 2\n`);
    expect((await get(port)).status).toBe(200);
    expect((await get(port)).status).toBe(200);
    const third = await get(port);
    expect(third.status).toBe(429);
    expect(third.headers).toMatch(/^retry-after: \d+$/im);
  });

  it('refuses what exporter-toolkit refuses, naming the field', () => {
    const cases: [string, RegExp][] = [
      [
        `${tlsBase}  client_ca_file: trusted-ca.crt\n`,
        /client_ca_file or client_ca: set without a client_auth_type/,
      ],
      [
        `${tlsBase}  client_auth_type: RequireAndVerifyClientCert\n`,
        /client_ca_file or client_ca: required with/,
      ],
      [`${tlsBase}  client_auth_type: Sometimes\n`, /client_auth_type: /],
      [`${tlsBase}  min_version: TLS13\n  max_version: TLS12\n`, /min_version: TLS13 is above max_version/],
      [`${tlsBase}  cipher_suites: [TLS_FAKE]\n`, /unknown cipher suite "TLS_FAKE"/],
      [`${tlsBase}  client_allowed_sans: [a]\n`, /client_allowed_sans: needs client_auth_type/],
      [`http_server_config:\n  headers:\n    X-Powered-By: me\n`, /X-Powered-By: unknown key/],
      [`${tlsBase}  cert: inline\n`, /cannot specify both cert_file and cert/],
      [`tls_server_config:\n  key_file: server.key\n`, /missing cert_file or cert/],
      [`rate_limit:\n  interval: often\n  burst: 1\n`, /rate_limit\.interval: expected a duration/],
      [`http_server_config:\n  headers:\n    X-Frame-Options: allow\n`, /expected deny or sameorigin/],
    ];
    for (const [text, re] of cases) {
      const f = join(dir, 'bad-web.yaml');
      writeFileSync(f, text);
      let err: unknown;
      try {
        loadWebConfig(f);
      } catch (e) {
        err = e;
      }
      expect(err, text).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems.join('\n'), text).toMatch(re);
    }
  });
});
