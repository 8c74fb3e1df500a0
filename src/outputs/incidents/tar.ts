// A bundle as .tar.gz, written here (ustar headers + node:zlib) rather than with a dependency: bundles hold a
// handful of regular files, so the format's subset needed is small. Streamed file by file; names longer than
// ustar's 100 bytes use its 155-byte prefix field.
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { bundleFiles } from './store.js';

const BLOCK = 512;

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/** One ustar header block for a regular file (or a directory when `dir`). */
export function tarHeader(name: string, size: number, mtime: number, dir = false): Buffer {
  const h = Buffer.alloc(BLOCK);
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100)
      throw new Error(`name too long for tar: ${name}`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  h.write(base, 0, 100, 'utf8');
  h.write(octal(dir ? 0o755 : 0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.floor(mtime / 1000), 12), 136, 'ascii');
  h.fill(' ', 148, 156); // checksum is computed with its own field as spaces
  h.write(dir ? '5' : '0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/** Streams `root/id` as a gzipped tar whose entries sit under `id/`. */
export function tarGzBundle(root: string, id: string, mtime = Date.now()): Readable {
  const tar = new PassThrough();
  const out = tar.pipe(createGzip());
  void (async () => {
    try {
      const files = await bundleFiles(root, id);
      tar.write(tarHeader(`${id}/`, 0, mtime, true));
      for (const f of files) {
        // The size is the one just listed; a file that changed since is cut or padded to it.
        tar.write(tarHeader(`${id}/${f.path}`, f.bytes, mtime));
        let n = 0;
        if (f.bytes > 0) {
          for await (const chunk of createReadStream(join(root, id, f.path), { end: f.bytes - 1 })) {
            const c = chunk as Buffer;
            n += c.length;
            if (!tar.write(c)) await new Promise((r) => tar.once('drain', r));
          }
        }
        if (n < f.bytes) tar.write(Buffer.alloc(f.bytes - n));
        const pad = (BLOCK - (f.bytes % BLOCK)) % BLOCK;
        if (pad > 0) tar.write(Buffer.alloc(pad));
      }
      tar.end(Buffer.alloc(BLOCK * 2));
    } catch (err) {
      out.destroy(err as Error);
    }
  })();
  return out;
}
