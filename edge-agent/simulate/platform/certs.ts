/**
 * Certificates for the platform simulator and the tests: a CA, a server certificate for the
 * simulator's HTTPS APIs, and a client certificate for Svc, as PEM files laid out like the ones the
 * platform's management console exports (client.pem, client_key.pem, root.pem). Keys come from
 * Node's crypto; node-forge (pure JavaScript) signs the certificates, so this runs wherever Node
 * does, Windows included, with no openssl.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { basename, join } from 'node:path';
import forge from 'node-forge';

const DAY_MS = 86_400_000;

export interface Pem {
  cert: string;
  /** PKCS#8, unencrypted. */
  key: string;
}

export interface CertificateSet {
  ca: Pem;
  server: Pem;
  client: Pem;
}

export interface CertificateFiles {
  directory: string;
  /** The client certificate Svc presents (`cert.clientCert`). */
  clientCert: string;
  /** Its key (`cert.clientCertKey`); encrypted with `passphrase` when one was given. */
  clientCertKey: string;
  /** The CA (`cert.clientCertCA`): it signed both the server and the client certificate. */
  clientCertCA: string;
  serverCert: string;
  serverKey: string;
  passphrase: string;
}

function keyPair(): {
  pem: string;
  forgeKeys: { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey };
} {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const forgePrivate = forge.pki.privateKeyFromPem(pem);
  return {
    pem,
    forgeKeys: { privateKey: forgePrivate, publicKey: forge.pki.setRsaPublicKey(forgePrivate.n, forgePrivate.e) },
  };
}

function baseCertificate(publicKey: forge.pki.rsa.PublicKey, commonName: string, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive serial: the first byte's high bit clear.
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - DAY_MS);
  cert.validity.notAfter = new Date(Date.now() + days * DAY_MS);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  return cert;
}

/**
 * A CA and two leaf certificates it signs: a server certificate valid for `hosts` (names and IP
 * addresses) and a client certificate. Valid from yesterday for `days` (default 365).
 */
export function makeCertificates(
  hosts: readonly string[],
  options: { days?: number; commonName?: string } = {},
): CertificateSet {
  const days = options.days ?? 365;
  const caKeys = keyPair();
  const ca = baseCertificate(caKeys.forgeKeys.publicKey, options.commonName ?? 'Svc platform simulator CA', days);
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  ca.sign(caKeys.forgeKeys.privateKey, forge.md.sha256.create());

  const leaf = (commonName: string, usage: 'server' | 'client'): Pem => {
    const keys = keyPair();
    const cert = baseCertificate(keys.forgeKeys.publicKey, commonName, days);
    cert.setIssuer(ca.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: usage === 'server', clientAuth: usage === 'client' },
      ...(usage === 'server'
        ? [
            {
              name: 'subjectAltName',
              altNames: hosts.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h })),
            },
          ]
        : []),
    ]);
    cert.sign(caKeys.forgeKeys.privateKey, forge.md.sha256.create());
    return { cert: forge.pki.certificateToPem(cert), key: keys.pem };
  };
  return {
    ca: { cert: forge.pki.certificateToPem(ca), key: caKeys.pem },
    server: leaf(hosts[0] ?? 'localhost', 'server'),
    client: leaf('svc-client', 'client'),
  };
}

/** A PKCS#8 key encrypted with `passphrase` (AES-256-CBC), as the management console exports it with a password. */
export function encryptKey(key: string, passphrase: string): string {
  return createPrivateKey(key).export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase }).toString();
}

/** Where a certificate set lives in `directory`: the names the management console exports, plus the server's pair. */
export function certificateFiles(directory: string, passphrase = ''): CertificateFiles {
  return {
    directory,
    clientCert: join(directory, 'client.pem'),
    clientCertKey: join(directory, 'client_key.pem'),
    clientCertCA: join(directory, 'root.pem'),
    serverCert: join(directory, 'server.pem'),
    serverKey: join(directory, 'server_key.pem'),
    passphrase,
  };
}

/** Writes a certificate set into `directory` (mode 0600 for keys) and says where each file is. */
export function writeCertificates(directory: string, set: CertificateSet, passphrase = ''): CertificateFiles {
  mkdirSync(directory, { recursive: true });
  const files = certificateFiles(directory, passphrase);
  writeFileSync(files.clientCert, set.client.cert);
  writeFileSync(files.clientCertKey, passphrase === '' ? set.client.key : encryptKey(set.client.key, passphrase), {
    mode: 0o600,
  });
  writeFileSync(files.clientCertCA, set.ca.cert);
  writeFileSync(files.serverCert, set.server.cert);
  writeFileSync(files.serverKey, set.server.key, { mode: 0o600 });
  return files;
}

/** What `prepareCertificates` did. */
export interface PreparedCertificates {
  files: CertificateFiles;
  /** True when a set already in the directory was used; false when a new one was written. */
  reused: boolean;
  /** Why a set found in the directory was not used (absent when there was none, or it was used). */
  replacedBecause?: string;
}

/**
 * Why the set in `directory` cannot serve `hosts` with `passphrase`, or `undefined` when it can:
 * all five files present, both leaves signed by the CA, the server certificate valid for every
 * host, nothing expiring within a day, each key matching its certificate, and the client key
 * encrypted exactly when a passphrase is given.
 */
export function checkCertificateFiles(
  files: CertificateFiles,
  hosts: readonly string[],
  passphrase: string,
): string | undefined {
  const paths = [files.clientCert, files.clientCertKey, files.clientCertCA, files.serverCert, files.serverKey];
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length === paths.length) return 'no certificate set there';
  if (missing.length > 0) return `${missing.map((p) => basename(p)).join(', ')} missing`;
  try {
    const ca = new X509Certificate(readFileSync(files.clientCertCA));
    const server = new X509Certificate(readFileSync(files.serverCert));
    const client = new X509Certificate(readFileSync(files.clientCert));
    if (!server.verify(ca.publicKey) || !client.verify(ca.publicKey))
      return `${basename(files.clientCertCA)} did not sign both certificates`;
    const soon = Date.now() + DAY_MS;
    for (const cert of [ca, server, client])
      if (Date.parse(cert.validTo) < soon) return `${cert.subject.replace(/\n/g, ', ')} expires ${cert.validTo}`;
    for (const host of hosts) {
      const ok = isIP(host) ? server.checkIP(host) !== undefined : server.checkHost(host) !== undefined;
      if (!ok) return `the server certificate is not valid for ${host}`;
    }
    if (!server.checkPrivateKey(createPrivateKey(readFileSync(files.serverKey))))
      return 'the server key does not match its certificate';
    const clientKey = readFileSync(files.clientCertKey, 'utf8');
    if (clientKey.includes('ENCRYPTED') !== (passphrase !== ''))
      return passphrase === ''
        ? 'the client key is passphrase-protected'
        : 'the client key is not passphrase-protected';
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: clientKey, passphrase });
    } catch {
      return 'the passphrase does not open the client key';
    }
    if (!client.checkPrivateKey(key)) return 'the client key does not match its certificate';
  } catch (err) {
    return `unreadable: ${err instanceof Error ? err.message : String(err)}`;
  }
  return undefined;
}

/**
 * The certificate set in `directory`: the one already there when it serves `hosts` with
 * `passphrase` (so a Svc config pointing at it stays valid when the simulator restarts), else a
 * new one written over it.
 */
export function prepareCertificates(
  directory: string,
  hosts: readonly string[],
  passphrase = '',
): PreparedCertificates {
  const files = certificateFiles(directory, passphrase);
  const problem = checkCertificateFiles(files, hosts, passphrase);
  if (problem === undefined) return { files, reused: true };
  const written = writeCertificates(directory, makeCertificates(hosts), passphrase);
  return problem === 'no certificate set there'
    ? { files: written, reused: false }
    : { files: written, reused: false, replacedBecause: problem };
}
