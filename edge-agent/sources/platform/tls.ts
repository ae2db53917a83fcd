/**
 * The client certificate Svc presents to the platform's APIs (platform-formats.md §4 "TLS", §5.1,
 * §5.2): `Svc.cert.clientCert`, `clientCertKey`, `clientCertCA` and `clientCertPassphrase`, PEM
 * files as the management console exports them. They are read and checked once, at start-up and by
 * `svc validate-config`, so that a wrong file is a config error naming the key, the path and the
 * reason, not a TLS failure on every poll. Relative paths resolve from the working directory.
 */
import { createPrivateKey, type KeyObject, type X509Certificate } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Tls from 'node:tls';
import type { SecureContext } from 'node:tls';
import type { RuleFinding } from '../../../shared/config/errors.js';
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { PathSegment } from '../../../shared/config/walk.js';
import { opensslReason, pemCertificates, pemPrivateKey, readPemFile } from '../../../shared/util/pem.js';

/**
 * `require`, not `import`: on Node 20 an ES import of node:tls reads every export of the module,
 * `rootCertificates` too, which parses Node's ≈ 140 root certificates (≈ 1.5 MB of heap kept, in
 * bench/memory.mjs --profile) at every start, whether a poller runs or not. The pollers trust only
 * the configured CA and never need them.
 */
const { createSecureContext } = createRequire(import.meta.url)('node:tls') as typeof Tls;

/** What the HTTPS client presents and trusts: built once from the checked files. */
export interface ClientTls {
  secureContext: SecureContext;
  /** `serversToMonitor.rejectUnauthorized`: false accepts a server certificate no CA vouches for. */
  rejectUnauthorized: boolean;
  /** The files as resolved (absolute), for the start-up log; `ca` is null when none is used. */
  files: { cert: string; key: string; ca: string | null };
  /** When the client certificate stops being valid. */
  validTo: Date;
}

export type TlsLoad =
  | { ok: true; tls: ClientTls; warnings: RuleFinding[] }
  | { ok: false; problems: RuleFinding[]; warnings: RuleFinding[] };

type CertKey = 'clientCert' | 'clientCertKey' | 'clientCertCA' | 'clientCertPassphrase';

/**
 * Reads and checks the certificate files for `users` (the pollers that present them, named in the
 * messages): each file is set, readable, a PEM certificate (chain) or private key; an encrypted key
 * has a passphrase that decrypts it; the key belongs to the certificate. The CA file is needed only
 * while `rejectUnauthorized` is true (without it no server certificate could be verified); when set
 * it is checked either way. Expired or not yet valid certificates are warnings: the platform decides.
 */
export function loadClientTls(
  cert: SvcConfig['cert'],
  rejectUnauthorized: boolean,
  users: string,
  options: { cwd?: string; now?: number } = {},
): TlsLoad {
  const cwd = options.cwd ?? process.cwd();
  const now = options.now ?? Date.now();
  const problems: RuleFinding[] = [];
  const warnings: RuleFinding[] = [];
  const path = (key: CertKey): PathSegment[] => ['cert', key];
  const problem = (key: CertKey, message: string) => problems.push({ severity: 'error', path: path(key), message });
  const shown = (file: string) => JSON.stringify(file);

  /** The file's text, or undefined after recording why there is none. */
  const read = (key: 'clientCert' | 'clientCertKey' | 'clientCertCA'): { file: string; text: string } | undefined => {
    const given = cert[key];
    if (given === '') {
      problem(key, `must be set: ${users}`);
      return undefined;
    }
    const result = readPemFile(given, cwd);
    if (!result.ok) {
      problem(key, result.problem);
      return undefined;
    }
    return result;
  };

  /** Every certificate of a PEM file (a chain or a CA bundle), or undefined after recording why not. */
  const certificates = (
    key: 'clientCert' | 'clientCertCA',
    file: string,
    text: string,
  ): X509Certificate[] | undefined => {
    const read = pemCertificates(file, text);
    if (!read.ok) {
      problem(key, read.problem);
      return undefined;
    }
    const parsed = read.certificates;
    for (const c of parsed) {
      const from = new Date(c.validFrom);
      const to = new Date(c.validTo);
      const subject = c.subject.replace(/\n/g, ', ');
      if (to.getTime() < now)
        warnings.push({
          severity: 'warning',
          path: path(key),
          message: `the certificate "${subject}" in ${shown(file)} expired on ${to.toISOString()}; the platform refuses it`,
        });
      else if (from.getTime() > now)
        warnings.push({
          severity: 'warning',
          path: path(key),
          message: `the certificate "${subject}" in ${shown(file)} is valid only from ${from.toISOString()}; the platform refuses it until then`,
        });
    }
    return parsed;
  };

  const certFile = read('clientCert');
  const keyFile = read('clientCertKey');
  const caFile = cert.clientCertCA !== '' || rejectUnauthorized ? read('clientCertCA') : undefined;
  const leaf = certFile && certificates('clientCert', certFile.file, certFile.text)?.[0];
  const ca = caFile && certificates('clientCertCA', caFile.file, caFile.text);

  let key: { pem: string; object: KeyObject } | undefined;
  if (keyFile) {
    const block = pemPrivateKey(keyFile.text);
    if (block === undefined) {
      problem(
        'clientCertKey',
        `${shown(keyFile.file)} is not a PEM private key (no "-----BEGIN PRIVATE KEY-----" block)`,
      );
    } else {
      const encrypted = block.encrypted;
      const passphrase = cert.clientCertPassphrase;
      if (encrypted && passphrase === '') {
        problem(
          'clientCertPassphrase',
          `is empty, but the key in ${shown(keyFile.file)} (Svc.cert.clientCertKey) is encrypted`,
        );
      } else {
        try {
          key = {
            pem: block.pem,
            object: createPrivateKey({ key: block.pem, format: 'pem', ...(encrypted ? { passphrase } : {}) }),
          };
        } catch (err) {
          // No OpenSSL reason here: a wrong passphrase gives "bad decrypt" most times, and "unsupported"
          // when the garbage it decrypts to happens to end in valid padding (a CI run met it).
          if (encrypted)
            problem(
              'clientCertPassphrase',
              `does not decrypt the key in ${shown(keyFile.file)} (Svc.cert.clientCertKey): wrong passphrase`,
            );
          else
            problem('clientCertKey', `${shown(keyFile.file)}: the private key cannot be read (${opensslReason(err)})`);
        }
      }
    }
  }
  if (certFile && leaf && keyFile && key && !leaf.checkPrivateKey(key.object)) {
    problem(
      'clientCertKey',
      `the key in ${shown(keyFile.file)} does not belong to the certificate in ${shown(certFile.file)} (Svc.cert.clientCert)`,
    );
  }
  if (problems.length > 0 || !certFile || !leaf || !keyFile || !key) return { ok: false, problems, warnings };

  try {
    // The key as decrypted: the secure context needs no passphrase, and the secret is not kept.
    const secureContext = createSecureContext({
      cert: certFile.text,
      key: key.object.export({ format: 'pem', type: 'pkcs8' }),
      ...(caFile && ca ? { ca: caFile.text } : {}),
    });
    return {
      ok: true,
      tls: {
        secureContext,
        rejectUnauthorized,
        files: { cert: certFile.file, key: keyFile.file, ca: caFile?.file ?? null },
        validTo: new Date(leaf.validTo),
      },
      warnings,
    };
  } catch (err) {
    problem(
      'clientCert',
      `${shown(certFile.file)} and ${shown(keyFile.file)} cannot be used together for TLS (${opensslReason(err)})`,
    );
    return { ok: false, problems, warnings };
  }
}
