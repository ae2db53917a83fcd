/**
 * The pollers' start-up rules: in-process for each rule, and as an operator meets them, from
 * `svc validate-config` and `svc edge` as real child processes (exit 1, the key, the path and the
 * reason, no stack).
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateFiles,
  type CertificateSet,
  makeCertificates,
  writeCertificates,
} from '../../../../edge-agent/simulate/platform/certs.js';
import { type AccessCheck, checkPlatformAccess, pollersOn } from '../../../../edge-agent/sources/platform/startup.js';
import { SVC_BIN } from '../../../support/svc-process.js';
import { svcConfig } from '../../../support/udp.js';

let dir: string;
let certs: CertificateSet;
let files: CertificateFiles;
let locked: CertificateFiles;
let other: CertificateFiles;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
  certs = makeCertificates(['127.0.0.1']);
  files = writeCertificates(join(dir, 'certs'), certs);
  locked = writeCertificates(join(dir, 'locked'), certs, 'export-pass');
  other = writeCertificates(join(dir, 'other'), makeCertificates(['127.0.0.1']));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const certLines = (f: Partial<CertificateFiles> = {}) => {
  const c = { ...files, ...f };
  return [
    '  cert:',
    `    clientCert: ${JSON.stringify(c.clientCert)}`,
    `    clientCertKey: ${JSON.stringify(c.clientCertKey)}`,
    `    clientCertCA: ${JSON.stringify(c.clientCertCA)}`,
    `    clientCertPassphrase: ${JSON.stringify(c.passphrase)}`,
  ];
};
const HEALTH = [
  '  serversToMonitor:',
  '    serverTagsDefinition: []',
  '    servers:',
  '      - { host: "127.0.0.1:4747", serverName: node1 }',
];

/** `Svc.<path>: <message>` of each problem. */
function problems(result: AccessCheck): string[] {
  return result.ok
    ? []
    : result.problems.map(
        (p) =>
          `Svc.${p.path
            .map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`))
            .join('')
            .slice(1)}: ${p.message}`,
      );
}

describe('which pollers run', () => {
  it('health when a server is listed, sessions when extraction is on and a server has a virtual proxy, app names when extraction is on', () => {
    expect(pollersOn(svcConfig([]))).toEqual({ health: false, sessions: false, appNames: false });
    expect(pollersOn(svcConfig(HEALTH))).toEqual({ health: true, sessions: false, appNames: false });
    expect(pollersOn(svcConfig(['  userSessions: { enableSessionExtract: true }', ...HEALTH]))).toEqual({
      health: true,
      sessions: false,
      appNames: false,
    });
    const sessions = [
      '  userSessions: { enableSessionExtract: true }',
      '  serversToMonitor:',
      '    serverTagsDefinition: []',
      '    servers:',
      '      - { host: "n1:4747", serverName: n1, userSessions: { enable: true, host: "n1:4243", virtualProxies: [{ virtualProxy: / }] } }',
    ];
    expect(pollersOn(svcConfig(sessions))).toEqual({ health: true, sessions: true, appNames: false });
    expect(pollersOn(svcConfig(['  appNames: { enableAppNameExtract: true, hostIP: 10.0.0.5 }']))).toEqual({
      health: false,
      sessions: false,
      appNames: true,
    });
  });
});

describe('checkPlatformAccess', () => {
  it('checks nothing when no poller is on (the certificate keys may hold anything)', async () => {
    const result = await checkPlatformAccess(svcConfig(['  cert: { clientCert: /no/such/file.pem }']));
    expect(result).toEqual({ ok: true, access: { tls: null }, warnings: [] });
  });

  it('names the pollers that present the certificate when a file is not set', async () => {
    const result = await checkPlatformAccess(
      svcConfig([
        ...HEALTH,
        '  appNames: { enableAppNameExtract: true, hostIP: 127.0.0.1 }',
        ...certLines({ clientCert: '' }),
      ]),
    );
    expect(problems(result)).toEqual([
      'Svc.cert.clientCert: must be set: the health poller and the app-name poller present it',
    ]);
  });

  it('refuses configured headers that cannot be sent, naming the server and the header but never the value', async () => {
    const config = svcConfig([
      ...certLines(),
      '  serversToMonitor:',
      '    serverTagsDefinition: []',
      '    servers:',
      '      - { host: "n1:4747", serverName: n1, headers: { "X-Token": "abc\\ndef", "Bad Name": x, X-Fine: ok } }',
    ]);
    expect(problems(await checkPlatformAccess(config))).toEqual([
      'Svc.serversToMonitor.servers[0].headers: header "X-Token" has a value that cannot be sent in an HTTP header (line breaks or other control characters)',
      'Svc.serversToMonitor.servers[0].headers: header "Bad Name" is not a valid HTTP header name',
    ]);
  });

  it('refuses a virtual proxy that is not one path segment', async () => {
    const vps = ['/', '/hdr', '/hdr/', '/a b', '/x?y', '/a/b']
      .map((vp) => `{ virtualProxy: ${JSON.stringify(vp)} }`)
      .join(', ');
    const config = svcConfig([
      ...certLines(),
      '  userSessions: { enableSessionExtract: true }',
      '  serversToMonitor:',
      '    serverTagsDefinition: []',
      '    servers:',
      `      - { host: "n1:4747", serverName: n1, userSessions: { enable: true, host: "n1:4243", virtualProxies: [${vps}] } }`,
    ]);
    const message =
      'is not a virtual proxy prefix: write / or / followed by one name of letters, digits, ".", "_", "~" or "-"';
    expect(problems(await checkPlatformAccess(config))).toEqual(
      [3, 4, 5].map(
        (j) =>
          `Svc.serversToMonitor.servers[0].userSessions.virtualProxies[${j}].virtualProxy: ${JSON.stringify(['/', '/hdr', '/hdr/', '/a b', '/x?y', '/a/b'][j])} ${message}`,
      ),
    );
  });

  it('wants appNames.hostIP to be an IPv4 address or a name that resolves to one', async () => {
    const access = (hostIP: string, options = {}) =>
      checkPlatformAccess(
        svcConfig([...certLines(), `  appNames: { enableAppNameExtract: true, hostIP: ${JSON.stringify(hostIP)} }`]),
        options,
      );
    expect((await access('127.0.0.1')).ok).toBe(true);
    // /etc/hosts: no DNS server is asked.
    expect((await access('localhost')).ok).toBe(true);
    expect(problems(await access('::1'))).toEqual([
      'Svc.appNames.hostIP: "::1" is an IPv6 address; the app list is fetched over IPv4: give an IPv4 address or a name that resolves to one',
    ]);
    // A failing or silent name server: the resolver of this machine is not on loopback, so these
    // lookups are stand-ins that fail the way node:dns does.
    const notFound = () =>
      Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND repo.lab.example'), { code: 'ENOTFOUND' }));
    expect(problems(await access('repo.lab.example', { lookup: notFound }))).toEqual([
      'Svc.appNames.hostIP: "repo.lab.example" is not an IPv4 address and does not resolve to one (ENOTFOUND)',
    ]);
    const silent = () => new Promise(() => undefined);
    expect(problems(await access('repo.lab.example', { lookup: silent, lookupTimeoutMs: 50 }))).toEqual([
      'Svc.appNames.hostIP: "repo.lab.example" did not resolve to an IPv4 address within 50 ms',
    ]);
  });
});

describe('svc validate-config and svc edge refuse unusable certificate files', () => {
  function svc(args: string[], lines: string[], cwd = dir): { run: SpawnSyncReturns<string>; file: string } {
    const file = join(mkdtempSync(join(dir, 'cfg-')), 'svc.yaml');
    writeFileSync(
      file,
      ['Svc:', '  uptimeMonitor: { enable: false }', '  systemInfo: { enable: false }', ...lines, ''].join('\n'),
    );
    const run = spawnSync(SVC_BIN, [...args, '--config', file], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, SVC_CONFIG: '' },
      timeout: 20_000,
    });
    return { run, file };
  }
  const noStack = (text: string) => expect(text).not.toMatch(/^\s+at |Error:|node:internal/m);

  const cases: { what: string; lines: () => string[]; problem: () => string }[] = [
    {
      what: 'a missing file',
      lines: () => [...HEALTH, ...certLines({ clientCert: join(dir, 'missing.pem') })],
      problem: () => `Svc.cert.clientCert: cannot read ${JSON.stringify(join(dir, 'missing.pem'))}: no such file`,
    },
    {
      what: 'a wrong passphrase',
      lines: () => [...HEALTH, ...certLines({ clientCertKey: locked.clientCertKey, passphrase: 'guess' })],
      problem: () =>
        `Svc.cert.clientCertPassphrase: does not decrypt the key in ${JSON.stringify(locked.clientCertKey)} (Svc.cert.clientCertKey): wrong passphrase`,
    },
    {
      what: 'a key of another certificate',
      lines: () => [...HEALTH, ...certLines({ clientCertKey: other.clientCertKey })],
      problem: () =>
        `Svc.cert.clientCertKey: the key in ${JSON.stringify(other.clientCertKey)} does not belong to the certificate in ${JSON.stringify(files.clientCert)} (Svc.cert.clientCert)`,
    },
  ];
  for (const { what, lines, problem } of cases) {
    for (const command of ['validate-config', 'edge'] as const) {
      it(`${what}: \`svc ${command}\` exits 1 naming the key, the path and the reason`, () => {
        const { run, file } = svc([command], lines());
        expect(run.stderr).toBe(
          `svc: the configuration in ${file} cannot be used (1 problem):\n  ${file} ${problem()}\n`,
        );
        expect(run.status).toBe(1);
        expect(run.stdout).toBe('');
        noStack(run.stderr);
      });
    }
  }

  it('accepts good files, relative paths resolved from the working directory', () => {
    const { run, file } = svc(
      ['validate-config'],
      [
        ...HEALTH,
        '  cert:',
        '    clientCert: certs/client.pem',
        '    clientCertKey: certs/client_key.pem',
        '    clientCertCA: certs/root.pem',
      ],
    );
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${file}: configuration is valid\n`);
    expect(run.status).toBe(0);
    const elsewhere = svc(
      ['validate-config'],
      [
        ...HEALTH,
        '  cert:',
        '    clientCert: certs/client.pem',
        '    clientCertKey: certs/client_key.pem',
        '    clientCertCA: certs/root.pem',
      ],
      join(dir, 'other'),
    );
    expect(elsewhere.run.status).toBe(1);
    expect(elsewhere.run.stderr).toContain(
      `Svc.cert.clientCert: cannot read ${JSON.stringify(join(dir, 'other', 'certs', 'client.pem'))}: no such file`,
    );
  });

  it('reports every problem at once, the app-list host included', () => {
    const { run, file } = svc(
      ['validate-config'],
      [
        ...HEALTH,
        '  appNames: { enableAppNameExtract: true, hostIP: "::1" }',
        ...certLines({ clientCertCA: join(dir, 'missing-root.pem'), clientCertKey: locked.clientCertKey }),
      ],
    );
    expect(run.status).toBe(1);
    expect(run.stderr.split('\n')).toEqual([
      `svc: the configuration in ${file} cannot be used (3 problems):`,
      `  ${file} Svc.cert.clientCertCA: cannot read ${JSON.stringify(join(dir, 'missing-root.pem'))}: no such file`,
      `  ${file} Svc.cert.clientCertPassphrase: is empty, but the key in ${JSON.stringify(locked.clientCertKey)} (Svc.cert.clientCertKey) is encrypted`,
      `  ${file} Svc.appNames.hostIP: "::1" is an IPv6 address; the app list is fetched over IPv4: give an IPv4 address or a name that resolves to one`,
      '',
    ]);
  });
});
