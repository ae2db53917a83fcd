/**
 * The release's install.sh, run for real from an unpacked Linux archive (archives-fixture.ts) against
 * a temporary root (`--root`), so the machine's own accounts and folders stay untouched: the system
 * user lands in the root's /etc/passwd and /etc/group (useradd --prefix), the folders get the owners
 * and modes docs/install.md lists, the unit is the archive's and `systemctl --root` enables it,
 * `systemd-analyze verify` passes on it, and a second run (an upgrade) keeps the config and the data.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildRelease, STAND_IN, VERSION } from './archives-fixture.js';

const isRoot = process.getuid?.() === 0;

/** What `systemctl --root` says while enabling the unit in a root that has no systemd units of its own. */
function expectOnlySystemctlNotes(stderr: string): void {
  for (const line of stderr.split('\n').filter((l) => l !== ''))
    expect(line).toMatch(
      /^(Created symlink .*|Unit .* is added as a dependency to a non-existent unit multi-user\.target\.)$/,
    );
}

/** A new root with the account files useradd expects, holding only root. */
function emptyRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-root-'));
  mkdirSync(join(root, 'etc'));
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\n');
  writeFileSync(join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 });
  writeFileSync(join(root, 'etc/gshadow'), 'root:*::\n', { mode: 0o640 });
  return root;
}

/** `mode uid:gid` of a path, the mode in octal. */
function owned(path: string): string {
  const stat = statSync(path);
  return `${(stat.mode & 0o7777).toString(8)} ${stat.uid}:${stat.gid}`;
}

describe.skipIf(!isRoot)('install.sh against a temporary root (needs root, as on a server)', () => {
  let folder = '';
  let root = '';
  let first = { status: -1 as number | null, stdout: '', stderr: '' };
  let uid = '';
  let gid = '';

  beforeAll(() => {
    const release = buildRelease(['linux-x64', 'win-x64']);
    expect(release.run.status, release.run.stderr).toBe(0);
    const into = mkdtempSync(join(tmpdir(), 'svc-unpacked-'));
    const unpack = spawnSync('tar', ['-xzf', join(release.out, `svc-${VERSION}-linux-x64.tar.gz`), '-C', into]);
    expect(unpack.status).toBe(0);
    folder = join(into, `svc-${VERSION}-linux-x64`);
    root = emptyRoot();
    first = spawnSync(join(folder, 'install.sh'), ['--root', root], { encoding: 'utf8' });
    const account = readFileSync(join(root, 'etc/passwd'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('svc:'));
    [, , uid = '', gid = ''] = account?.split(':') ?? [];
  });

  it('creates the system user svc in the root only: no login shell, home /var/lib/svc, its own group', () => {
    expectOnlySystemctlNotes(first.stderr);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('created system user svc (no login)');
    const account = readFileSync(join(root, 'etc/passwd'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('svc:'));
    expect(account).toEqual([`svc:x:${uid}:${gid}:Svc edge agent:/var/lib/svc:/usr/sbin/nologin`]);
    expect(Number(uid)).toBeGreaterThan(0);
    expect(Number(uid), 'a system account').toBeLessThan(1000);
    expect(readFileSync(join(root, 'etc/group'), 'utf8')).toContain(`\nsvc:x:${gid}:\n`);
    expect(readFileSync('/etc/passwd', 'utf8')).not.toMatch(/^svc:.*Svc edge agent/m);
  });

  it('makes the folders and files with the owners and modes docs/install.md lists', () => {
    expect(owned(join(root, 'opt/svc'))).toBe('755 0:0');
    expect(owned(join(root, 'opt/svc/svc'))).toBe('755 0:0');
    expect(readFileSync(join(root, 'opt/svc/svc'))).toEqual(readFileSync(STAND_IN));
    for (const file of ['LICENSE', 'THIRD-PARTY-NOTICES.txt', 'INSTALL.md'])
      expect(owned(join(root, 'opt/svc', file)), file).toBe('644 0:0');
    expect(owned(join(root, 'etc/svc'))).toBe(`750 0:${gid}`);
    expect(owned(join(root, 'etc/svc/certs'))).toBe(`750 0:${gid}`);
    expect(owned(join(root, 'etc/svc/svc.yaml'))).toBe(`640 0:${gid}`);
    expect(readFileSync(join(root, 'etc/svc/svc.yaml'), 'utf8')).toBe(readFileSync(join(folder, 'svc.yaml'), 'utf8'));
    expect(owned(join(root, 'var/lib/svc'))).toBe(`750 ${uid}:${gid}`);
    expect(owned(join(root, 'var/log/svc'))).toBe(`750 ${uid}:${gid}`);
  });

  it('writes the archive unit to /etc/systemd/system and enables it for multi-user.target', ({ skip }) => {
    const unit = join(root, 'etc/systemd/system/svc.service');
    expect(owned(unit)).toBe('644 0:0');
    expect(readFileSync(unit, 'utf8')).toBe(readFileSync(join(folder, 'svc.service'), 'utf8'));
    if (spawnSync('systemctl', ['--version']).status !== 0) skip('systemctl is not installed here');
    const wanted = join(root, 'etc/systemd/system/multi-user.target.wants/svc.service');
    expect(lstatSync(wanted).isSymbolicLink()).toBe(true);
    expect(readlinkSync(wanted)).toBe('/etc/systemd/system/svc.service');
  });

  it('the unit it wrote passes `systemd-analyze verify` (its executable read from the root)', ({ skip }) => {
    if (spawnSync('systemd-analyze', ['--version']).status !== 0) skip('systemd-analyze is not installed here');
    // verify checks that ExecStart's file exists and is executable: point it at the installed copy.
    const unit = readFileSync(join(root, 'etc/systemd/system/svc.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\/opt\/svc\/svc edge --config \/etc\/svc\/svc\.yaml$/m);
    const check = mkdtempSync(join(tmpdir(), 'svc-unit-'));
    writeFileSync(join(check, 'svc.service'), unit.replace(/^ExecStart=\/opt\//m, `ExecStart=${root}/opt/`));
    const verify = spawnSync('systemd-analyze', ['verify', join(check, 'svc.service')], { encoding: 'utf8' });
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
  });

  it('a second run (an upgrade) keeps the edited config and the data folder, and adds no second user', () => {
    writeFileSync(join(root, 'etc/svc/svc.yaml'), 'Svc:\n  logLevel: debug\n');
    mkdirSync(join(root, 'var/lib/svc/queue'));
    writeFileSync(join(root, 'var/lib/svc/queue/waiting'), 'an event');
    const again = spawnSync(join(folder, 'install.sh'), ['--root', root], { encoding: 'utf8' });
    expectOnlySystemctlNotes(again.stderr);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('user svc exists');
    expect(again.stdout).toContain(`kept ${root}/etc/svc/svc.yaml`);
    expect(readFileSync(join(root, 'etc/svc/svc.yaml'), 'utf8')).toBe('Svc:\n  logLevel: debug\n');
    expect(readFileSync(join(root, 'var/lib/svc/queue/waiting'), 'utf8')).toBe('an event');
    expect(readFileSync(join(root, 'etc/passwd'), 'utf8').match(/^svc:/gm)).toHaveLength(1);
    expect(owned(join(root, 'opt/svc/svc'))).toBe('755 0:0');
  });

  it('takes the root as DESTDIR too, relative to where it runs, and prints its help', () => {
    const target = emptyRoot();
    const run = spawnSync(join(folder, 'install.sh'), ['--no-systemctl'], {
      cwd: join(target, '..'),
      encoding: 'utf8',
      env: { ...process.env, DESTDIR: basename(target) },
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`installed ${target}/opt/svc/svc`);
    expect(run.stdout).toContain('systemctl not run');
    expect(existsSync(join(target, 'etc/systemd/system/svc.service'))).toBe(true);
    expect(existsSync(join(target, 'etc/systemd/system/multi-user.target.wants'))).toBe(false);
    const help = spawnSync(join(folder, 'install.sh'), ['--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Installs Svc's edge agent/);
    expect(help.stdout).toContain('--root DIR (or DESTDIR=DIR)');
    expect(help.stdout).not.toContain('set -eu');
  });

  it('refuses an unknown option and an incomplete folder, saying what is wrong, and installs nothing', () => {
    const target = emptyRoot();
    const unknown = spawnSync(join(folder, 'install.sh'), ['--root', target, '--force'], { encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe('install.sh: unknown option --force (see --help)\n');
    const partial = mkdtempSync(join(tmpdir(), 'svc-partial-'));
    for (const file of ['install.sh', 'svc', 'svc.yaml', 'LICENSE'])
      writeFileSync(join(partial, file), readFileSync(join(folder, file)), { mode: 0o755 });
    const incomplete = spawnSync(join(partial, 'install.sh'), ['--root', target], { encoding: 'utf8' });
    expect(incomplete.status).toBe(1);
    expect(incomplete.stderr).toBe(`install.sh: ${partial}/svc.service is missing: unpack the whole archive\n`);
    expect(existsSync(join(target, 'opt'))).toBe(false);
    expect(readFileSync(join(target, 'etc/passwd'), 'utf8')).not.toContain('svc:');
  });
});
