/**
 * The Lambda bundles: each function's minified size and its cold module-init time, against the
 * targets of issue 13 (audit function ≤ 300 KB, writers ≤ 600 KB, init ≤ 60 ms; 1 KB = 1,000 bytes).
 *
 *   npm run bench:bundles              # = npm run -s build && node bench/bundles.mjs
 *   node bench/bundles.mjs [--runs=10] [--analyze] [--keep]
 *
 * (or BENCH_RUNS, BENCH_ANALYZE, BENCH_KEEP). It imports the BUILT contract and bundling options
 * from ../dist (bench/ is not part of the build).
 *
 * Every function entry of functions/contract.ts (ENTRIES: the audit API and one writer per cloud
 * destination) is bundled by esbuild with the options the stack's SvcFunction gives NodejsFunction
 * (infra/constructs/esbuild-options.ts: one source of truth), into node_modules/.cache/svc-bundles/
 * (inside the repository, so the AWS SDK, which the bundles leave to the Lambda runtime, resolves
 * from the repository's node_modules as it does from the runtime's). The size is that of index.mjs,
 * the file Lambda loads (the source map beside it is shown, not judged). Beside it, as SvcFunction's
 * bundling hook does, the secret fetching is built into secret-fetch.mjs
 * (shared/config/function-bundle.ts), which a function imports only when its config has secret
 * references: the bench's config has none, so the init measured is that of a function without.
 *
 * Init: each bundle is imported in a fresh `node` process with the environment the stack gives the
 * function — NODE_OPTIONS=--enable-source-maps, SVC_CONFIG pointing at the bundled config document
 * (made from a config that routes something to every destination by the producer synth uses), SVC_DESTINATION, dummy queue URLs, table names and bucket, a
 * region — and the time from just before `await import()` to just after it is the module-init time
 * (config loaded, logger, clients and destination built; no request). Median of --runs processes,
 * the functions taking turns so machine noise spreads over all of them. The baseline of the same
 * run: an empty entry bundled with the same options, imported the same way, and the wall time of
 * a bare `node -e ''` process.
 *
 * It also prints each bundle's largest packages (from esbuild's metafile; --analyze prints esbuild's
 * full analysis) and the modules it leaves outside: only Node built-ins and @aws-sdk/client-* (the
 * runtime's) may be, else the exit code is 1. A missed target is reported, not an error.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { analyzeMetafile, build } from 'esbuild';
import { fmt, loadNow, machineLine, median, option, positive } from './lib.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const dist = (path) => pathToFileURL(join(REPO, 'dist', path)).href;
const { BUNDLE_FILE, SECRET_FETCH_FILE, lambdaEsbuildOptions, secretFetchEsbuildOptions } = await import(
  dist('infra/constructs/esbuild-options.js')
);
const { BUNDLED_CONFIG_FILE, ENTRIES, LAMBDA_ENV } = await import(dist('functions/contract.js'));
// The producer synth uses: the bundled config is the resolved config document made from the YAML below.
const { configDocumentForSynth } = await import(dist('infra/app.js'));

const RUNS = Math.round(positive('runs', 'BENCH_RUNS', 10));
const ANALYZE = option('analyze', 'BENCH_ANALYZE', 'false') !== 'false';
const KEEP = option('keep', 'BENCH_KEEP', 'false') !== 'false';

const KB = 1000;
const TARGETS = { audit: 300 * KB, writer: 600 * KB, initMs: 60 };
const OUT = join(REPO, 'node_modules/.cache/svc-bundles');

/** The config (made into the bundled document as synth does): something routed to every cloud destination, so every writer builds its destination. */
const CONFIG = `Svc:
  tsdbConfig:
    enable: true
    host: tsdb.example.internal
    port: 8086
    v1Config:
      dbName: svc
  auditEvents:
    enable: true
    destination:
      enable: true
      type: tsdb, parquet
      parquet:
        s3:
          enable: true
          bucket: svc-bench-parquet
          region: us-east-1
  monsaas:
    enable: true
    metric:
      url: https://metrics.example.com/metric/v1
    event:
      url: https://events.example.com/
  thirdPartyToolsCredentials:
    monsaas:
      - {accountName: ops, insertApiKey: bench-insert-key, accountId: "111"}
  userEvents:
    enable: true
    sendToTsdb:
      enable: true
    sendToMonSaas:
      enable: true
      destinationAccount: [ops]
`;

const functions = [
  { name: 'audit', entry: ENTRIES.audit, target: TARGETS.audit },
  ...Object.entries(ENTRIES.writers).map(([destination, entry]) => ({
    name: `writer:${destination}`,
    destination,
    entry,
    target: TARGETS.writer,
  })),
];

/** The environment the stack gives a function (infra/constructs/svc-function.ts, event-pipeline.ts, ingest-api.ts), with dummy values. */
function lambdaEnv(fn, configFile) {
  const queue = (d) => `https://sqs.us-east-1.amazonaws.com/123456789012/svc-${d}`;
  return {
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: '--enable-source-maps',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    [LAMBDA_ENV.config]: configFile,
    [LAMBDA_ENV.eventQueueUrls]: JSON.stringify(
      Object.fromEntries(Object.keys(ENTRIES.writers).map((d) => [d, queue(d)])),
    ),
    [LAMBDA_ENV.rateLimitTable]: 'svc-rate-limit',
    [LAMBDA_ENV.idempotencyTable]: 'svc-idempotency',
    [LAMBDA_ENV.claimCheckBucket]: 'svc-claim-checks',
    ...(fn.destination ? { [LAMBDA_ENV.destination]: fn.destination } : {}),
  };
}

const builtins = new Set(builtinModules);
/** What a bundle may leave outside: Node's own modules and the runtime's SDK clients. */
function allowedExternal(path) {
  return path.startsWith('node:') || builtins.has(path) || /^@aws-sdk\/client-[a-z0-9-]+$/.test(path);
}

async function bundle(name, entry) {
  const dir = join(OUT, name.replace(':', '-'));
  const outfile = join(dir, BUNDLE_FILE);
  const result = await build({
    ...lambdaEsbuildOptions(entry, outfile),
    absWorkingDir: REPO,
    metafile: true,
    logLevel: 'error',
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  const byPackage = new Map();
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path.split('/').slice(0, 2).join('/');
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
  }
  const externals = [...new Set(output.imports.filter((i) => i.external).map((i) => i.path))].sort();
  // The function's second file, as SvcFunction's bundling hook builds it: imported only when the config has secret references.
  const fetcher = await build({ ...secretFetchEsbuildOptions(dir, REPO), metafile: true, logLevel: 'error' });
  const fetcherOutput = Object.values(fetcher.metafile.outputs).find((o) => o.entryPoint !== undefined);
  const fetcherExternals = [...new Set(fetcherOutput.imports.filter((i) => i.external).map((i) => i.path))].sort();
  return {
    dir,
    outfile,
    bytes: statSync(outfile).size,
    mapBytes: statSync(`${outfile}.map`).size,
    byPackage,
    externals,
    metafile: result.metafile,
    fetcherBytes: statSync(join(dir, SECRET_FETCH_FILE)).size,
    fetcherExternals,
  };
}

const INIT_SCRIPT = `const t0 = performance.now();
await import(process.env.BENCH_BUNDLE_URL);
const t1 = performance.now();
process.stderr.write('BENCH_INIT_MS ' + (t1 - t0) + '\\n');`;

/** One cold import in a fresh process: the module-init time in ms, or throws with the child's output. */
function initOnce(url, env) {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', INIT_SCRIPT], {
    env: { ...env, BENCH_BUNDLE_URL: url },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const line = run.stderr.split('\n').find((l) => l.startsWith('BENCH_INIT_MS '));
  if (run.status !== 0 || line === undefined)
    throw new Error(`importing ${url} failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
  return Number(line.slice('BENCH_INIT_MS '.length));
}

function processStartMs() {
  const t0 = performance.now();
  const run = spawnSync(process.execPath, ['-e', ''], { env: { PATH: process.env.PATH ?? '' } });
  if (run.status !== 0) throw new Error('node -e "" failed');
  return performance.now() - t0;
}

const kb = (bytes) => `${fmt(bytes / KB, 1)} KB`;
const verdict = (ok) => (ok ? 'ok' : 'OVER');

async function main() {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const yamlFile = join(OUT, 'svc.yaml');
  writeFileSync(yamlFile, CONFIG);
  const configFile = join(OUT, BUNDLED_CONFIG_FILE);
  writeFileSync(configFile, configDocumentForSynth(yamlFile));
  const emptyEntry = join(OUT, 'empty-entry.mjs');
  writeFileSync(emptyEntry, 'export const handler = async () => undefined;\n');

  console.log(`bench/bundles: ${machineLine()}`);
  console.log(`load average at start: ${loadNow().text}`);
  console.log(
    `esbuild options: infra/constructs/esbuild-options.ts (the stack's); ${RUNS} cold imports per bundle; 1 KB = 1,000 bytes\n`,
  );

  const built = [];
  for (const fn of functions) built.push({ ...fn, ...(await bundle(fn.name, fn.entry)) });
  const baseline = await bundle('baseline', emptyEntry);
  const fetcherBytes = built[0].fetcherBytes;

  const times = new Map([...built.map((b) => [b.name, []]), ['baseline', []], ['node -e', []]]);
  for (let i = 0; i < RUNS; i++) {
    for (const b of built) times.get(b.name).push(initOnce(pathToFileURL(b.outfile).href, lambdaEnv(b, configFile)));
    times.get('baseline').push(initOnce(pathToFileURL(baseline.outfile).href, lambdaEnv({}, configFile)));
    times.get('node -e').push(processStartMs());
  }

  let failed = false;
  const rows = [
    ['function', 'entry', 'size (index.mjs)', 'target', '', 'source map', 'init median', 'min–max', 'target', ''],
  ];
  for (const b of built) {
    const t = times.get(b.name);
    const init = median(t);
    rows.push([
      b.name,
      b.entry,
      kb(b.bytes),
      `≤ ${kb(b.target)}`,
      verdict(b.bytes <= b.target),
      kb(b.mapBytes),
      `${fmt(init, 1)} ms`,
      `${fmt(Math.min(...t), 1)}–${fmt(Math.max(...t), 1)}`,
      `≤ ${TARGETS.initMs} ms`,
      verdict(init <= TARGETS.initMs),
    ]);
  }
  const bt = times.get('baseline');
  rows.push([
    'baseline',
    '(empty entry, same options)',
    kb(baseline.bytes),
    '',
    '',
    kb(baseline.mapBytes),
    `${fmt(median(bt), 1)} ms`,
    `${fmt(Math.min(...bt), 1)}–${fmt(Math.max(...bt), 1)}`,
    '',
    '',
  ]);
  const nt = times.get('node -e');
  rows.push([
    "node -e ''",
    '(whole process, wall time)',
    '',
    '',
    '',
    '',
    `${fmt(median(nt), 1)} ms`,
    `${fmt(Math.min(...nt), 1)}–${fmt(Math.max(...nt), 1)}`,
    '',
    '',
  ]);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows)
    console.log(
      r
        .map((cell, c) => cell.padEnd(widths[c]))
        .join('  ')
        .trimEnd(),
    );

  console.log(
    `\n${SECRET_FETCH_FILE} beside each index.mjs (loaded only when the config has secret references; not in the init above): ${kb(fetcherBytes)}`,
  );
  for (const b of built) {
    const top = [...b.byPackage].sort((x, y) => y[1] - x[1]).slice(0, 8);
    console.log(`\n${b.name}: largest parts ${top.map(([pkg, bytes]) => `${pkg} ${kb(bytes)}`).join(', ')}`);
    const bad = [...b.externals, ...b.fetcherExternals].filter((path) => !allowedExternal(path));
    const sdk = (paths) => paths.filter((p) => !p.startsWith('node:') && !builtins.has(p)).join(', ') || 'nothing';
    console.log(`  left to the runtime: ${sdk(b.externals)}; by ${SECRET_FETCH_FILE}: ${sdk(b.fetcherExternals)}`);
    if (bad.length > 0) {
      failed = true;
      console.log(`  NOT PROVIDED BY THE LAMBDA RUNTIME: ${bad.join(', ')}`);
    }
    if (ANALYZE) console.log(await analyzeMetafile(b.metafile));
  }
  console.log(`\nload average at end: ${loadNow().text}`);
  if (!KEEP) rmSync(OUT, { recursive: true, force: true });
  else console.log(`bundles kept in ${OUT}`);
  process.exitCode = failed ? 1 : 0;
}

await main();
