// Reads a small credential file (a bearer token, a CA bundle) without trusting what the path is. readFileSync
// hung `check` for good on a FIFO (open() waits for a writer) and read /dev/zero until 8.8 GB of memory: the
// file is opened with O_NONBLOCK, must be a regular file by fstat of that same descriptor (no swap between a
// stat and the open), and is read up to a cap, past which it is refused, not truncated.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** A bearer token is a line; 64 KiB leaves room for a JWT with many claims. */
export const MAX_TOKEN_FILE_BYTES = 64 * 1024;
/** A CA bundle: Debian's whole ca-certificates.crt is about 220 KB. */
export const MAX_CA_FILE_BYTES = 4 * 1024 * 1024;

/** A config file: the largest example is a few KB. */
export const MAX_CONFIG_FILE_BYTES = 16 * 1024 * 1024;
/** Larger watched files are not read (a serve script or unit file is a few KB); `check` refuses such paths. */
export const MAX_WATCHED_BYTES = 16 * 1024 * 1024;

/** Why a file was refused, said in words the config error can quote after the path. */
export class SmallFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'not_regular' | 'too_large',
    message: string,
  ) {
    super(message);
    this.name = 'SmallFileError';
  }
}

export function readSmallFile(path: string, maxBytes: number): Buffer {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting forever.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw new SmallFileError(path, 'not_regular', `is not a regular file (${kindOf(st)})`);
    }
    if (st.size > maxBytes) {
      throw new SmallFileError(path, 'too_large', `is ${st.size} bytes; at most ${maxBytes} are read`);
    }
    // Read to one byte past the cap: a file that grew since fstat is refused too.
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > maxBytes) throw new SmallFileError(path, 'too_large', `is over ${maxBytes} bytes`);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean }): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isDirectory()) return 'a directory';
  return 'not a file';
}

/** How a read failure reads after the field's path: the refusal's reason, or the errno code. */
export function describeReadError(err: unknown): string {
  if (err instanceof SmallFileError) return err.message;
  return (err as NodeJS.ErrnoException).code ?? String(err);
}
