// The configuration reference's "Where logs come from" snippets are configs the daemon accepts, one per source kind.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { logSourceSchema } from '../../src/config/schema.js';

describe('docs/configuration.md: where logs come from', () => {
  it('has a valid config snippet for a plain file, the journal, Kubernetes and Docker', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
    const section = readme.split('## Where logs come from')[1]!.split('\n## ')[0]!;
    const rows = section.split('\n').filter((l) => /^\| [^-|]/.test(l) && !l.startsWith('| engine writes'));
    const kinds = rows.map((r) => {
      const snippet = /`(\{[^`]+\})`/.exec(r)![1]!;
      const src = logSourceSchema.parse(YAML.parse(snippet));
      return src.journal ? 'journal' : src.format;
    });
    expect(kinds).toEqual(['plain', 'journal', 'cri', 'docker']);
  });
});
