// The README's "Configuration essentials" snippet is a config the daemon loads as written (a newcomer copies it),
// and every example it sends readers to passes `check`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfigText } from '../../src/config/load.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('README: configuration essentials', () => {
  it('the YAML snippet loads with no problem and watches one vLLM target', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.split('## Configuration essentials')[1]!.split('\n## ')[0]!;
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const loaded = parseConfigText(yaml, join(ROOT, 'README.md'), {});
    expect(loaded.config.targets.map((t) => t.name)).toEqual(['llama-8b']);
    expect(loaded.config.targets[0]!.probes.map((p) => p.kind)).toEqual(['chat', 'health']);
    expect(loaded.config.targets[0]!.logs[0]!.format).toBe('cri');
  });

  it('every example the quick start names loads', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const named = [...readme.matchAll(/\(examples\/([a-z]+\.yaml)\)/g)].map((m) => m[1]!);
    expect(new Set(named)).toEqual(new Set(readdirSync(join(ROOT, 'examples'))));
    for (const f of named) expect(() => loadConfigFile(join(ROOT, 'examples', f), {}), f).not.toThrow();
  });
});
