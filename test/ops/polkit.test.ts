// The polkit rule shipped for remediation under systemd (docs/polkit/50-wedgewatch.rules), evaluated as polkitd
// would: it lets the unit's transient user restart exactly the listed engine units, and nothing else.
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

type Rule = (
  action: { id: string; lookup(k: string): string | undefined },
  subject: { user: string },
) => unknown;
const RESULT = { YES: 'yes', NO: 'no', NOT_HANDLED: null, AUTH_ADMIN: 'auth_admin' };

function loadRule(): Rule {
  let rule: Rule | undefined;
  const polkit = { Result: RESULT, addRule: (f: Rule) => (rule = f) };
  runInNewContext(readFileSync('docs/polkit/50-wedgewatch.rules', 'utf8'), { polkit });
  expect(rule).toBeTypeOf('function');
  return rule!;
}

const manage = (unit: string, verb: string) => ({
  id: 'org.freedesktop.systemd1.manage-units',
  lookup: (k: string) => ({ unit, verb })[k],
});

describe('polkit rule for remediation', () => {
  const rule = loadRule();

  it('lets user wedgewatch restart the engine units', () => {
    expect(rule(manage('sglang-prefill.service', 'restart'), { user: 'wedgewatch' })).toBe('yes');
    expect(rule(manage('sglang-decode.service', 'restart'), { user: 'wedgewatch' })).toBe('yes');
  });

  it('refuses other units, other verbs, and says nothing about other users or actions', () => {
    expect(rule(manage('sshd.service', 'restart'), { user: 'wedgewatch' })).toBe('no');
    expect(rule(manage('sglang-prefill.service', 'stop'), { user: 'wedgewatch' })).toBe('no');
    expect(rule(manage('sglang-prefill.service', 'start'), { user: 'wedgewatch' })).toBe('no');
    expect(rule(manage('sglang-prefill.service', 'restart'), { user: 'mallory' })).toBeNull();
    const reload = { id: 'org.freedesktop.systemd1.reload-daemon', lookup: () => undefined };
    expect(rule(reload, { user: 'wedgewatch' })).toBeNull();
  });

  it('allows the unit the example config restarts (the user the shipped unit runs as)', () => {
    const cfg = parse(readFileSync('examples/wedgewatch.yaml', 'utf8')) as {
      targets: { remediate?: { command: string[] } }[];
    };
    const unit = readFileSync('systemd/wedgewatch.service', 'utf8');
    // DynamicUser takes the unit's name as the user name unless User= says otherwise.
    expect(unit).toMatch(/^DynamicUser=yes$/m);
    expect(unit).not.toMatch(/^User=/m);
    const commands = cfg.targets.flatMap((t) => (t.remediate ? [t.remediate.command] : []));
    expect(commands.length).toBeGreaterThan(0);
    for (const [bin, verb, name] of commands) {
      expect(bin).toBe('systemctl');
      expect(rule(manage(name!, verb!), { user: 'wedgewatch' })).toBe('yes');
    }
  });
});
