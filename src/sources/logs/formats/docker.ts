// Docker's json-file logging driver (the default): one JSON object per line,
//   {"log":"text\n","stream":"stderr","time":"2016-10-20T18:39:20.57606443Z"}
// Upstream: moby daemon/logger/jsonfilelog/jsonfilelog.go (marshalMessage: a complete message gets its "\n"
// appended, a partial one — a line over 16 KiB split by daemon/logger/copier.go bufSize — does not) and
// daemon/logger/jsonfilelog/jsonlog/jsonlogbytes.go (the `log`, `stream`, `time` keys; `attrs` optional).
// The kubelet reads the same shape (kubernetes pkg/kubelet/kuberuntime/logs/logs.go parseDockerJSONLog).
import type { LineFormat, WrappedEntry } from './types.js';

interface DockerLine {
  log?: unknown;
  stream?: unknown;
  time?: unknown;
}

export const docker: LineFormat = {
  name: 'docker',
  parse(raw: Buffer): WrappedEntry | null {
    if (raw[0] !== 0x7b /* { */) return null;
    let j: DockerLine;
    try {
      j = JSON.parse(raw.toString('utf8')) as DockerLine;
    } catch {
      return null;
    }
    if (j === null || typeof j !== 'object' || typeof j.log !== 'string') return null;
    const partial = !j.log.endsWith('\n');
    const text = Buffer.from(partial ? j.log : j.log.slice(0, -1), 'utf8');
    return {
      text,
      time: typeof j.time === 'string' ? j.time : '',
      stream: typeof j.stream === 'string' ? j.stream : '',
      partial,
    };
  },
};
