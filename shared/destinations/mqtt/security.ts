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
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { hostname } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { RuleFinding } from '../../config/errors.js';
import type { SvcConfig } from '../../config/schema.js';
import { readRegularFile } from '../../util/files.js';

export type MqttSettings = SvcConfig['mqttConfig'];

/** Largest PEM file read: a certificate or key is a few KB, a CA bundle a few hundred. */
export const MAX_MQTT_PEM_BYTES = 1_048_576;

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

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const PRIVATE_KEY_BLOCK = /-----BEGIN ((?:RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY)-----[\s\S]*?-----END \1-----/;

/** The reason of an OpenSSL error without its prefixes (`error:1E08010C:DECODER routines::unsupported` → `unsupported`). */
function shortReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (
    message
      .split(':')
      .filter((part) => part.trim() !== '')
      .pop() ?? message
  );
}

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
    const file = isAbsolute(given) ? given : resolve(cwd, given);
    const result = readRegularFile(file, MAX_MQTT_PEM_BYTES);
    if (result.ok) return { file, text: result.bytes.toString('latin1') };
    error(
      ['tls', key],
      result.tooLarge !== undefined
        ? `${JSON.stringify(file)} has ${result.tooLarge} bytes; a PEM certificate or key file is far smaller (at most ${MAX_MQTT_PEM_BYTES} bytes are read)`
        : `cannot read ${JSON.stringify(file)}: ${result.reason}`,
    );
    return undefined;
  };

  /** The certificates of a PEM file, each with its validity checked; undefined after a problem. */
  const certificates = (key: 'caFile' | 'certFile', file: string, text: string): X509Certificate[] | undefined => {
    const blocks = text.match(CERTIFICATE_BLOCK) ?? [];
    if (blocks.length === 0) {
      error(['tls', key], `${JSON.stringify(file)} holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`);
      return undefined;
    }
    const parsed: X509Certificate[] = [];
    for (const [index, block] of blocks.entries()) {
      try {
        parsed.push(new X509Certificate(block));
      } catch (err) {
        error(['tls', key], `${JSON.stringify(file)}: certificate ${index + 1} cannot be parsed (${shortReason(err)})`);
        return undefined;
      }
    }
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
  const block = PRIVATE_KEY_BLOCK.exec(text);
  if (block === null) {
    problem(`${JSON.stringify(file)} holds no PEM private key ("-----BEGIN PRIVATE KEY-----")`);
    return undefined;
  }
  if (block[1] === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(block[0])) {
    problem(
      `the key in ${JSON.stringify(file)} is encrypted; Svc takes an unencrypted key file (e.g. openssl pkey -in <encrypted> -out <file>), readable by Svc's user only`,
    );
    return undefined;
  }
  try {
    return { pem: block[0], object: createPrivateKey({ key: block[0], format: 'pem' }) };
  } catch (err) {
    problem(`${JSON.stringify(file)}: the private key cannot be read (${shortReason(err)})`);
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
