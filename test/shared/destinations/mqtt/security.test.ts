/**
 * The MQTT keys of the config (`clientId`, `username`, `password`, `tls.*`): the password is a
 * secret (masked in the config view, scrubbed from logs, `${env:…}` and `${aws-…}` references), and
 * every TLS file problem is a config error naming the key, from the start-up check that
 * `svc validate-config`, `svc local` and `svc edge` run (the built `svc` in a child process).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateFiles,
  encryptKey,
  makeCertificates,
  writeCertificates,
} from '../../../../edge-agent/simulate/platform/certs.js';
import { parseConfigText } from '../../../../shared/config/load.js';
import { MASK, maskConfig } from '../../../../shared/config/mask.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import { secretReaderRow } from '../../../../shared/config/secret-refs.js';
import { secretValues } from '../../../../shared/config/secrets.js';
import { checkMqttSecurity, mqttClientId, mqttSecurity } from '../../../../shared/destinations/mqtt/security.js';
import { REPO_ROOT } from '../../../support/build.js';
import { mqttTestSettings } from '../../../support/mqtt-rig.js';

const PASSWORD = 'env-Secret-9f3a';

/** A config with MQTT on and these lines under `Svc.mqttConfig:` (indented by 4). */
function config(lines: string[], env: NodeJS.ProcessEnv = {}): SvcConfig {
  return parseConfigText(
    ['Svc:', '  mqttConfig:', '    enable: true', '    brokerHost: broker.example.com', ...lines, ''].join('\n'),
    'test.yaml',
    env,
  ).config;
}

let certs: CertificateFiles;
/** A second set: its key belongs to none of `certs`' certificates. */
let other: CertificateFiles;
let directory: string;

beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), 'mqtt-security-'));
  certs = writeCertificates(join(directory, 'a'), makeCertificates(['127.0.0.1']));
  other = writeCertificates(join(directory, 'b'), makeCertificates(['127.0.0.1']));
});

const tlsSettings = (tls: Partial<SvcConfig['mqttConfig']['tls']>) =>
  mqttTestSettings(8883, { tls: { enable: true, ...tls } });
const problems = (settings: SvcConfig['mqttConfig']) => {
  const checked = mqttSecurity(settings);
  return checked.ok ? [] : checked.problems.map((p) => `Svc.${p.path.join('.')}: ${p.message}`);
};

describe('mqttConfig.password', () => {
  it('takes ${env:…}, is masked in the config view and is among the secrets scrubbed from logs', () => {
    const c = config(['    username: svc', '    password: ${env:MQTT_PASSWORD}'], { MQTT_PASSWORD: PASSWORD });
    expect(c.mqttConfig.password).toBe(PASSWORD);
    for (const obfuscate of [true, false]) {
      const masked = maskConfig(c, { obfuscate });
      expect(JSON.stringify(masked)).not.toContain(PASSWORD);
      expect(masked).toMatchObject({ mqttConfig: { password: MASK } });
    }
    expect(secretValues(c)).toContain(PASSWORD);
    const checked = mqttSecurity(c.mqttConfig);
    expect(checked.ok && checked.security.password).toBe(PASSWORD);
  });

  it('takes an ${aws-secret:…} reference, fetched by the edge only (no Lambda reads it)', () => {
    const loaded = parseConfigText(
      [
        'Svc:',
        '  mqttConfig:',
        '    enable: true',
        '    username: svc',
        '    password: ${aws-secret:svc/mqtt#password}',
        '',
      ].join('\n'),
      'test.yaml',
      {},
    );
    expect(loaded.secretRefs.map((r) => r.path.join('.'))).toEqual(['Svc.mqttConfig.password']);
    expect(secretReaderRow(['Svc', 'mqttConfig', 'password'])).toMatchObject({
      key: 'mqttConfig.password',
      reader: undefined,
    });
  });

  it('needs a user name; with no TLS, credentials are a warning (clear text)', () => {
    expect(problems(mqttTestSettings(1883, { password: PASSWORD }))).toEqual([
      'Svc.mqttConfig.password: is set but Svc.mqttConfig.username is empty: MQTT sends a password only with a user name',
    ]);
    expect(checkMqttSecurity(config(['    username: svc', `    password: ${PASSWORD}`]))).toEqual([
      {
        severity: 'warning',
        path: ['mqttConfig', 'username'],
        message: 'the user name and password cross the network in clear text: Svc.mqttConfig.tls.enable is false',
      },
    ]);
  });
});

describe('mqttConfig.clientId', () => {
  it('defaults to svc-<host name>, the same at every start; a configured one wins', () => {
    expect(mqttClientId({ clientId: '' })).toBe(`svc-${hostname()}`);
    expect(config([]).mqttConfig.clientId).toBe('');
    expect(mqttClientId(config(['    clientId: edge-7']).mqttConfig)).toBe('edge-7');
  });
});

describe('mqttConfig.tls files', () => {
  it('today’s defaults: plain mqtt, anonymous, nothing read', () => {
    const c = config([]).mqttConfig;
    expect(c.tls).toEqual({ enable: false, caFile: '', certFile: '', keyFile: '', rejectUnauthorized: true });
    expect(mqttSecurity(c)).toEqual({
      ok: true,
      security: { protocol: 'mqtt', clientId: `svc-${hostname()}`, rejectUnauthorized: true },
      warnings: [],
    });
    // Files are not read while TLS is off, nor while MQTT is off.
    expect(problems(mqttTestSettings(1883, { tls: { caFile: '/no/such/ca.pem' } }))).toEqual([]);
    expect(
      checkMqttSecurity(
        parseConfigText(
          'Svc:\n  mqttConfig:\n    tls:\n      enable: true\n      caFile: /no/such/ca.pem\n',
          't.yaml',
          {},
        ).config,
      ),
    ).toEqual([]);
  });

  it('reads the CA, the certificate and its key as the connection options', () => {
    const checked = mqttSecurity(
      tlsSettings({ caFile: certs.clientCertCA, certFile: certs.clientCert, keyFile: certs.clientCertKey }),
    );
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.security).toMatchObject({ protocol: 'mqtts', rejectUnauthorized: true });
    expect(checked.security.ca).toContain('-----BEGIN CERTIFICATE-----');
    expect(checked.security.cert).toContain('-----BEGIN CERTIFICATE-----');
    expect(checked.security.key).toContain('-----BEGIN PRIVATE KEY-----');
  });

  it('names the key, the file and the reason of every problem', () => {
    const notPem = join(directory, 'not.pem');
    writeFileSync(notPem, 'hello\n');
    const encrypted = join(directory, 'encrypted_key.pem');
    writeFileSync(encrypted, encryptKey(readFileSync(certs.clientCertKey, 'utf8'), 'pass'));
    expect(problems(tlsSettings({ caFile: join(directory, 'missing.pem') }))).toEqual([
      `Svc.mqttConfig.tls.caFile: cannot read ${JSON.stringify(join(directory, 'missing.pem'))}: no such file`,
    ]);
    expect(problems(tlsSettings({ caFile: notPem }))).toEqual([
      `Svc.mqttConfig.tls.caFile: ${JSON.stringify(notPem)} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)`,
    ]);
    expect(problems(tlsSettings({ certFile: certs.clientCert }))).toEqual([
      'Svc.mqttConfig.tls.keyFile: must be set: Svc.mqttConfig.tls.certFile is set',
    ]);
    expect(problems(tlsSettings({ keyFile: certs.clientCertKey }))).toEqual([
      'Svc.mqttConfig.tls.certFile: must be set: Svc.mqttConfig.tls.keyFile is set',
    ]);
    expect(problems(tlsSettings({ certFile: certs.clientCert, keyFile: other.clientCertKey }))).toEqual([
      `Svc.mqttConfig.tls.keyFile: the key in ${JSON.stringify(other.clientCertKey)} does not belong to the certificate in ${JSON.stringify(certs.clientCert)} (Svc.mqttConfig.tls.certFile)`,
    ]);
    expect(problems(tlsSettings({ certFile: certs.clientCert, keyFile: encrypted }))).toEqual([
      expect.stringMatching(/^Svc\.mqttConfig\.tls\.keyFile: the key in .*encrypted_key\.pem" is encrypted/),
    ]);
    expect(problems(tlsSettings({ certFile: certs.clientCert, keyFile: notPem }))).toEqual([
      `Svc.mqttConfig.tls.keyFile: ${JSON.stringify(notPem)} is not a PEM private key (no "-----BEGIN PRIVATE KEY-----" block)`,
    ]);
  });
});

describe('svc validate-config and svc edge (the built svc)', () => {
  const svc = (args: string[]) =>
    spawnSync(join(REPO_ROOT, 'node_modules/.bin/svc'), args, {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, SVC_CONFIG: '' },
      timeout: 20_000,
    });

  it('report a TLS file that cannot be read as a config error naming the key (exit 1); a good one is valid', () => {
    const file = join(directory, 'svc.yaml');
    const yaml = (keyFile: string) =>
      [
        'Svc:',
        '  mqttConfig:',
        '    enable: true',
        '    tls:',
        '      enable: true',
        `      caFile: ${certs.clientCertCA}`,
        `      certFile: ${certs.clientCert}`,
        `      keyFile: ${keyFile}`,
        '',
      ].join('\n');
    writeFileSync(file, yaml(join(directory, 'gone_key.pem')));
    for (const command of ['validate-config', 'edge']) {
      const run = svc([command, '--config', file]);
      expect(run.status, `${command}: ${run.stderr}`).toBe(1);
      expect(run.stderr).toContain('Svc.mqttConfig.tls.keyFile');
      expect(run.stderr).toContain('gone_key.pem');
    }
    writeFileSync(file, yaml(certs.clientCertKey));
    const valid = svc(['validate-config', '--config', file]);
    expect(valid.status, valid.stderr).toBe(0);
    expect(valid.stdout).toContain('configuration is valid');
  });
});
