// The web config file (`--web.config.file`), in the manner of the Prometheus exporter-toolkit: TLS certificate
// and key, and basic-auth users with bcrypt hashes. It is re-read when it (or the certificate or key) changes,
// so certificates rotate without a restart; a bad new version is logged and the running one kept.
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Server as HttpsServer } from 'node:https';
import { dirname, resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import YAML from 'yaml';
import { z } from 'zod';
import { ConfigError, formatPath } from '../config/load.js';
import type { Logger } from '../logger.js';

/** $2a$/$2b$/$2y$ (htpasswd -B writes $2y$), two-digit cost, 53 characters of salt and hash. */
const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

const webConfigSchema = z.strictObject({
  tls_server_config: z
    .strictObject({
      cert_file: z.string().min(1),
      key_file: z.string().min(1),
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
}

export interface WebConfig {
  path: string;
  tls?: TlsMaterial & { certFile: string; keyFile: string };
  /** user → bcrypt hash; empty when no users are configured (no auth). */
  users: Map<string, string>;
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
                  `${formatPath([...i.path, k])}: unknown key (supported: tls_server_config.cert_file/key_file, basic_auth_users)`,
              )
              .join('\n')
          : `${formatPath(i.path)}: ${i.message}`,
      ),
    );
  }
  const base = dirname(resolve(file));
  const out: WebConfig = { path: file, users: new Map(Object.entries(parsed.data.basic_auth_users ?? {})) };
  const tlsCfg = parsed.data.tls_server_config;
  if (tlsCfg !== undefined) {
    const problems: string[] = [];
    const read = (key: 'cert_file' | 'key_file'): Buffer | undefined => {
      try {
        return readFileSync(resolve(base, tlsCfg[key]));
      } catch (err) {
        problems.push(
          `tls_server_config.${key}: cannot read ${tlsCfg[key]}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        );
        return undefined;
      }
    };
    const cert = read('cert_file');
    const key = read('key_file');
    if (cert !== undefined && key !== undefined) {
      try {
        createSecureContext({ cert, key });
      } catch (err) {
        // The message names the mismatch or the PEM problem, never the key material itself.
        problems.push(
          `tls_server_config: the certificate and key do not form a usable pair: ${(err as Error).message}`,
        );
      }
    }
    if (problems.length > 0) throw new ConfigError(file, problems);
    out.tls = {
      cert: cert!,
      key: key!,
      certFile: resolve(base, tlsCfg.cert_file),
      keyFile: resolve(base, tlsCfg.key_file),
    };
  }
  return out;
}

/** The bcrypt cost most users' hashes use: the dummy hash for unknown users must cost the same. */
export function commonCost(users: Map<string, string>): number {
  const counts = new Map<number, number>();
  for (const h of users.values()) {
    const cost = Number(BCRYPT_HASH.exec(h)?.[1] ?? 10);
    counts.set(cost, (counts.get(cost) ?? 0) + 1);
  }
  let best = 10;
  let bestCount = 0;
  for (const [cost, n] of counts) {
    if (n > bestCount) [best, bestCount] = [cost, n];
  }
  return best;
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
    if (this.current.tls) files.push(this.current.tls.certFile, this.current.tls.keyFile);
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

/** Swaps the certificate of a running https server; new handshakes use it, open connections keep theirs. */
export function applyTls(server: HttpsServer, tls: TlsMaterial): void {
  server.setSecureContext({ cert: tls.cert, key: tls.key });
}
