/** The client certificate files (`Svc.cert`): every way a file can be wrong is a finding naming the key, the path and the reason. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateFiles,
  type CertificateSet,
  makeCertificates,
  writeCertificates,
} from '../../../../edge-agent/simulate/platform/certs.js';
import { loadClientTls, type TlsLoad } from '../../../../edge-agent/sources/platform/tls.js';

let dir: string;
let certs: CertificateSet;
let plain: CertificateFiles;
let encrypted: CertificateFiles;
let other: CertificateFiles;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-tls-'));
  certs = makeCertificates(['127.0.0.1']);
  plain = writeCertificates(join(dir, 'plain'), certs);
  encrypted = writeCertificates(join(dir, 'encrypted'), certs, 'export-pass');
  other = writeCertificates(join(dir, 'other'), makeCertificates(['127.0.0.1']));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const USERS = 'the health poller presents it';

function load(
  files: Partial<{ clientCert: string; clientCertKey: string; clientCertCA: string; clientCertPassphrase: string }>,
  options: { rejectUnauthorized?: boolean; cwd?: string; now?: number } = {},
): TlsLoad {
  const cert = {
    clientCert: plain.clientCert,
    clientCertKey: plain.clientCertKey,
    clientCertCA: plain.clientCertCA,
    clientCertPassphrase: '',
    ...files,
  };
  return loadClientTls(cert, options.rejectUnauthorized ?? true, USERS, {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
}

/** `Svc.<path>: <message>` of each problem. */
function problems(result: TlsLoad): string[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.problems.map((p) => `Svc.${p.path.join('.')}: ${p.message}`);
}

describe('loadClientTls', () => {
  it('loads the exported files, with an encrypted key and its passphrase too', () => {
    const result = load({});
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.tls.files).toEqual({ cert: plain.clientCert, key: plain.clientCertKey, ca: plain.clientCertCA });
    expect(result.tls.rejectUnauthorized).toBe(true);
    expect(result.tls.validTo.getTime()).toBeGreaterThan(Date.now());
    expect(result.warnings).toEqual([]);
    expect(load({ clientCertKey: encrypted.clientCertKey, clientCertPassphrase: 'export-pass' }).ok).toBe(true);
  });

  it('resolves relative paths from the working directory', () => {
    const result = load(
      { clientCert: 'plain/client.pem', clientCertKey: 'plain/client_key.pem', clientCertCA: 'plain/root.pem' },
      { cwd: dir },
    );
    expect(result.ok && result.tls.files.cert).toBe(join(dir, 'plain', 'client.pem'));
    expect(problems(load({ clientCert: 'plain/client.pem' }, { cwd: join(dir, 'other') }))).toEqual([
      `Svc.cert.clientCert: cannot read ${JSON.stringify(join(dir, 'other', 'plain', 'client.pem'))}: no such file`,
    ]);
  });

  it('names every key that is empty', () => {
    expect(problems(load({ clientCert: '', clientCertKey: '', clientCertCA: '' }))).toEqual([
      `Svc.cert.clientCert: must be set: ${USERS}`,
      `Svc.cert.clientCertKey: must be set: ${USERS}`,
      `Svc.cert.clientCertCA: must be set: ${USERS}`,
    ]);
  });

  it('needs no CA while rejectUnauthorized is false, but checks one that is given', () => {
    const result = load({ clientCertCA: '' }, { rejectUnauthorized: false });
    expect(result.ok && result.tls.files.ca).toBe(null);
    expect(problems(load({ clientCertCA: plain.clientCertKey }, { rejectUnauthorized: false }))).toEqual([
      `Svc.cert.clientCertCA: ${JSON.stringify(plain.clientCertKey)} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)`,
    ]);
  });

  it('refuses a missing file, a directory, a file that is not PEM and an oversized file, naming key, path and reason', () => {
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'this is not a certificate\n');
    const huge = join(dir, 'huge.pem');
    writeFileSync(huge, Buffer.alloc(1_048_577, 0x41));
    const folder = join(dir, 'a-folder');
    mkdirSync(folder, { recursive: true });
    expect(problems(load({ clientCert: join(dir, 'missing.pem'), clientCertKey: folder, clientCertCA: junk }))).toEqual(
      [
        `Svc.cert.clientCert: cannot read ${JSON.stringify(join(dir, 'missing.pem'))}: no such file`,
        `Svc.cert.clientCertKey: cannot read ${JSON.stringify(folder)}: is a directory`,
        `Svc.cert.clientCertCA: ${JSON.stringify(junk)} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)`,
      ],
    );
    expect(problems(load({ clientCertKey: junk }))).toEqual([
      `Svc.cert.clientCertKey: ${JSON.stringify(junk)} is not a PEM private key (no "-----BEGIN PRIVATE KEY-----" block)`,
    ]);
    expect(problems(load({ clientCert: huge }))).toEqual([
      `Svc.cert.clientCert: ${JSON.stringify(huge)} is 1,048,577 bytes; a PEM file of a certificate or key is far smaller (at most 1,048,576 bytes are read)`,
    ]);
  });

  it('refuses a certificate block that does not parse', () => {
    const broken = join(dir, 'broken.pem');
    writeFileSync(broken, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const [message] = problems(load({ clientCert: broken }));
    expect(message).toMatch(
      new RegExp(
        `^Svc\\.cert\\.clientCert: ${JSON.stringify(broken).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: certificate 1 of 1 cannot be parsed \\(.+\\)$`,
      ),
    );
  });

  it('names the passphrase when it is missing or wrong for an encrypted key', () => {
    expect(problems(load({ clientCertKey: encrypted.clientCertKey }))).toEqual([
      `Svc.cert.clientCertPassphrase: is empty, but the key in ${JSON.stringify(encrypted.clientCertKey)} (Svc.cert.clientCertKey) is encrypted`,
    ]);
    expect(problems(load({ clientCertKey: encrypted.clientCertKey, clientCertPassphrase: 'guess' }))).toEqual([
      `Svc.cert.clientCertPassphrase: does not decrypt the key in ${JSON.stringify(encrypted.clientCertKey)} (Svc.cert.clientCertKey): wrong passphrase`,
    ]);
  });

  it('refuses a key that does not belong to the certificate', () => {
    expect(problems(load({ clientCertKey: other.clientCertKey }))).toEqual([
      `Svc.cert.clientCertKey: the key in ${JSON.stringify(other.clientCertKey)} does not belong to the certificate in ${JSON.stringify(plain.clientCert)} (Svc.cert.clientCert)`,
    ]);
  });

  it('warns (and still loads) when a certificate has expired or is not valid yet', () => {
    const inTwoYears = Date.now() + 2 * 365 * 86_400_000;
    const late = load({}, { now: inTwoYears });
    expect(late.ok).toBe(true);
    expect(late.warnings.map((w) => `Svc.${w.path.join('.')}: ${w.message}`)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Svc\\.cert\\.clientCert: the certificate "CN=svc-client" in .*client\\.pem" expired on \\d{4}-.*Z; the platform refuses it$`,
        ),
      ),
      expect.stringMatching(
        /^Svc\.cert\.clientCertCA: the certificate "CN=Svc platform simulator CA" in .*root\.pem" expired on .*; the platform refuses it$/,
      ),
    ]);
    const early = load({}, { now: Date.now() - 7 * 86_400_000 });
    expect(early.warnings[0]?.message).toMatch(/is valid only from \d{4}-.*Z; the platform refuses it until then$/);
  });
});
