// The CRI log format the kubelet's container runtime writes under /var/log/pods:
//   <RFC3339Nano time> <stdout|stderr> <P|F>[:more tags] <text>
// Upstream: kubernetes pkg/kubelet/kuberuntime/logs/logs.go, parseCRILog ("2016-10-06T00:17:09.669794202Z
// stdout P log content 1"); the tag field is split on ':' and only the first tag is read ("Keep this forward
// compatible"); P marks a partial line (containerd splits lines over 16 KiB, cri/pkg/io/logger.go
// maxLogLineSize / --max-container-log-line-size), F the last part.
import type { LineFormat, WrappedEntry } from './types.js';

const SP = 0x20;

function stream(raw: Buffer, from: number, to: number): string | null {
  const len = to - from;
  if (len === 6 && raw.toString('latin1', from, to) === 'stdout') return 'stdout';
  if (len === 6 && raw.toString('latin1', from, to) === 'stderr') return 'stderr';
  return null;
}

export const cri: LineFormat = {
  name: 'cri',
  parse(raw: Buffer): WrappedEntry | null {
    const a = raw.indexOf(SP);
    // An RFC 3339 time is at least 20 characters ("2016-10-06T00:17:09Z") and starts with a digit.
    if (a < 20 || a > 40 || raw[0]! < 0x30 || raw[0]! > 0x39) return null;
    const b = raw.indexOf(SP, a + 1);
    if (b < 0) return null;
    const s = stream(raw, a + 1, b);
    if (s === null) return null;
    // The tag runs to the next space; a line with an empty text may end right after the tag.
    let c = raw.indexOf(SP, b + 1);
    if (c < 0) c = raw.length;
    const tag = raw[b + 1];
    if (c === b + 1 || (tag !== 0x50 /* P */ && tag !== 0x46) /* F */) return null;
    if (c - b - 1 > 1 && raw[b + 2] !== 0x3a /* ':' */) return null;
    return {
      time: raw.toString('latin1', 0, a),
      stream: s,
      partial: tag === 0x50,
      text: raw.subarray(Math.min(c + 1, raw.length)),
    };
  },
};
