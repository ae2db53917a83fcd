/**
 * Secret references in the config (`${aws-secret:…}`, `${aws-ssm:…}`): the syntax the loader checks,
 * where they may stand, what it lists for fetching and granting, and the table of which function
 * reads which secret key.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, formatIssue } from '../../../shared/config/errors.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { ConfigFileSchema } from '../../../shared/config/schema.js';
import { parseSecretRef, SECRET_READERS, secretReader } from '../../../shared/config/secret-refs.js';
import { displayPath, visitSchema } from '../../../shared/config/walk.js';

const parse = (rows: string[], env: NodeJS.ProcessEnv = {}, secrets?: Map<string, string>) =>
  parseConfigText(['Svc:', ...rows.map((r) => `  ${r}`), ''].join('\n'), 'svc.yaml', env, secrets ? { secrets } : {});

function problems(rows: string[]): string[] {
  try {
    parse(rows);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map(formatIssue);
    throw err;
  }
}

const V2 = (token: string) => [
  'tsdbConfig:',
  '  enable: true',
  '  version: 2',
  '  v2Config:',
  '    org: o',
  `    token: "${token}"`,
];

describe('the reference syntax', () => {
  it('reads secrets and parameters by name or ARN, with an optional JSON key', () => {
    expect(parseSecretRef('${aws-secret:svc/tsdb}')).toEqual({
      ok: true,
      ref: { store: 'secret', id: 'svc/tsdb', jsonKey: undefined, region: undefined, text: '${aws-secret:svc/tsdb}' },
    });
    expect(parseSecretRef('${aws-secret:svc/tsdb#password}')).toMatchObject({
      ok: true,
      ref: { id: 'svc/tsdb', jsonKey: 'password' },
    });
    expect(
      parseSecretRef('${aws-secret:arn:aws:secretsmanager:eu-west-1:123456789012:secret:svc/tsdb-AbCdEf#password}'),
    ).toMatchObject({
      ok: true,
      ref: {
        store: 'secret',
        id: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:svc/tsdb-AbCdEf',
        jsonKey: 'password',
        region: 'eu-west-1',
      },
    });
    expect(parseSecretRef('${aws-ssm:/svc/tsdb/token}')).toMatchObject({
      ok: true,
      ref: { store: 'ssm', id: '/svc/tsdb/token', region: undefined },
    });
    expect(parseSecretRef('${aws-ssm:arn:aws-cn:ssm:cn-north-1:123456789012:parameter/svc/token}')).toMatchObject({
      ok: true,
      ref: { store: 'ssm', region: 'cn-north-1' },
    });
  });

  it('refuses what names no secret or parameter', () => {
    expect(parseSecretRef('${aws-secret:}')).toMatchObject({ ok: false });
    expect(parseSecretRef('${aws-secret:svc tsdb}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('names no valid secret'),
    });
    expect(parseSecretRef('${aws-ssm:/svc/a b}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('names no valid parameter'),
    });
    expect(parseSecretRef('${aws-secrets:svc/tsdb}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('${aws-secret:<name or ARN>}'),
    });
    expect(parseSecretRef('${aws-secret:svc/tsdb')).toMatchObject({ ok: false });
  });
});

describe('the loader', () => {
  it('lists the references of the sections in use, with where they are, and keeps them as written', () => {
    const loaded = parse([...V2('${aws-ssm:/svc/tsdb/token}'), 'auditEvents:', '  apiToken: ${aws-secret:svc/audit}']);
    // auditEvents is off: its reference is a placeholder, neither checked nor listed.
    expect(loaded.secretRefs).toEqual([
      {
        path: ['Svc', 'tsdbConfig', 'v2Config', 'token'],
        line: 7,
        column: 14,
        ref: expect.objectContaining({ text: '${aws-ssm:/svc/tsdb/token}' }),
      },
    ]);
    expect(loaded.config.tsdbConfig.v2Config.token).toBe('${aws-ssm:/svc/tsdb/token}');
    expect(loaded.secretLiterals).toEqual([]);
  });

  it('puts in the values it is given, validated like any value', () => {
    const loaded = parse(V2('${aws-ssm:/svc/tsdb/token}'), {}, new Map([['${aws-ssm:/svc/tsdb/token}', 'the-token']]));
    expect(loaded.config.tsdbConfig.v2Config.token).toBe('the-token');
    expect(loaded.secretRefs).toHaveLength(1);
  });

  it('lists literal secrets in use, but not values from the environment or empty ones', () => {
    const loaded = parse(
      [
        ...V2('literal-token'),
        'auditEvents:',
        '  enable: true',
        '  apiToken: ${env:TOKEN}',
        'cert:',
        '  clientCertPassphrase: ""',
      ],
      { TOKEN: 't' },
    );
    expect(loaded.secretLiterals).toEqual([{ path: ['Svc', 'tsdbConfig', 'v2Config', 'token'], line: 7, column: 14 }]);
  });

  it('refuses a reference outside a secret key and a malformed one, at the key', () => {
    expect(
      problems([
        'tsdbConfig:',
        '  enable: true',
        '  host: ${aws-ssm:/svc/host}',
        ...V2('${aws-secret:svc tsdb}').slice(2),
      ]),
    ).toEqual([
      'svc.yaml:4:11 Svc.tsdbConfig.host: a secret reference (${aws-…}) may stand only in a key marked secret (the secrets of docs/configuration.md); this key takes its value as written',
      "svc.yaml:8:14 Svc.tsdbConfig.v2Config.token: the secret reference names no valid secret: a Secrets Manager name has letters, digits and /_+=.@- only, or give the secret's full ARN",
    ]);
  });

  it('accepts references in the values of a secret mapping (server headers)', () => {
    const loaded = parse([
      'serversToMonitor:',
      '  servers:',
      '    - host: "n1:4747"',
      '      serverName: n1',
      '      headers:',
      '        X-Api-Key: ${aws-secret:svc/header}',
    ]);
    expect(loaded.secretRefs.map((r) => displayPath(r.path))).toEqual([
      'Svc.serversToMonitor.servers[0].headers.X-Api-Key',
    ]);
  });
});

describe('SECRET_READERS', () => {
  it('says for every secret key of the schema which function reads it (or that none does)', () => {
    const secretKeys: string[] = [];
    visitSchema(ConfigFileSchema, (node, path) => {
      const below = path.slice(1).map((seg) => (seg === -1 ? '[]' : seg));
      if (node['x-secret']) secretKeys.push(below.join('.').replaceAll('.[]', '[]'));
      if (node['x-secret-values']) secretKeys.push(`${below.join('.').replaceAll('.[]', '[]')}.*`);
    });
    expect(SECRET_READERS.map((row) => row.key).sort()).toEqual(secretKeys.sort());
  });

  it('maps the keys to the audit function and the writers that use them', () => {
    expect(secretReader(['Svc', 'auditEvents', 'apiToken'])).toBe('audit');
    expect(secretReader(['Svc', 'tsdbConfig', 'v1Config', 'auth', 'password'])).toBe('tsdb');
    expect(secretReader(['Svc', 'tsdbConfig', 'v3Config', 'token'])).toBe('tsdb');
    expect(secretReader(['Svc', 'thirdPartyToolsCredentials', 'monsaas', 3, 'insertApiKey'])).toBe('monsaas');
    expect(secretReader(['Svc', 'cert', 'clientCertPassphrase'])).toBeUndefined();
    expect(secretReader(['Svc', 'tsdbConfig', 'host'])).toBeUndefined();
  });
});
