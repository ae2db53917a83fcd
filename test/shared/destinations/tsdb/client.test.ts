/**
 * createTsdbClient gives the writer the configured version's adapter, and every version sets up its
 * database and writes through http.ts alone: no tsdb client library, so the writer's process loads
 * no package at all (nothing from node_modules) from import to the first write, for any version.
 *
 * What a process loaded can only be seen from inside it, so each case runs in a child process (the
 * built dist/, as vitest's global setup builds it) with a module `load` hook that appends every URL
 * it loads to a file, and marks between the steps: import writer.js, construct, ensureDatabase(),
 * write(). Version 1 writes to a real influxd 1.6, versions 2 and 3 to the fake InfluxDB
 * (test/support/fake-influx.ts; no InfluxDB 2 or 3 server can be installed here).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TsdbConfig, TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { isRecord } from '../../../../shared/util/records.js';
import { REPO_ROOT } from '../../../support/build.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import { type InfluxdHandle, query, startInfluxd } from '../../../support/influxd.js';
import { recorder, tsdbConfig } from './helpers.js';

const run = promisify(execFile);

/** Where any package would be loaded from. */
const PACKAGES = '/node_modules/';

/** The module hook, run by Node on its loader thread: every URL loaded, one line each. */
const HOOKS = `
import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, nextLoad) {
  appendFileSync(file, 'load ' + url + '\\n');
  return nextLoad(url, context);
}
`;

/** The child: registers the hook, then does each step of a writer's life and marks it in the same file. */
const CHILD = `
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
const file = process.env.LOAD_LOG;
const mark = (step) => appendFileSync(file, 'mark ' + step + '\\n');
register('data:text/javascript,' + encodeURIComponent(process.env.LOAD_HOOKS), { data: { file } });
const { int } = await import(process.env.LINE_PROTOCOL_MODULE);
const { TsdbWriter } = await import(process.env.WRITER_MODULE);
mark('imported');
const quiet = () => undefined;
const errors = [];
const writer = new TsdbWriter({
  config: JSON.parse(process.env.TSDB_CONFIG),
  log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
  onError: (type, module, err) => errors.push(type + ': ' + String(err)),
  retryDelaysMs: [],
});
mark('constructed');
await writer.ensureDatabase();
mark('ensured');
const timeNs = BigInt(Date.now()) * 1000000n;
const report = await writer.write([{ measurement: 'lazy', tags: { host: 'h1' }, fields: { n: int(1) }, timeNs }], 'lazy-test');
mark('written');
process.stdout.write(JSON.stringify({ written: report.written, requests: report.requests, errors }));
`;

type Step = 'imported' | 'constructed' | 'ensured' | 'written';

interface ChildRun {
  written: number;
  requests: number;
  errors: string[];
  /** The URLs loaded before each mark (the ones before `imported` include writer.js and its imports). */
  loadedBy: Record<Step, string[]>;
}

let tempDir: string;

beforeAll(async () => {
  tempDir = await mkdtemp(path.join(os.tmpdir(), 'tsdb-lazy-'));
});

afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

async function runChild(name: string, config: TsdbConfig): Promise<ChildRun> {
  const file = path.join(tempDir, `${name}.log`);
  const dist = (p: string): string => pathToFileURL(path.join(REPO_ROOT, 'dist', p)).href;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', CHILD], {
    cwd: REPO_ROOT,
    timeout: 30_000,
    env: {
      ...process.env,
      LOAD_LOG: file,
      LOAD_HOOKS: HOOKS,
      WRITER_MODULE: dist('shared/destinations/tsdb/writer.js'),
      LINE_PROTOCOL_MODULE: dist('shared/destinations/tsdb/line-protocol.js'),
      TSDB_CONFIG: JSON.stringify(config),
    },
  });
  const loadedBy: Record<Step, string[]> = { imported: [], constructed: [], ensured: [], written: [] };
  const loaded: string[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (line.startsWith('load ')) loaded.push(line.slice('load '.length));
    const step = /^mark (imported|constructed|ensured|written)$/.exec(line)?.[1];
    if (step === 'imported' || step === 'constructed' || step === 'ensured' || step === 'written')
      loadedBy[step] = [...loaded];
  }
  const result: unknown = JSON.parse(stdout);
  if (
    !isRecord(result) ||
    typeof result.written !== 'number' ||
    typeof result.requests !== 'number' ||
    !Array.isArray(result.errors)
  ) {
    throw new Error(`unexpected child output: ${stdout}`);
  }
  return { written: result.written, requests: result.requests, errors: result.errors.map(String), loadedBy };
}

const loads = (urls: readonly string[], library: string): boolean => urls.some((u) => u.includes(library));

describe('every tsdb version sets up and writes through http.ts, without a client library', () => {
  let influx: InfluxdHandle;
  let v2: FakeInflux;
  let v3: FakeInflux;

  beforeAll(async () => {
    [influx, v2, v3] = await Promise.all([
      startInfluxd(),
      startFakeInflux({ version: 2, token: 'v2-token', org: 'acme' }),
      startFakeInflux({ version: 3, token: 'v3-token' }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([influx?.stop(), v2?.close(), v3?.close()]);
  });

  it('version 1 (real influxd): creates the database and writes, loading no package', async () => {
    const child = await runChild('v1', tsdbConfig({ version: 1, port: influx.port, v1: { dbName: 'lazy_v1' } }));
    expect(child).toMatchObject({ written: 1, requests: 1, errors: [] });
    expect(await query(influx, 'SELECT count(n) FROM lazy', 'lazy_v1')).toMatchObject({
      results: [{ series: [{ values: [['1970-01-01T00:00:00Z', 1]] }] }],
    });
    // The hook sees the writer's own modules: an empty list would prove nothing.
    expect(loads(child.loadedBy.imported, '/dist/shared/destinations/tsdb/v1.js')).toBe(true);
    expect(loads(child.loadedBy.written, PACKAGES)).toBe(false);
  });

  it('version 2 (fake): finds the org, creates the bucket and writes, loading no package', async () => {
    const child = await runChild(
      'v2',
      tsdbConfig({ version: 2, port: v2.port, v2: { org: 'acme', token: 'v2-token', bucket: 'lazy' } }),
    );
    expect(child).toMatchObject({ written: 1, requests: 1, errors: [] });
    expect(v2.lines()).toHaveLength(1);
    expect(loads(child.loadedBy.imported, '/dist/shared/destinations/tsdb/v2.js')).toBe(true);
    expect(loads(child.loadedBy.written, PACKAGES)).toBe(false);
  });

  it('version 3 (fake): creates the database and writes, loading no package', async () => {
    const child = await runChild('v3', tsdbConfig({ version: 3, port: v3.port, v3: { token: 'v3-token' } }));
    expect(child).toMatchObject({ written: 1, requests: 1, errors: [] });
    expect(v3.lines()).toHaveLength(1);
    expect(loads(child.loadedBy.imported, '/dist/shared/destinations/tsdb/v3.js')).toBe(true);
    expect(loads(child.loadedBy.written, PACKAGES)).toBe(false);
  });
});

describe('writeUrl', () => {
  it('is the version’s write endpoint without credentials, known at construction (before any library is loaded)', () => {
    const rec = recorder();
    const url = (config: TsdbConfig): string => new TsdbWriter({ config, log: rec.log, onError: rec.onError }).writeUrl;
    const auth = { enable: true, username: 'svc', password: 'secret' };
    expect(url(tsdbConfig({ version: 1, port: 8086, v1: { dbName: 'svc db', auth } }))).toBe(
      'http://127.0.0.1:8086/write?db=svc+db&precision=ns',
    );
    expect(
      url(tsdbConfig({ version: 2, host: '::1', port: 8086, v2: { org: 'a&b', bucket: 'svc', token: 'secret' } })),
    ).toBe('http://[::1]:8086/api/v2/write?org=a%26b&bucket=svc&precision=ns');
    expect(url(tsdbConfig({ version: 3, port: 8181, v3: { database: 'svc', token: 'secret' } }))).toBe(
      'http://127.0.0.1:8181/api/v3/write_lp?db=svc&precision=nanosecond',
    );
  });
});
