// The stacks piece of an incident bundle (issue 42): the node source dumps every engine Python process (py-spy, see
// src/sources/node/stacks.ts); this writes each dump under stacks/ with the command that made it, or why it was
// skipped, and stacks/summary.txt with the line per process that the cause then carries. Nothing is decided here.

/** One dump as the node source hands it over (its shape, so outputs need not import sources). */
export interface StackDumpRecord {
  service: string;
  pid: number;
  ok: boolean;
  text: string;
  argv: string[];
  problem?: string;
  cut: boolean;
  summary?: string;
}

export interface StackDumper {
  /** Dumps every engine Python process within `withinMs`. */
  dump(withinMs: number): Promise<StackDumpRecord[]>;
  /** Hands the summaries back to the watchdog, which puts them in the cause. */
  report(service: string, summaries: Array<{ pid: number; text: string }>): void;
}

export async function writeStacks(
  dumper: StackDumper,
  withinMs: number,
  write: (rel: string, content: string) => Promise<string>,
): Promise<{ files: string[]; status?: 'skipped'; detail?: string }> {
  const dumps = await dumper.dump(withinMs);
  if (dumps.length === 0)
    return { files: [], status: 'skipped', detail: 'no engine Python process found to dump' };
  const files: string[] = [];
  const lines: string[] = [];
  for (const d of dumps) {
    const header = [
      `$ ${d.argv.join(' ')}`,
      ...(d.problem !== undefined ? [`# skipped: ${d.problem}`] : []),
      ...(d.cut ? ['# output cut at stacks.maxBytes'] : []),
      '',
    ].join('\n');
    files.push(await write(`stacks/${d.service}-${d.pid}.txt`, header + d.text));
    lines.push(`${d.service} pid ${d.pid}: ${d.summary ?? `no stacks (${d.problem ?? 'py-spy failed'})`}`);
  }
  files.push(await write('stacks/summary.txt', lines.join('\n') + '\n'));
  const services = new Set(dumps.map((d) => d.service));
  for (const s of services) {
    const summaries = dumps
      .filter((d) => d.service === s && d.summary !== undefined)
      .map((d) => ({ pid: d.pid, text: d.summary! }));
    if (summaries.length > 0) dumper.report(s, summaries);
  }
  const skipped = dumps.filter((d) => !d.ok);
  return skipped.length === dumps.length
    ? { files, status: 'skipped', detail: skipped[0]!.problem ?? 'py-spy failed' }
    : { files };
}
