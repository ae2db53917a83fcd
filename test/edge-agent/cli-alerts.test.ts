/**
 * `svc alerts list | silence | expire` as a user runs them (the linked bin, real child processes) on
 * a real store file under a temp dir, its alerts written by the alerts' store as the engine writes
 * them: the listing, silences made and ended, and every refusal with its exit code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAlertStore } from '../../shared/alerts/store.js';
import { AlertViewSchema, SilenceViewSchema } from '../../shared/store/api-types.js';
import { alertRecord } from '../shared/alerts/fixtures.js';
import { REPO_ROOT } from '../support/build.js';

const SVC = join(REPO_ROOT, 'node_modules/.bin/svc');
const MINUTE_MS = 60_000;
let dir: string;
let config: string;
let storeFile: string;

function svc(...args: string[]) {
  const run = spawnSync(SVC, [...args, '--config', config], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, SVC_CONFIG: '' },
    timeout: 20_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A firing serverDown on node2 and a pending one on node1, as the engine leaves them in the store. */
function seedAlerts(now: number) {
  const firing = alertRecord('node2', now - 10 * MINUTE_MS);
  const pending = alertRecord('node1', now - MINUTE_MS, 'pending');
  const store = openAlertStore(storeFile);
  try {
    store.applyTransitions({ at: now, active: [pending, firing], fired: [firing], resolved: [] });
  } finally {
    store.close();
  }
  return { firing, pending };
}

const ListSchema = Type.Object({ alerts: Type.Array(AlertViewSchema), silences: Type.Array(SilenceViewSchema) });

function listJson() {
  const run = svc('alerts', 'list', '--json');
  expect(run.status, run.stderr).toBe(0);
  const parsed: unknown = JSON.parse(run.stdout);
  if (!Value.Check(ListSchema, parsed)) throw new Error(`not the API's shapes: ${run.stdout}`);
  return parsed;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-alerts-'));
  config = join(dir, 'svc.yaml');
  storeFile = join(dir, 'data', 'svc.db');
  writeFileSync(
    config,
    [
      'Svc:',
      '  store:',
      `    path: ${storeFile}`,
      '  alerts:',
      '    rules:',
      '      - name: nodeTwoDown',
      '        expr: {field: server.up, where: {server: node2}, op: "==", threshold: 0}',
      '',
    ].join('\n'),
  );
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('svc alerts', () => {
  it('says no alert is firing on a store that has none, and creates no file to say it', () => {
    const run = svc('alerts', 'list');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('no alert is firing\nno active silence\n');
    expect(existsSync(storeFile)).toBe(false);
  });

  it('silences by rule and label: the id and end printed, the list shows the silence and the alert it covers, expire ends it', () => {
    const now = Date.now();
    const { firing, pending } = seedAlerts(now);
    const before = listJson();
    // Firing first, then pending; nothing silenced yet.
    expect(before.alerts.map((alert) => [alert.fingerprint, alert.phase, alert.silencedBy])).toEqual([
      [firing.fingerprint, 'firing', null],
      [pending.fingerprint, 'pending', null],
    ]);

    const made = svc(
      'alerts',
      'silence',
      '--rule',
      'serverDown',
      '--label',
      'server=node2',
      '--for',
      '2h',
      '--comment',
      'disk swap',
      '--by',
      'ops',
    );
    expect(made.status, made.stderr).toBe(0);
    const [, id, endsAt] = /^silence ([0-9a-f]{8}) until (\S+)\n$/.exec(made.stdout) ?? [];
    expect(id).toBeDefined();
    expect(Date.parse(endsAt ?? '')).toBeGreaterThanOrEqual(now + 2 * 60 * MINUTE_MS);
    expect(Date.parse(endsAt ?? '')).toBeLessThan(Date.now() + 2 * 60 * MINUTE_MS + MINUTE_MS);

    const after = listJson();
    expect(after.alerts.map((alert) => [alert.labels.server, alert.silencedBy])).toEqual([
      ['node2', id],
      ['node1', null],
    ]);
    expect(after.silences).toEqual([
      expect.objectContaining({
        id,
        rule: 'serverDown',
        matchers: { server: 'node2' },
        createdBy: 'ops',
        comment: 'disk swap',
        active: true,
      }),
    ]);
    const text = svc('alerts', 'list');
    expect(text.stdout).toMatch(
      new RegExp(`^FIRING +critical +serverDown +server=node2 +since \\S+ +value 0 +silenced by ${id}$`, 'm'),
    );
    expect(text.stdout).toMatch(/^PENDING +critical +serverDown +server=node1 /m);
    expect(text.stdout).toContain(`${id}  rule=serverDown server=node2  until ${endsAt}  by ops  "disk swap"`);

    const expired = svc('alerts', 'expire', id ?? '');
    expect(expired.status, expired.stderr).toBe(0);
    expect(expired.stdout).toBe(`silence ${id} expired\n`);
    expect(listJson()).toEqual({ alerts: before.alerts, silences: [] });
    // Already ended: an error, as an id no silence has.
    const again = svc('alerts', 'expire', id ?? '');
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`no active silence has the id "${id}"`);
    expect(svc('alerts', 'expire', 'deadbeef').status).toBe(1);
  });

  it('silences a configured rule until a time, by the OS user unless --by says otherwise', () => {
    const until = new Date(Date.now() + 30 * MINUTE_MS).toISOString();
    const made = svc('alerts', 'silence', '--rule', 'nodeTwoDown', '--until', until);
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toMatch(new RegExp(`^silence [0-9a-f]{8} until ${until}\n$`));
    expect(listJson().silences).toEqual([
      expect.objectContaining({ rule: 'nodeTwoDown', matchers: {}, createdBy: userInfo().username, comment: '' }),
    ]);
  });

  it('refuses a bad silence with a usage error (exit 2) naming the option, and stores nothing', () => {
    const refused = (args: string[], message: RegExp) => {
      const run = svc('alerts', 'silence', ...args);
      expect(run.status, run.stdout).toBe(2);
      expect(run.stderr).toMatch(message);
    };
    refused(
      ['--rule', 'serverDwn', '--for', '1h'],
      /--rule: unknown rule "serverDwn" \(did you mean serverDown\?\); the rules are serverDown, engineMemoryHigh, .*, nodeTwoDown\n/,
    );
    refused(
      ['--rule', 'serverDown', '--until', new Date(Date.now() - MINUTE_MS).toISOString()],
      /--until: \S+ is not in the future/,
    );
    refused(['--rule', 'serverDown', '--until', 'tomorrow'], /--until: "tomorrow" is not an RFC 3339 time/);
    refused(['--rule', 'serverDown', '--for', '2 hours'], /--for: "2 hours" is not a duration such as 30s/);
    refused(['--rule', 'serverDown', '--label', 'node2', '--for', '1h'], /"node2" is not a label as name=value/);
    refused(['--for', '1h'], /--rule: a silence needs a rule or at least one label/);
    refused(['--rule', 'serverDown'], /--for or --until: a silence needs an end/);
    refused(
      ['--rule', 'serverDown', '--for', '1h', '--until', new Date(Date.now() + MINUTE_MS).toISOString()],
      /either an end time or a duration, not both/,
    );
    expect(listJson().silences).toEqual([]);
  });

  it('says what each command does in the help', () => {
    const help = spawnSync(SVC, ['--help'], { encoding: 'utf8', timeout: 20_000 });
    expect(help.stdout).toMatch(/^ {2}alerts +the alerts pending and firing/m);
    const silenceHelp = svc('alerts', 'silence', '--help');
    expect(silenceHelp.status).toBe(0);
    for (const option of [
      '--rule <name>',
      '--label <name=value>',
      '--for <duration>',
      '--until <time>',
      '--comment <text>',
      '--by <name>',
    ])
      expect(silenceHelp.stdout).toContain(option);
    expect(svc('alerts', '--help').stdout).toMatch(/list .*\n.*silence .*\n.*expire/s);
  });
});
