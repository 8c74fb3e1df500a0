// lane: fast — openssl makes a certificate in milliseconds; importing this does not make a test end to end.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A self-signed certificate for localhost and 127.0.0.1, made by the real openssl binary (a missing openssl fails
 * the test loudly). Files `<name>.crt` and `<name>.key` in `dir`.
 */
export function makeSelfSignedCert(
  dir: string,
  name: string,
): { certFile: string; keyFile: string; cert: string; key: string } {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}
