/**
 * What each Lambda bundle holds, bundled by esbuild with the stack's options
 * (infra/constructs/esbuild-options.ts): each writer only its own destination's code and client
 * library, the audit function no writer code, no function the pretty printer or log-file rotation,
 * and nothing left outside the bundle but Node's modules and the AWS SDK clients the Lambda runtime
 * provides. Every function has the S3 client: the writers read claim checks, the audit function
 * stores them (a request body may pass the SQS message limit: maxBodyBytes goes up to 10 MiB). The
 * audit function reaches SQS and DynamoDB with Svc's lean client (shared/aws/), not the SDK, and
 * imports the S3 client only at its first claim check.
 * Sizes and init times are bench/bundles.mjs's (tests assert no speed).
 */
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENTRIES } from '../../functions/contract.js';
import { lambdaEsbuildOptions, SECRET_FETCH_ENTRY } from '../../infra/constructs/esbuild-options.js';
import { REPO_ROOT } from '../support/build.js';

interface Bundle {
  inputs: string[];
  externals: string[];
  /** The external modules imported with a static import (loaded at cold start). */
  staticExternals: string[];
}

async function bundle(entry: string): Promise<Bundle> {
  const result = await build({
    ...lambdaEsbuildOptions(entry, join(REPO_ROOT, 'node_modules/.cache/svc-bundle-test/index.mjs')),
    absWorkingDir: REPO_ROOT,
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  if (!output) throw new Error(`no output for ${entry}`);
  const externals = (imports: typeof output.imports) => [
    ...new Set(imports.filter((i) => i.external === true).map((i) => i.path)),
  ];
  return {
    inputs: Object.keys(output.inputs),
    externals: externals(output.imports),
    staticExternals: externals(output.imports.filter((i) => i.kind === 'import-statement')),
  };
}

/** The inputs matching any pattern: what a bundle must not hold. */
const holding = (b: Bundle, patterns: RegExp[]) => b.inputs.filter((path) => patterns.some((p) => p.test(path)));

const TSDB_CODE = [
  /node_modules\/(influx|@influxdata)\//,
  /shared\/destinations\/tsdb\/(writer|destination|client|v[123]|http|mappers|build)\.ts$/,
];
const PARQUET_CODE = [/node_modules\/hyparquet/, /shared\/destinations\/files\//];
const MONSAAS_CODE = [/shared\/destinations\/monsaas\/(client|destination|build)\.ts$/];
const EDGE_ONLY_CODE = [/node_modules\/mqtt/, /shared\/destinations\/(mqtt|json)\//, /tablefile/];
const CONSOLE_AND_FILE_LOGGING = [/node_modules\/(pino-pretty|pino-roll|date-fns)\//];

describe('Lambda bundles: each imports only what it uses', () => {
  const bundles = new Map<string, Bundle>();
  beforeAll(async () => {
    for (const [name, entry] of [['audit', ENTRIES.audit], ...Object.entries(ENTRIES.writers)] as const)
      bundles.set(name, await bundle(entry));
  }, 120_000);
  const get = (name: string): Bundle => bundles.get(name) ?? { inputs: [], externals: [], staticExternals: [] };

  it('the tsdb writer holds no parquet, monsaas or edge-only code', () => {
    expect(holding(get('tsdb'), TSDB_CODE).length).toBeGreaterThan(0);
    expect(holding(get('tsdb'), [...PARQUET_CODE, ...MONSAAS_CODE, ...EDGE_ONLY_CODE])).toEqual([]);
  });

  it('the parquet writer holds no tsdb, monsaas or edge-only code', () => {
    expect(holding(get('parquet'), PARQUET_CODE).length).toBeGreaterThan(0);
    expect(holding(get('parquet'), [...TSDB_CODE, ...MONSAAS_CODE, ...EDGE_ONLY_CODE])).toEqual([]);
  });

  it('the monsaas writer holds no tsdb, parquet or edge-only code', () => {
    expect(holding(get('monsaas'), MONSAAS_CODE).length).toBeGreaterThan(0);
    expect(holding(get('monsaas'), [...TSDB_CODE, ...PARQUET_CODE, ...EDGE_ONLY_CODE])).toEqual([]);
  });

  it('the audit function holds no writer code', () => {
    expect(
      holding(get('audit'), [
        ...TSDB_CODE,
        ...PARQUET_CODE,
        ...MONSAAS_CODE,
        ...EDGE_ONLY_CODE,
        /shared\/destinations\/handler\.ts$/,
      ]),
    ).toEqual([]);
  });

  it('no function holds the YAML config loader: they read the resolved config document synth made', () => {
    // (rules.ts may be in: the writers' builder reads auditDestinationTypes from it.)
    const loader = [/node_modules\/(yaml|@breejs\/later)\//, /shared\/config\/(load|read|validate|prune)\.ts$/];
    for (const [name, b] of bundles) {
      expect(holding(b, loader), name).toEqual([]);
      expect(holding(b, [/shared\/config\/resolved-load\.ts$/]), name).toHaveLength(1);
    }
  });

  it('no function holds the pretty printer or log-file rotation', () => {
    for (const [name, b] of bundles) expect(holding(b, CONSOLE_AND_FILE_LOGGING), name).toEqual([]);
  });

  const sdk = (b: Bundle) => b.externals.filter((p) => !p.startsWith('node:') && !builtinModules.includes(p)).sort();

  it("leaves only Node modules and the runtime-provided S3 client outside, never the SQS, DynamoDB or secret stores' clients", () => {
    for (const [name, b] of bundles) expect(sdk(b), name).toEqual(['@aws-sdk/client-s3']);
  });

  it('the audit function loads no AWS SDK at cold start: SQS and DynamoDB through shared/aws/, S3 imported at the first claim check', () => {
    const audit = get('audit');
    expect(holding(audit, [/shared\/aws\/(json-client|sigv4|sqs|dynamodb)\.ts$/])).toHaveLength(4);
    expect(holding(audit, [/node_modules\/@(aws-sdk|smithy)\//])).toEqual([]);
    expect(sdk({ ...audit, externals: audit.staticExternals })).toEqual([]);
  });

  it('no function holds the secret fetching: its second file (secret-fetch.mjs) does, on the lean AWS client', async () => {
    // The fetcher is imported from the sibling file only when the config has references.
    const fetching = [/shared\/secrets\/fetch-refs\.ts$/, /shared\/aws\/secret-stores\.ts$/];
    for (const [name, b] of bundles) expect(holding(b, fetching), name).toEqual([]);
    const fetcher = await bundle(SECRET_FETCH_ENTRY);
    expect(holding(fetcher, fetching)).toHaveLength(2);
    expect(holding(fetcher, [/node_modules\//])).toEqual([]);
    // Only off Lambda, without credentials in the environment: the SDK's default chain, imported then.
    expect(sdk(fetcher)).toEqual(['@aws-sdk/credential-providers']);
  });
});
