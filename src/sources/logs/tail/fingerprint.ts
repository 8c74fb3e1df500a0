// A log file's content identity: a hash of its first bytes. An inode says which file; the fingerprint says
// whether it still holds what we read (a truncate and regrow between two polls keeps the inode and changes the
// head) and recognises a copy of it under another inode (copytruncate's rotated copy).
import { createHash } from 'node:crypto';

/** Bytes hashed once a file has that many; a shorter file is hashed whole and rehashed as it grows. */
export const FP_BYTES = 1024;
/**
 * A fingerprint alone (another inode) is trusted only over this many bytes: two files starting with the same
 * short banner are not the same file. Engine logs start with timestamped lines, which makes 64 bytes unique.
 */
export const FP_MIN_CROSS = 64;

export function fingerprint(head: Buffer, len: number): string {
  return createHash('sha1').update(head.subarray(0, len)).digest('hex').slice(0, 20);
}

/** Whether `head` (a file's first bytes) holds the content a saved fingerprint was taken of. */
export function headMatches(saved: { fp?: string; fpLen?: number }, head: Buffer): boolean {
  if (saved.fp === undefined || saved.fpLen === undefined) return true;
  return head.length >= saved.fpLen && fingerprint(head, saved.fpLen) === saved.fp;
}
