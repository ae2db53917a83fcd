/**
 * A secret reference end to end: the built writer Lambda entry (functions/writers/tsdb.ts) cold
 * starts as AWS runs it, in a fresh Node process, with the tsdb password in the bundled config as
 * `${aws-secret:svc/tsdb#password}`. It fetches it from the local Secrets Manager stand-in
 * (test/support/aws-secrets.ts: no emulator of the service exists here) once, writes to a real
 * influxd with authentication on across two invocations, and never logs the value. A reference
 * that cannot be fetched fails the cold start naming the key and the reference.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditQueued } from '../support/audit.js';
import { type SecretStores, startSecretStores } from '../support/aws-secrets.js';
import { REPO_ROOT } from '../support/build.js';
import { bundledConfigFiles } from '../support/config-document.js';
import { type InfluxdHandle, query, startInfluxd } from '../support/influxd.js';
import { trackChild } from '../support/ports.js';
import { packedRecord } from '../support/sqs-record.js';

const DB = 'secret_lambda';
const PASSWORD = 'tsdb pass from secrets manager';

const record = (messageId: string, timeNs: string): SQSRecord =>
  packedRecord(messageId, [{ ...auditQueued(), timeNs }]);

/** Runs `script` (an ES module) in a fresh Node process with the Lambda's environment, the SDK pointed at the stand-in. */
async function run(
  script: string,
  configFile: string,
  aws: SecretStores,
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      PATH: process.env['PATH'] ?? '',
      SVC_CONFIG: configFile,
      SVC_DESTINATION: 'tsdb',
      SVC_CLAIM_CHECK_BUCKET: 'claims',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.url,
      AWS_ENDPOINT_URL_SSM: aws.url,
      ...extra,
    },
  });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

describe('writer Lambda with the tsdb password in Secrets Manager', () => {
  let influx: InfluxdHandle;
  let aws: SecretStores;
  let dir: string;
  /** The bundled config document (as synth makes it) and the YAML it was made from. */
  const configFiles = (password: string) =>
    bundledConfigFiles(
      [
        'Svc:',
        '  tsdbConfig:',
        '    enable: true',
        '    host: 127.0.0.1',
        `    port: ${influx.port}`,
        '    v1Config:',
        '      auth:',
        '        enable: true',
        '        username: admin',
        `        password: ${password}`,
        `      dbName: ${DB}`,
        '      retentionPolicy:',
        '        duration: 5000w',
        '  auditEvents:',
        '    enable: true',
        '    destination:',
        '      enable: true',
        '      type: tsdb',
        '',
      ].join('\n'),
      dir,
    );
  const config = (password: string) => configFiles(password).file;

  beforeAll(async () => {
    [influx, aws] = await Promise.all([startInfluxd(), startSecretStores()]);
    dir = mkdtempSync(join(tmpdir(), 'lambda-secrets-'));
    await query(influx, `CREATE USER admin WITH PASSWORD '${PASSWORD}' WITH ALL PRIVILEGES`);
    writeFileSync(
      influx.configPath,
      readFileSync(influx.configPath, 'utf8').replace('auth-enabled = false', 'auth-enabled = true'),
    );
    await influx.restart();
    aws.putSecret('svc/tsdb', JSON.stringify({ username: 'admin', password: PASSWORD }));
  });
  afterAll(async () => Promise.all([influx?.stop(), aws?.stop()]));
  beforeEach(() => aws.reset());

  it('fetches the password once per cold start and writes with it on every invocation', async () => {
    const entry = join(REPO_ROOT, 'dist/functions/writers/tsdb.js');
    const events: SQSEvent[] = [
      { Records: [record('m1', '1710233120000000001')] },
      { Records: [record('m2', '1710233120000000002')] },
    ];
    const script = `const { handler } = await import(${JSON.stringify(entry)});
const out = [];
for (const event of JSON.parse(process.env.TEST_EVENTS)) out.push(await handler(event));
process.stderr.write('RESPONSES ' + JSON.stringify(out) + '\\n');`;
    const { code, stdout, stderr } = await run(script, config('${aws-secret:svc/tsdb#password}'), aws, {
      TEST_EVENTS: JSON.stringify(events),
    });
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('RESPONSES [{"batchItemFailures":[]},{"batchItemFailures":[]}]');
    // Two invocations, one fetch.
    expect(aws.requests).toEqual([
      {
        target: 'secretsmanager.GetSecretValue',
        body: { SecretId: 'svc/tsdb' },
        region: 'us-east-1',
        service: 'secretsmanager',
      },
    ]);
    // Authentication is on: the test reads with the same credentials.
    const params = new URLSearchParams({ db: DB, q: 'SHOW SERIES CARDINALITY' });
    const anonymous = await fetch(`${influx.url}/query?${params.toString()}`);
    expect(anonymous.status).toBe(401);
    params.set('q', 'SELECT * FROM audit_events');
    const res = await fetch(`${influx.url}/query?${params.toString()}`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` },
    });
    const rows =
      ((await res.json()) as { results: { series?: { values: unknown[][] }[] }[] }).results[0]?.series?.[0]?.values ??
      [];
    expect(rows).toHaveLength(2);
    expect(stdout).not.toContain(PASSWORD);
  });

  it('scrubs the fetched value from every log line', async () => {
    const runtime = join(REPO_ROOT, 'dist/functions/lambda-runtime.js');
    const script = `const { lambdaRuntime } = await import(${JSON.stringify(runtime)});
const { logger } = await lambdaRuntime('tsdb');
logger.warn({}, 'a message that happens to quote ' + ${JSON.stringify(PASSWORD)});`;
    const { code, stdout, stderr } = await run(script, config('${aws-secret:svc/tsdb#password}'), aws);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('a message that happens to quote [REDACTED]');
    expect(stdout).not.toContain(PASSWORD);
  });

  it('fails the cold start naming the key and the reference when the secret cannot be fetched', async () => {
    const entry = join(REPO_ROOT, 'dist/functions/writers/tsdb.js');
    const { file, source } = configFiles('${aws-secret:svc/tsdb#pasword}');
    const { code, stdout, stderr } = await run(`await import(${JSON.stringify(entry)});`, file, aws);
    expect(code).not.toBe(0);
    // Placed at the key in the YAML file the operator wrote (the document keeps each reference's place).
    expect(stderr).toContain(
      `${source}:10:19 Svc.tsdbConfig.v1Config.auth.password: cannot fetch \${aws-secret:svc/tsdb#pasword}: the secret has no key "pasword"`,
    );
    expect(stderr + stdout).not.toContain(PASSWORD);
    expect(aws.requests).toHaveLength(1);
  });
});
