// A small parser for the Prometheus text exposition format (0.0.4), enough to read engine /metrics:
// samples with labels (escaped values), comments skipped, NaN/±Inf, optional timestamps. Malformed lines
// are counted and skipped rather than failing the whole scrape.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  samples: Sample[];
  /** Lines that could not be parsed (skipped). */
  bad: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

export function parsePrometheusText(text: string, maxSamples = 100_000): ParsedMetrics {
  const samples: Sample[] = [];
  let bad = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (samples.length >= maxSamples) break;
    const s = parseSample(line);
    if (s) samples.push(s);
    else bad++;
  }
  return { samples, bad };
}

function parseSample(line: string): Sample | undefined {
  const m = NAME.exec(line);
  if (!m) return undefined;
  const name = m[0];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      while (line[i] === ' ' || line[i] === ',') i++;
      if (line[i] === '}') {
        i++;
        break;
      }
      const ln = LABEL_NAME.exec(line.slice(i));
      if (!ln) return undefined;
      i += ln[0].length;
      while (line[i] === ' ') i++;
      if (line[i] !== '=') return undefined;
      i++;
      while (line[i] === ' ') i++;
      if (line[i] !== '"') return undefined;
      i++;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) return undefined;
        if (c === '"') {
          i++;
          break;
        }
        if (c === '\\') {
          const n = line[i + 1];
          value += n === 'n' ? '\n' : n === undefined ? '' : n;
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      labels[ln[0]] = value;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === '') return undefined;
  const value = parseValue(rest[0]!);
  if (value === undefined) return undefined;
  return { name, labels, value };
}

function parseValue(v: string): number | undefined {
  if (v === 'NaN') return NaN;
  if (v === '+Inf' || v === 'Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  const n = Number(v);
  return Number.isNaN(n) ? undefined : n;
}
