// What an XID means, for the cause of a `gpu_fault`: the common ones, as NVIDIA's Xid catalog names them
// (docs.nvidia.com/deploy/xid-errors, "Analyzing Xid Errors with the Xid Catalog", Ampere and newer). An XID not
// listed here is still a fault, named by its number. Pure data.

export const XID_MEANINGS: Readonly<Record<number, string>> = {
  8: 'GPU stopped processing (channel idle timeout)',
  13: 'graphics engine exception',
  31: 'GPU memory page fault',
  43: 'GPU stopped processing (a channel was reset)',
  45: 'preemptive cleanup after previous errors',
  48: 'double-bit ECC error',
  61: 'internal micro-controller breakpoint or warning',
  62: 'internal micro-controller halt',
  63: 'ECC page retirement or row remapping recorded',
  64: 'ECC page retirement or row remapping failed',
  74: 'NVLink error',
  79: 'GPU has fallen off the bus',
  92: 'high single-bit ECC error rate',
  94: 'contained ECC error',
  95: 'uncontained ECC error',
  109: 'context switch timeout',
  119: 'GSP RPC timeout',
  120: 'GSP error',
  154: 'GPU recovery action changed (reset or reboot required)',
};

/** `XID 79 (GPU has fallen off the bus)`, or `XID 200` for one the table does not know. */
export function xidText(xid: number): string {
  const m = Object.hasOwn(XID_MEANINGS, xid) ? XID_MEANINGS[xid] : undefined;
  return m === undefined ? `XID ${xid}` : `XID ${xid} (${m})`;
}
