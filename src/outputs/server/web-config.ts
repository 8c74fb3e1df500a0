// The web config file (`--web.config.file`), in the manner of the Prometheus exporter-toolkit: TLS certificate
// and key, and basic-auth users with bcrypt hashes. It is re-read when it (or the certificate or key) changes,
// so certificates rotate without a restart; a bad new version is logged and the running one kept.
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Server as HttpsServer } from 'node:https';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type SecureVersion, type TLSSocket } from 'node:tls';
import YAML from 'yaml';
import { z } from 'zod';
import { duration } from '../../config/duration.js';
import { ConfigError, formatPath } from '../../config/load.js';
import type { Logger } from '../../lib/logger.js';
import { BCRYPT_HASH } from './auth.js';

/** Go's crypto/tls version names (exporter-toolkit min_version/max_version) → Node's. */
const TLS_VERSIONS = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const;
type GoTlsVersion = keyof typeof TLS_VERSIONS;

/**
 * The cipher suites Go's tls.CipherSuites() and tls.InsecureCipherSuites() name for TLS ≤ 1.2, as OpenSSL names
 * them (TLS 1.3 suites are not configurable, in Go as here). Go: crypto/tls/cipher_suites.go.
 */
const CIPHER_SUITES: Record<string, string> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  // Go's older aliases of the two above.
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
};
/** Node's TLS 1.3 suites: kept whenever cipher_suites narrows TLS ≤ 1.2, as Go keeps its TLS 1.3 suites. */
const TLS13_SUITES = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256';
/** Go's tls.CurveID names → OpenSSL curve names. */
const CURVES = { CurveP256: 'P-256', CurveP384: 'P-384', CurveP521: 'P-521', X25519: 'X25519' } as const;

/** Go's tls.ClientAuthType names, as exporter-toolkit accepts them (RequireClientCert: its old alias). */
export const CLIENT_AUTH_TYPES = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'RequireClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

/** Response headers exporter-toolkit lets a web config set (web/tls_config.go validHeaderValues). */
const headersSchema = z.strictObject({
  'Content-Security-Policy': z.string().optional(),
  'X-Frame-Options': z
    .string()
    .refine((v) => ['deny', 'sameorigin'].includes(v.toLowerCase()), 'expected deny or sameorigin')
    .optional(),
  'X-Content-Type-Options': z
    .string()
    .refine((v) => v.toLowerCase() === 'nosniff', 'expected nosniff')
    .optional(),
  'X-XSS-Protection': z.string().optional(),
  'Strict-Transport-Security': z.string().optional(),
});

const webConfigSchema = z.strictObject({
  tls_server_config: z
    .strictObject({
      // Each PEM from a file or inline (exporter-toolkit's cert/key/client_ca), not both.
      cert_file: z.string().min(1).optional(),
      key_file: z.string().min(1).optional(),
      cert: z.string().min(1).optional(),
      key: z.string().min(1).optional(),
      client_ca: z.string().min(1).optional(),
      client_auth_type: z.enum(CLIENT_AUTH_TYPES).default('NoClientCert'),
      client_ca_file: z.string().min(1).optional(),
      client_allowed_sans: z.array(z.string().min(1)).min(1).optional(),
      min_version: z.enum(Object.keys(TLS_VERSIONS) as [GoTlsVersion]).default('TLS12'),
      max_version: z.enum(Object.keys(TLS_VERSIONS) as [GoTlsVersion]).default('TLS13'),
      cipher_suites: z
        .array(
          z.string().refine((c) => c in CIPHER_SUITES, {
            error: (iss) =>
              `unknown cipher suite ${JSON.stringify(iss.input)} (Go names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)`,
          }),
        )
        .min(1)
        .optional(),
      prefer_server_cipher_suites: z.boolean().default(true),
      curve_preferences: z
        .array(z.enum(Object.keys(CURVES) as [keyof typeof CURVES]))
        .min(1)
        .optional(),
    })
    .optional(),
  http_server_config: z
    .strictObject({
      /** Accepted for compatibility; the server speaks HTTP/1.1 either way (docs/decisions.md). */
      http2: z.boolean().optional(),
      headers: headersSchema.optional(),
    })
    .optional(),
  /** One token bucket for all requests; interval 0 turns it off (exporter-toolkit). */
  rate_limit: z
    .strictObject({
      interval: duration(),
      burst: z.number().int().min(0),
    })
    .optional(),
  basic_auth_users: z
    .record(
      z
        .string()
        .min(1, 'a user name may not be empty')
        .refine((u) => !u.includes(':'), 'a user name may not contain ":"'),
      z
        .string({ error: 'expected a bcrypt hash (a string)' })
        .regex(BCRYPT_HASH, 'expected a bcrypt hash like "$2y$10$…" (htpasswd -nBC 10 "" | tr -d \':\\n\')'),
    )
    .optional(),
});

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  /** CA certificates client certificates are verified against (client_ca_file). */
  ca?: Buffer;
  minVersion: SecureVersion;
  maxVersion: SecureVersion;
  ciphers?: string;
  honorCipherOrder: boolean;
  ecdhCurve?: string;
}

export interface TlsConfig extends TlsMaterial {
  /** The files behind cert, key and CA (absent when given inline): watched for changes. */
  certFile?: string;
  keyFile?: string;
  caFile?: string;
  clientAuth: ClientAuthType;
  /** A client certificate must carry one of these SANs (DNS, IP, e-mail or URI), exactly. */
  allowedSans?: string[];
}

export interface WebConfig {
  path: string;
  tls?: TlsConfig;
  /** user → bcrypt hash; empty when no users are configured (no auth). */
  users: Map<string, string>;
  /** http_server_config.headers: added to every response. */
  headers: Record<string, string>;
  http2?: boolean;
  rateLimit?: { intervalMs: number; burst: number };
}

/**
 * Reads and validates a web config file; throws ConfigError listing every problem with its field path.
 * `reload`: an empty (or whitespace-only) file is an error, because a file caught between truncate and write
 * reads as empty and would otherwise parse as "no users" — auth off for every endpoint.
 */
export function loadWebConfig(file: string, opts: { reload?: boolean } = {}): WebConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [
      `cannot read web config file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    ]);
  }
  if (opts.reload === true && text.trim() === '') {
    throw new ConfigError(file, [
      'the file is empty (caught mid-write?); an empty web config is refused on reload',
    ]);
  }
  const doc = YAML.parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0)
    throw new ConfigError(
      file,
      doc.errors.map((e) => `YAML: ${e.message.split('\n')[0]}`),
    );
  const raw: unknown = doc.toJS() ?? {};
  const parsed = webConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      file,
      parsed.error.issues.map((i) =>
        i.code === 'unrecognized_keys'
          ? i.keys
              .map(
                (k) =>
                  `${formatPath([...i.path, k])}: unknown key (the exporter-toolkit web config: tls_server_config, http_server_config, basic_auth_users)`,
              )
              .join('\n')
          : `${formatPath(i.path)}: ${i.message}`,
      ),
    );
  }
  const base = dirname(resolve(file));
  const headers = Object.fromEntries(
    Object.entries(parsed.data.http_server_config?.headers ?? {}).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '',
    ),
  );
  const out: WebConfig = {
    path: file,
    users: new Map(Object.entries(parsed.data.basic_auth_users ?? {})),
    headers,
    ...(parsed.data.http_server_config?.http2 !== undefined
      ? { http2: parsed.data.http_server_config.http2 }
      : {}),
    ...(parsed.data.rate_limit !== undefined && parsed.data.rate_limit.interval > 0
      ? { rateLimit: { intervalMs: parsed.data.rate_limit.interval, burst: parsed.data.rate_limit.burst } }
      : {}),
  };
  const tlsCfg = parsed.data.tls_server_config;
  if (tlsCfg !== undefined) {
    const problems: string[] = [];
    /** A PEM from its file or inline; exactly one of the two (exporter-toolkit web/tls_config.go). */
    const pem = (
      fileKey: 'cert_file' | 'key_file' | 'client_ca_file',
      inlineKey: 'cert' | 'key' | 'client_ca',
      required: boolean,
    ): Buffer | undefined => {
      const f = tlsCfg[fileKey];
      const inline = tlsCfg[inlineKey];
      if (f !== undefined && inline !== undefined) {
        problems.push(`tls_server_config: cannot specify both ${fileKey} and ${inlineKey}`);
        return undefined;
      }
      if (inline !== undefined) return Buffer.from(inline);
      if (f === undefined) {
        if (required) problems.push(`tls_server_config: missing ${fileKey} or ${inlineKey}`);
        return undefined;
      }
      try {
        return readFileSync(resolve(base, f));
      } catch (err) {
        problems.push(
          `tls_server_config.${fileKey}: cannot read ${f}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        );
        return undefined;
      }
    };
    const cert = pem('cert_file', 'cert', true);
    const key = pem('key_file', 'key', true);
    const ca = pem('client_ca_file', 'client_ca', false);
    const caGiven = tlsCfg.client_ca_file !== undefined || tlsCfg.client_ca !== undefined;
    const auth = tlsCfg.client_auth_type;
    // exporter-toolkit's own checks (web/tls_config.go), plus one: verifying against the system's public roots
    // (Go's behaviour without client_ca_file) would let any publicly issued certificate in.
    if (caGiven && auth === 'NoClientCert')
      problems.push(
        'tls_server_config.client_ca_file or client_ca: set without a client_auth_type that checks certificates (e.g. RequireAndVerifyClientCert)',
      );
    if (!caGiven && (auth === 'RequireAndVerifyClientCert' || auth === 'VerifyClientCertIfGiven'))
      problems.push(`tls_server_config.client_ca_file or client_ca: required with client_auth_type ${auth}`);
    if (
      tlsCfg.client_allowed_sans !== undefined &&
      !['RequireAnyClientCert', 'RequireClientCert', 'RequireAndVerifyClientCert'].includes(auth)
    )
      problems.push(
        'tls_server_config.client_allowed_sans: needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert (other types let a client in without a certificate)',
      );
    const versions = Object.keys(TLS_VERSIONS);
    if (versions.indexOf(tlsCfg.min_version) > versions.indexOf(tlsCfg.max_version))
      problems.push(
        `tls_server_config.min_version: ${tlsCfg.min_version} is above max_version ${tlsCfg.max_version}`,
      );
    const material: TlsMaterial | undefined =
      cert !== undefined && key !== undefined
        ? {
            cert,
            key,
            ...(ca !== undefined ? { ca } : {}),
            minVersion: TLS_VERSIONS[tlsCfg.min_version],
            maxVersion: TLS_VERSIONS[tlsCfg.max_version],
            ...(tlsCfg.cipher_suites
              ? { ciphers: [...tlsCfg.cipher_suites.map((c) => CIPHER_SUITES[c]!), TLS13_SUITES].join(':') }
              : {}),
            honorCipherOrder: tlsCfg.prefer_server_cipher_suites,
            ...(tlsCfg.curve_preferences
              ? { ecdhCurve: tlsCfg.curve_preferences.map((c) => CURVES[c]).join(':') }
              : {}),
          }
        : undefined;
    if (material !== undefined && (!caGiven || ca !== undefined)) {
      try {
        createSecureContext(secureContextOptions(material));
      } catch (err) {
        // The message names the mismatch or the PEM problem, never the key material itself.
        problems.push(
          `tls_server_config: the certificate, key and TLS settings do not form a usable context: ${(err as Error).message}`,
        );
      }
    }
    if (problems.length > 0) throw new ConfigError(file, problems);
    out.tls = {
      ...material!,
      ...(tlsCfg.cert_file !== undefined ? { certFile: resolve(base, tlsCfg.cert_file) } : {}),
      ...(tlsCfg.key_file !== undefined ? { keyFile: resolve(base, tlsCfg.key_file) } : {}),
      ...(tlsCfg.client_ca_file !== undefined ? { caFile: resolve(base, tlsCfg.client_ca_file) } : {}),
      clientAuth: auth,
      ...(tlsCfg.client_allowed_sans ? { allowedSans: tlsCfg.client_allowed_sans } : {}),
    };
  }
  return out;
}

/** The options of a secure context (certificate, key, CA, versions, ciphers, curves): for start and rotation. */
export function secureContextOptions(t: TlsMaterial) {
  return {
    cert: t.cert,
    key: t.key,
    ...(t.ca !== undefined ? { ca: t.ca } : {}),
    minVersion: t.minVersion,
    maxVersion: t.maxVersion,
    ...(t.ciphers !== undefined ? { ciphers: t.ciphers } : {}),
    honorCipherOrder: t.honorCipherOrder,
    ...(t.ecdhCurve !== undefined ? { ecdhCurve: t.ecdhCurve } : {}),
  };
}

/** The https server options: the secure context plus who must show a client certificate. */
export function httpsOptions(t: TlsConfig) {
  return {
    ...secureContextOptions(t),
    requestCert: t.clientAuth !== 'NoClientCert',
    // Node verifies (and refuses the handshake) only for this type; the softer ones are checked per connection.
    rejectUnauthorized: t.clientAuth === 'RequireAndVerifyClientCert',
  };
}

/**
 * Why a TLS connection must be closed under the client-certificate policy, or undefined to keep it. Node enforces
 * RequireAndVerifyClientCert in the handshake; the others, and the allowed SANs, are checked here.
 */
export function clientCertProblem(t: TlsConfig, sock: TLSSocket): string | undefined {
  if (t.clientAuth === 'NoClientCert' || t.clientAuth === 'RequestClientCert') return undefined;
  const peer = sock.getPeerCertificate();
  const present = peer !== null && Object.keys(peer).length > 0;
  if (!present) {
    return t.clientAuth === 'VerifyClientCertIfGiven' ? undefined : 'no client certificate';
  }
  if (
    (t.clientAuth === 'VerifyClientCertIfGiven' || t.clientAuth === 'RequireAndVerifyClientCert') &&
    !sock.authorized
  )
    return `client certificate not verified: ${String(sock.authorizationError)}`;
  if (t.allowedSans !== undefined) {
    // "DNS:a, IP Address:1.2.3.4, email:x@y, URI:spiffe://…" → the values.
    const sans = (peer.subjectaltname ?? '')
      .split(/,\s*/)
      .map((e) => e.slice(e.indexOf(':') + 1))
      .filter((v) => v !== '');
    if (!sans.some((v) => t.allowedSans!.includes(v))) return 'client certificate SAN not allowed';
  }
  return undefined;
}

export interface WebConfigWatcherOptions {
  logger: Logger;
  /** Called with each new valid config (users and TLS already validated). */
  onChange: (next: WebConfig) => void | Promise<void>;
  pollMs?: number;
}

/**
 * Polls the web config file and the certificate and key it names (mtime, size, inode); on a change re-reads
 * all of it and hands the new config on. Polling rather than fs.watch: certificates are often replaced by
 * renaming a new file over the old one, which inotify watches on the old inode miss.
 */
export class WebConfigWatcher {
  private timer: NodeJS.Timeout | undefined;
  private stamps = '';
  private checking = false;

  constructor(
    private current: WebConfig,
    private readonly opts: WebConfigWatcherOptions,
  ) {}

  async start(): Promise<void> {
    this.stamps = await this.fingerprint();
    this.timer = setInterval(() => {
      this.check().catch((err: unknown) =>
        this.opts.logger.error({ file: this.current.path, err: String(err) }, 'web config reload failed'),
      );
    }, this.opts.pollMs ?? 2000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  config(): WebConfig {
    return this.current;
  }

  /** One poll: re-reads everything if any watched file changed. Exposed for tests. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const stamps = await this.fingerprint();
      if (stamps === this.stamps) return;
      this.stamps = stamps;
      let next: WebConfig;
      try {
        next = loadWebConfig(this.current.path, { reload: true });
        if (this.current.users.size > 0 && next.users.size === 0) {
          // Dropping every user turns auth off everywhere; a half-written file looks exactly like that.
          throw new ConfigError(this.current.path, [
            'basic_auth_users: the new file has no users while users are configured; turning auth off needs a restart',
          ]);
        }
      } catch (err) {
        const problems = err instanceof ConfigError ? err.problems : [String(err)];
        this.opts.logger.error(
          { file: this.current.path, problems },
          'web config changed but is invalid; keeping the running one',
        );
        return;
      }
      this.current = next;
      // The new config may name other files: watch those from now on.
      this.stamps = await this.fingerprint();
      await this.opts.onChange(next);
      this.opts.logger.info(
        { file: next.path, tls: next.tls !== undefined, users: next.users.size },
        'web config reloaded',
      );
    } finally {
      this.checking = false;
    }
  }

  private async fingerprint(): Promise<string> {
    const files = [this.current.path];
    const t = this.current.tls;
    for (const f of [t?.certFile, t?.keyFile, t?.caFile]) if (f !== undefined) files.push(f);
    const parts = await Promise.all(
      files.map(async (f) => {
        try {
          const s = await stat(f);
          return `${f}:${s.ino}:${s.size}:${s.mtimeMs}`;
        } catch {
          return `${f}:missing`;
        }
      }),
    );
    return parts.join('|');
  }
}

/**
 * Swaps the TLS settings of a running https server; new handshakes use them, open connections keep theirs. The
 * client-certificate request is a server property read per connection (Node's tls Server), so it changes too.
 */
export function applyTls(server: HttpsServer, tls: TlsConfig): void {
  server.setSecureContext(secureContextOptions(tls));
  const opts = httpsOptions(tls);
  const s = server as HttpsServer & { requestCert: boolean; rejectUnauthorized: boolean };
  s.requestCert = opts.requestCert;
  s.rejectUnauthorized = opts.rejectUnauthorized;
}
