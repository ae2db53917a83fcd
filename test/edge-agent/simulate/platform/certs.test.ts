/** The simulator's certificate folder: a valid set is reused (a pasted Svc config stays valid), anything else replaced. */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  certificateFiles,
  checkCertificateFiles,
  prepareCertificates,
} from '../../../../edge-agent/simulate/platform/certs.js';

const dirs: string[] = [];
const fresh = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sim-certs-test-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const HOSTS = ['127.0.0.1', 'localhost'];
const contents = (dir: string): string[] =>
  ['client.pem', 'client_key.pem', 'root.pem', 'server.pem', 'server_key.pem'].map((f) =>
    readFileSync(join(dir, f), 'utf8'),
  );

// Two sets made once (RSA key generation is the slow part): one with a passphrase-protected client key, one without.
let withPassphrase: string;
let plain: string;
beforeAll(() => {
  withPassphrase = fresh();
  plain = fresh();
  expect(prepareCertificates(withPassphrase, HOSTS, 'pw-1').reused).toBe(false);
  expect(prepareCertificates(plain, HOSTS, '').reused).toBe(false);
});

/** A copy of a set to spoil. */
function copyOf(dir: string): string {
  const copy = fresh();
  for (const name of readdirSync(dir)) copyFileSync(join(dir, name), join(copy, name));
  return copy;
}

describe('prepareCertificates', () => {
  it('writes a new set into an empty folder, then reuses it as long as it fits', () => {
    expect(contents(withPassphrase)[1]).toContain('ENCRYPTED PRIVATE KEY');
    expect(contents(plain)[1]).not.toContain('ENCRYPTED');
    const dir = copyOf(withPassphrase);
    const before = contents(dir);
    expect(prepareCertificates(dir, HOSTS, 'pw-1')).toEqual({ files: certificateFiles(dir, 'pw-1'), reused: true });
    expect(contents(dir)).toEqual(before);
  });

  it('replaces a set that does not fit with a new one, and says why', () => {
    const dir = copyOf(withPassphrase);
    const before = contents(dir);
    expect(prepareCertificates(dir, HOSTS, 'pw-2')).toEqual({
      files: certificateFiles(dir, 'pw-2'),
      reused: false,
      replacedBecause: 'the passphrase does not open the client key',
    });
    const after = contents(dir);
    after.forEach((text, i) => expect(text).not.toBe(before[i]));
    expect(checkCertificateFiles(certificateFiles(dir, 'pw-2'), HOSTS, 'pw-2')).toBeUndefined();
  });
});

describe('checkCertificateFiles', () => {
  const check = (dir: string, passphrase: string, hosts = HOSTS): string | undefined =>
    checkCertificateFiles(certificateFiles(dir, passphrase), hosts, passphrase);

  it('accepts a complete set for its hosts and passphrase', () => {
    expect(check(withPassphrase, 'pw-1')).toBeUndefined();
    expect(check(plain, '')).toBeUndefined();
    expect(check(fresh(), '')).toBe('no certificate set there');
  });

  it('names what does not fit', () => {
    expect(check(withPassphrase, '')).toBe('the client key is passphrase-protected');
    expect(check(plain, 'pw-3')).toBe('the client key is not passphrase-protected');
    expect(check(withPassphrase, 'wrong')).toBe('the passphrase does not open the client key');
    expect(check(plain, '', [...HOSTS, '127.0.0.2'])).toBe('the server certificate is not valid for 127.0.0.2');

    const missing = copyOf(plain);
    rmSync(join(missing, 'server_key.pem'));
    expect(check(missing, '')).toBe('server_key.pem missing');

    // A root that signed neither leaf (the other set's) is no match.
    const foreignRoot = copyOf(plain);
    copyFileSync(join(withPassphrase, 'root.pem'), join(foreignRoot, 'root.pem'));
    expect(check(foreignRoot, '')).toBe('root.pem did not sign both certificates');

    const swappedKey = copyOf(plain);
    copyFileSync(join(withPassphrase, 'server_key.pem'), join(swappedKey, 'server_key.pem'));
    expect(check(swappedKey, '')).toBe('the server key does not match its certificate');

    const garbage = copyOf(plain);
    writeFileSync(join(garbage, 'server.pem'), 'not a certificate');
    expect(check(garbage, '')).toMatch(/^unreadable: /);
  });
});
