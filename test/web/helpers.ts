import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { makeSelfSignedCert } from '../helpers/tls.js';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A self-signed certificate for 127.0.0.1 made by the real openssl (fails loudly if it is missing). */
export function selfSignedCert(
  dir: string,
  name: string,
): { certFile: string; keyFile: string; cert: string } {
  const { certFile, keyFile, cert } = makeSelfSignedCert(dir, name);
  return { certFile, keyFile, cert };
}

/** Replaces a file by renaming a new one over it, as certificate tooling does. */
export function replaceFile(path: string, content: string | Buffer): void {
  writeFileSync(`${path}.new`, content);
  renameSync(`${path}.new`, path);
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The SHA-256 fingerprint of the certificate a TLS server presents on a new connection. */
export function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ca, timeout: 10_000 }, () => {
      const fp = s.getPeerX509Certificate()?.fingerprint256 ?? '';
      s.end();
      resolve(fp);
    });
    s.on('error', reject);
    s.on('timeout', () => s.destroy(new Error('TLS connect timed out')));
  });
}
