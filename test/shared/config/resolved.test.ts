/**
 * The resolved config document: made at synth by the one producer (infra/app.ts
 * configDocumentForSynth → shared/config/resolved.ts) and read at cold start by the functions' lean
 * loader (shared/config/resolved-load.ts). The function gets the config the full YAML loader would
 * give it in the same environment; a missing variable, a value its key does not take, and a
 * document of another format version fail with a message naming the key or the version. Secrets
 * come from the local Secrets Manager / SSM stand-in (test/support/aws-secrets.ts: no emulator of
 * either service exists here).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SYNTH_PLACEHOLDER } from '../../../infra/app.js';
import { ConfigError } from '../../../shared/config/errors.js';
import { loadConfigFile } from '../../../shared/config/load.js';
import { RESOLVED_CONFIG_FORMAT, RESOLVED_CONFIG_VERSION } from '../../../shared/config/resolved.js';
import { loadResolvedConfig } from '../../../shared/config/resolved-load.js';
import { secretReader } from '../../../shared/config/secret-refs.js';
import { resolveConfigSecrets, type SecretClientConfig } from '../../../shared/secrets/fetch.js';
import { type SecretStores, startSecretStores } from '../../support/aws-secrets.js';
import { REPO_ROOT } from '../../support/build.js';
import { bundledConfigFiles } from '../../support/config-document.js';

let aws: SecretStores;
let dir: string;
let client: SecretClientConfig;

/** Variables a deployed function has (the stack's names), with the values of one deployment. */
const ENV = { SVC_DESTINATION: 'tsdb', AWS_LAMBDA_FUNCTION_NAME: 'tsdb.internal.example.com', AWS_REGION: 'eu-west-1' };

/** A config with defaults to fill in, two `${env:…}` values and secrets of two readers. */
const CONFIG = [
  'Svc:',
  '  logLevel: warn',
  '  tsdbConfig:',
  '    enable: true',
  '    host: ${env:AWS_LAMBDA_FUNCTION_NAME}',
  '    v1Config:',
  '      auth:',
  '        enable: true',
  '        username: ${env:SVC_DESTINATION}',
  '        password: ${aws-secret:svc/tsdb#password}',
  '  auditEvents:',
  '    enable: true',
  '    apiToken: ${aws-ssm:/svc/audit/token}',
  '    destination:',
  '      enable: true',
  '      type: tsdb',
  '',
].join('\n');

beforeAll(async () => {
  aws = await startSecretStores();
  dir = mkdtempSync(join(tmpdir(), 'svc-resolved-'));
  client = {
    endpoint: aws.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  };
  aws.putSecret('svc/tsdb', JSON.stringify({ password: 'tsdb-pass-from-the-store' }));
  aws.putParameter('/svc/audit/token', 'audit-token-from-ssm', 'SecureString');
});
afterAll(async () => aws?.stop());
beforeEach(() => aws.reset());

const documentOf = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

/** The issues of the ConfigError `promise` rejects with, as formatted lines. */
async function problems(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error instanceof ConfigError ? error.message : '';
}

describe('the resolved config document', () => {
  it('holds the validated config with defaults, the references as written, never a synth placeholder', () => {
    const { file, source } = bundledConfigFiles(CONFIG, dir);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(SYNTH_PLACEHOLDER);
    const document = documentOf(file);
    expect(document).toMatchObject({ format: RESOLVED_CONFIG_FORMAT, version: RESOLVED_CONFIG_VERSION, source });
    expect(document['references']).toEqual([
      { path: ['Svc', 'tsdbConfig', 'host'], text: '${env:AWS_LAMBDA_FUNCTION_NAME}', line: 5, column: 11 },
      {
        path: ['Svc', 'tsdbConfig', 'v1Config', 'auth', 'username'],
        text: '${env:SVC_DESTINATION}',
        line: 9,
        column: 19,
      },
      {
        path: ['Svc', 'tsdbConfig', 'v1Config', 'auth', 'password'],
        text: '${aws-secret:svc/tsdb#password}',
        line: 10,
        column: 19,
      },
      { path: ['Svc', 'auditEvents', 'apiToken'], text: '${aws-ssm:/svc/audit/token}', line: 13, column: 15 },
    ]);
    // Defaults are applied.
    expect(document['config']).toMatchObject({
      logLevel: 'warn',
      tsdbConfig: { port: 8086, host: '${env:AWS_LAMBDA_FUNCTION_NAME}' },
      heartbeat: { enable: false, remoteURL: '' },
    });
  });

  it('gives a function the config the full loader gives in the same environment, secrets fetched as granted', async () => {
    const { file, source } = bundledConfigFiles(CONFIG, dir);
    const full = await resolveConfigSecrets(loadConfigFile(source, 'option', ENV), { clientConfig: client, env: ENV });
    const lean = await loadResolvedConfig(file, { env: ENV, wanted: () => true, fetch: { clientConfig: client } });
    expect(lean.config).toEqual(full.config);
    expect(lean.config.tsdbConfig.v1Config.auth.password).toBe('tsdb-pass-from-the-store');
    expect(lean.source).toBe(source);

    // A function fetches only what it is granted; the other references stay as written, as in the full loader.
    aws.reset();
    const tsdbOnly = (path: readonly (string | number)[]) => secretReader(path) === 'tsdb';
    const fullTsdb = await resolveConfigSecrets(loadConfigFile(source, 'option', ENV), {
      clientConfig: client,
      env: ENV,
      wanted: (at) => tsdbOnly(at.path),
    });
    const leanTsdb = await loadResolvedConfig(file, { env: ENV, wanted: tsdbOnly, fetch: { clientConfig: client } });
    expect(leanTsdb.config).toEqual(fullTsdb.config);
    expect(leanTsdb.config.auditEvents.apiToken).toBe('${aws-ssm:/svc/audit/token}');
  });

  it('gives the config of every key (config/full.yaml) unchanged', async () => {
    const { file, source } = bundledConfigFiles(readFileSync(join(REPO_ROOT, 'config/full.yaml'), 'utf8'), dir);
    expect((await loadResolvedConfig(file, { env: {} })).config).toEqual(loadConfigFile(source, 'option', {}).config);
  });

  it('fails naming the key at its line when a variable is missing', async () => {
    const { file, source } = bundledConfigFiles(CONFIG, dir);
    const { AWS_LAMBDA_FUNCTION_NAME: _, ...without } = ENV;
    const message = await problems(loadResolvedConfig(file, { env: without }));
    expect(message).toContain(
      `${source}:5:11 Svc.tsdbConfig.host: environment variable AWS_LAMBDA_FUNCTION_NAME is not set (referenced as \${env:AWS_LAMBDA_FUNCTION_NAME})`,
    );
    expect(aws.requests).toEqual([]);
  });

  it('fails naming the key when a substituted value does not fit its key, and never shows a secret', async () => {
    const { file, source } = bundledConfigFiles(CONFIG, dir);
    const message = await problems(loadResolvedConfig(file, { env: { ...ENV, AWS_LAMBDA_FUNCTION_NAME: '' } }));
    expect(message).toContain(`${source}:5:11 Svc.tsdbConfig.host: must be a non-empty string (got "")`);

    const scramble = bundledConfigFiles(
      [
        'Svc:',
        '  monsaas:',
        '    enable: true',
        '    event:',
        '      url: https://events.example.com/',
        '    metric:',
        '      url: https://metrics.example.com/metric/v1',
        '  thirdPartyToolsCredentials:',
        '    monsaas:',
        '      - {accountName: ops, insertApiKey: k, accountId: "1"}',
        '  userEvents:',
        '    enable: true',
        '    sendToMonSaas:',
        '      enable: true',
        '      destinationAccount: [ops]',
        '      scrambleSecret: ${env:AWS_LAMBDA_FUNCTION_NAME}',
        '',
      ].join('\n'),
      dir,
    );
    const short = await problems(
      loadResolvedConfig(scramble.file, { env: { AWS_LAMBDA_FUNCTION_NAME: 'too-short-key' } }),
    );
    expect(short).toContain(
      `${scramble.source}:16:23 Svc.userEvents.sendToMonSaas.scrambleSecret: must be empty or at least 16 characters (got a text of 13 characters; the value of a secret is not shown)`,
    );
    expect(short).not.toContain('too-short-key');
  });

  it('refuses a secret reference that comes from a variable (the stack grants only those in the config)', async () => {
    const { file } = bundledConfigFiles(CONFIG, dir);
    const message = await problems(
      loadResolvedConfig(file, { env: { ...ENV, SVC_DESTINATION: '${aws-secret:svc/other}' } }),
    );
    expect(message).toContain(
      'Svc.tsdbConfig.v1Config.auth.username: environment variable SVC_DESTINATION holds a secret reference',
    );
  });

  it('refuses a document of another format version, another format, or a damaged one', async () => {
    const { file } = bundledConfigFiles(CONFIG, dir);
    const write = (name: string, value: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
      return path;
    };
    const document = documentOf(file);
    const next = write('v2.json', { ...document, version: RESOLVED_CONFIG_VERSION + 1 });
    expect(await problems(loadResolvedConfig(next, { env: ENV }))).toContain(
      `${next} the config document has format version ${RESOLVED_CONFIG_VERSION + 1}; this function reads version ${RESOLVED_CONFIG_VERSION}: the bundle's code and config come from different Svc versions (deploy again)`,
    );
    expect(await problems(loadResolvedConfig(write('yaml.json', 'Svc: {}\n'), { env: ENV }))).toContain(
      'the bundled config document is not JSON',
    );
    expect(await problems(loadResolvedConfig(write('other.json', { Svc: {} }), { env: ENV }))).toContain(
      'is not a resolved config document of Svc',
    );
    expect(
      await problems(
        loadResolvedConfig(write('damaged.json', { ...document, references: [{ path: ['Svc'], text: 'x' }] }), {
          env: ENV,
        }),
      ),
    ).toContain('the config document is damaged at references[0].line: is missing (deploy again)');
    expect(await problems(loadResolvedConfig(join(dir, 'missing.json'), { env: ENV }))).toContain(
      'cannot read the bundled config document: no such file',
    );
  });

  it('refuses a config its own schema does not take (a hand-edited or stale document)', async () => {
    const { file } = bundledConfigFiles(CONFIG, dir);
    const document = documentOf(file);
    const edited = join(dir, 'edited.json');
    writeFileSync(
      edited,
      JSON.stringify({ ...document, config: { ...(document['config'] as Record<string, unknown>), logLevel: 'loud' } }),
    );
    expect(await problems(loadResolvedConfig(edited, { env: ENV }))).toContain(
      "Svc.logLevel: must be one of silly, debug, verbose, info, warn, error (the bundled document does not match this function's config schema: deploy again)",
    );
  });
});
