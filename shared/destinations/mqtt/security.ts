/**
 * How Svc proves itself to the MQTT broker and checks the broker (`Svc.mqttConfig.clientId`,
 * `username`, `password`, `tls.*`): read and checked once by `svc validate-config` and before
 * `svc local` / `svc edge` start anything (`checkMqttSecurity`), and again by the writer's `start()`
 * for its connection options (`mqttSecurity`), so that a wrong file is a config error naming the key,
 * the file and the reason, not a refused connection on every reconnect.
 *
 * Checked when MQTT is on (`mqttConfig.enable`): the password needs a user name (MQTT 3.1.1 §3.1.2.9);
 * with `tls.enable`, each PEM file that is set can be read and holds what it should (`caFile`
 * certificates, `certFile` a certificate, `keyFile` an unencrypted private key that belongs to
 * it); `certFile` and `keyFile` come together. An expired or not yet valid certificate is a warning:
 * the broker decides. A user name or password sent without TLS is a warning (they cross the network
 * in clear text). Relative paths resolve from the working directory.
 */
import { createPrivateKey, type KeyObject, type X509Certificate } from 'node:crypto';
import { hostname } from 'node:os';
import type { RuleFinding } from '../../config/errors.js';
import type { SvcConfig } from '../../config/schema.js';
import { opensslReason, pemCertificates, pemPrivateKey, readPemFile } from '../../util/pem.js';

export type MqttSettings = SvcConfig['mqttConfig'];

/** What the connection presents and trusts, as the mqtt library's connect options take them. */
export interface MqttSecurity {
  /** `mqtts` with `tls.enable`, else `mqtt`. */
  protocol: 'mqtt' | 'mqtts';
  clientId: string;
  username?: string;
  password?: string;
  /** TLS only: the trusted CA certificates (PEM); absent = Node's built-in public CAs. */
  ca?: string;
  /** TLS only: the client certificate and its key (PEM). */
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
}

export type MqttSecurityCheck =
  | { ok: true; security: MqttSecurity; warnings: RuleFinding[] }
  | { ok: false; problems: RuleFinding[]; warnings: RuleFinding[] };

/** `clientId` as configured, or `svc-<host name>`: stable across restarts, so the broker's logs and ACLs can name it. */
export function mqttClientId(settings: Pick<MqttSettings, 'clientId'>): string {
  return settings.clientId !== '' ? settings.clientId : `svc-${hostname()}`;
}

type TlsFileKey = 'caFile' | 'certFile' | 'keyFile';

/** Reads and checks the MQTT settings; the connection options when they can be used. */
export function mqttSecurity(settings: MqttSettings, options: { cwd?: string; now?: number } = {}): MqttSecurityCheck {
  const cwd = options.cwd ?? process.cwd();
  const now = options.now ?? Date.now();
  const problems: RuleFinding[] = [];
  const warnings: RuleFinding[] = [];
  const tls = settings.tls;
  const error = (path: string[], message: string) =>
    problems.push({ severity: 'error', path: ['mqttConfig', ...path], message });
  const warn = (path: string[], message: string) =>
    warnings.push({ severity: 'warning', path: ['mqttConfig', ...path], message });

  if (settings.password !== '' && settings.username === '')
    error(['password'], 'is set but Svc.mqttConfig.username is empty: MQTT sends a password only with a user name');
  if (!tls.enable && (settings.username !== '' || settings.password !== ''))
    warn(
      [settings.username !== '' ? 'username' : 'password'],
      'the user name and password cross the network in clear text: Svc.mqttConfig.tls.enable is false',
    );

  /** The file's text, or undefined (with the problem recorded, or when the key is empty). */
  const read = (key: TlsFileKey): { file: string; text: string } | undefined => {
    const given = tls[key];
    if (given === '') return undefined;
    const result = readPemFile(given, cwd);
    if (result.ok) return result;
    error(['tls', key], result.problem);
    return undefined;
  };

  /** The certificates of a PEM file, each with its validity checked; undefined after a problem. */
  const certificates = (key: 'caFile' | 'certFile', file: string, text: string): X509Certificate[] | undefined => {
    const read = pemCertificates(file, text);
    if (!read.ok) {
      error(['tls', key], read.problem);
      return undefined;
    }
    const parsed = read.certificates;
    for (const certificate of parsed) {
      const subject = certificate.subject.replace(/\n/g, ', ');
      if (Date.parse(certificate.validTo) < now)
        warn(['tls', key], `the certificate "${subject}" in ${JSON.stringify(file)} expired on ${certificate.validTo}`);
      else if (Date.parse(certificate.validFrom) > now)
        warn(
          ['tls', key],
          `the certificate "${subject}" in ${JSON.stringify(file)} is valid only from ${certificate.validFrom}`,
        );
    }
    return parsed;
  };

  const security: MqttSecurity = {
    protocol: tls.enable ? 'mqtts' : 'mqtt',
    clientId: mqttClientId(settings),
    ...(settings.username !== '' ? { username: settings.username } : {}),
    ...(settings.password !== '' ? { password: settings.password } : {}),
    rejectUnauthorized: tls.rejectUnauthorized,
  };
  if (tls.enable) {
    if (tls.certFile !== '' && tls.keyFile === '')
      error(['tls', 'keyFile'], 'must be set: Svc.mqttConfig.tls.certFile is set');
    if (tls.keyFile !== '' && tls.certFile === '')
      error(['tls', 'certFile'], 'must be set: Svc.mqttConfig.tls.keyFile is set');
    const ca = read('caFile');
    if (ca && certificates('caFile', ca.file, ca.text)) security.ca = ca.text;
    const cert = read('certFile');
    const leaf = cert && certificates('certFile', cert.file, cert.text)?.[0];
    const key = read('keyFile');
    const privateKey = key && privateKeyOf(key.file, key.text, (message) => error(['tls', 'keyFile'], message));
    if (cert && leaf && key && privateKey) {
      if (leaf.checkPrivateKey(privateKey.object)) {
        security.cert = cert.text;
        security.key = privateKey.pem;
      } else
        error(
          ['tls', 'keyFile'],
          `the key in ${JSON.stringify(key.file)} does not belong to the certificate in ${JSON.stringify(cert.file)} (Svc.mqttConfig.tls.certFile)`,
        );
    }
  }
  return problems.length > 0 ? { ok: false, problems, warnings } : { ok: true, security, warnings };
}

/** The key of a PEM file, or undefined after `problem` said why it cannot be used. */
function privateKeyOf(
  file: string,
  text: string,
  problem: (message: string) => void,
): { pem: string; object: KeyObject } | undefined {
  const block = pemPrivateKey(text);
  if (block === undefined) {
    problem(`${JSON.stringify(file)} is not a PEM private key (no "-----BEGIN PRIVATE KEY-----" block)`);
    return undefined;
  }
  if (block.encrypted) {
    problem(
      `the key in ${JSON.stringify(file)} is encrypted; Svc takes an unencrypted key file (e.g. openssl pkey -in <encrypted> -out <file>), readable by Svc's user only`,
    );
    return undefined;
  }
  try {
    return { pem: block.pem, object: createPrivateKey({ key: block.pem, format: 'pem' }) };
  } catch (err) {
    problem(`${JSON.stringify(file)}: the private key cannot be read (${opensslReason(err)})`);
    return undefined;
  }
}

/**
 * The start-up check of the MQTT settings for `svc validate-config`, `svc local` and `svc edge`:
 * nothing when MQTT is off, else `mqttSecurity`'s findings.
 */
export function checkMqttSecurity(config: SvcConfig, options: { cwd?: string; now?: number } = {}): RuleFinding[] {
  if (!config.mqttConfig.enable) return [];
  const checked = mqttSecurity(config.mqttConfig, options);
  return checked.ok ? checked.warnings : [...checked.problems, ...checked.warnings];
}
