// Writes one incident bundle's files. Every byte goes through the redactor first; a full disk (ENOSPC, EDQUOT)
// surfaces as NoSpaceError so the capture can stop, remove what it wrote and say so. The file system calls are
// injectable so a full disk can be tested without filling one.
import * as fsp from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { redactInChunks } from '../../lib/redact.js';

export interface BundleFs {
  mkdir(path: string): Promise<unknown>;
  writeFile(path: string, data: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  rm(path: string): Promise<void>;
  /** Free bytes for an unprivileged writer on the file system holding `path`. */
  freeBytes(path: string): Promise<number>;
}

export const nodeBundleFs: BundleFs = {
  mkdir: (p) => fsp.mkdir(p, { recursive: true }),
  writeFile: (p, d) => fsp.writeFile(p, d),
  rename: (a, b) => fsp.rename(a, b),
  rm: (p) => fsp.rm(p, { recursive: true, force: true }),
  freeBytes: async (p) => {
    const s = await fsp.statfs(p);
    return s.bavail * s.bsize;
  },
};

export class NoSpaceError extends Error {
  constructor(readonly code: string) {
    super(`no space left for the incident bundle (${code})`);
    this.name = 'NoSpaceError';
  }
}

const FULL = new Set(['ENOSPC', 'EDQUOT']);

export function isNoSpace(err: unknown): boolean {
  return err instanceof NoSpaceError || FULL.has((err as NodeJS.ErrnoException)?.code ?? '');
}

/** `20261201T052512.345Z-sim-pd`: sorts by time, safe as a file and a URL path segment. */
export function incidentId(time: number, target: string): string {
  return `${new Date(time).toISOString().replace(/[-:]/g, '')}-${target}`;
}

export const INCIDENT_ID = /^\d{8}T\d{6}\.\d{3}Z-[A-Za-z0-9_.:-]{1,70}$/;

export class BundleWriter {
  readonly files: Array<{ path: string; bytes: number }> = [];
  bytes = 0;

  constructor(
    readonly dir: string,
    private readonly redact: (text: string) => string,
    private readonly fs: BundleFs = nodeBundleFs,
  ) {}

  async init(): Promise<void> {
    await this.guard(() => this.fs.mkdir(this.dir));
  }

  /** Writes `rel` (a path inside the bundle) with the redacted text; returns the bytes written. */
  async write(rel: string, content: string | Buffer): Promise<number> {
    const path = join(this.dir, rel);
    const inside = relative(this.dir, path);
    if (inside.startsWith('..') || inside === '' || inside.startsWith(sep)) {
      throw new Error(`bundle path outside the bundle: ${rel}`);
    }
    // In chunks with the event loop let through: a log window can be megabytes of hostile text.
    const text = await redactInChunks(
      typeof content === 'string' ? content : content.toString('utf8'),
      this.redact,
    );
    await this.guard(async () => {
      await this.fs.mkdir(dirname(path));
      await this.fs.writeFile(path, text);
    });
    const bytes = Buffer.byteLength(text);
    this.files.push({ path: inside.split(sep).join('/'), bytes });
    this.bytes += bytes;
    return bytes;
  }

  /** Written last and atomically: a bundle directory with a manifest is a finished bundle. */
  async writeManifest(manifest: unknown): Promise<void> {
    const text = this.redact(JSON.stringify(manifest, null, 2) + '\n');
    const tmp = join(this.dir, '.manifest.json.tmp');
    await this.guard(async () => {
      await this.fs.writeFile(tmp, text);
      await this.fs.rename(tmp, join(this.dir, 'manifest.json'));
    });
    this.bytes += Buffer.byteLength(text);
  }

  async remove(): Promise<void> {
    await this.fs.rm(this.dir).catch(() => undefined);
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== undefined && FULL.has(code)) throw new NoSpaceError(code);
      throw err;
    }
  }
}
