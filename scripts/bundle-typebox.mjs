/**
 * Part of `npm run build`, after tsc: TypeBox (the schema builder of the config, the events, the
 * queue codec) as one ES module in dist/vendor/, and the built modules' imports of it pointed there.
 *
 * Why: the package ships as ≈ 200 small ES modules, and on Node each ES module costs memory of its
 * own (module record, source, compiled code): a start paid ≈ 6 MB of resident memory for them, and
 * ≈ 0.4 MB for the same code as one module (bench/README.md "Memory"). The sources and the tests
 * import the package as it is; only dist/ is changed, and only the import specifiers.
 * Lambda bundles are made by esbuild from the sources and are not affected.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = join(ROOT, 'dist');
const VENDOR = join(DIST, 'vendor');
/** Each entry of the package Svc imports, and its file in dist/vendor/. */
const ENTRIES = {
  '@sinclair/typebox': 'typebox',
  '@sinclair/typebox/value': 'typebox-value',
  '@sinclair/typebox/errors': 'typebox-errors',
};

// One bundle per entry, sharing chunks (splitting): the entries share TypeBox's registries, which must stay one.
await build({
  entryPoints: Object.fromEntries(
    Object.entries(ENTRIES).map(([specifier, name]) => [name, fileURLToPath(import.meta.resolve(specifier))]),
  ),
  outdir: VENDOR,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  logLevel: 'warning',
});

const IMPORT = /(\bfrom\s*|\bimport\s*\(\s*)(['"])(@sinclair\/typebox(?:\/value|\/errors)?)\2/g;
function* builtModules(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && path !== VENDOR) yield* builtModules(path);
    else if (entry.isFile() && entry.name.endsWith('.js')) yield path;
  }
}
for (const file of builtModules(DIST)) {
  const text = readFileSync(file, 'utf8');
  if (!text.includes('@sinclair/typebox')) continue;
  const rewritten = text.replace(IMPORT, (_, before, quote, specifier) => {
    const target = relative(dirname(file), join(VENDOR, `${ENTRIES[specifier]}.js`))
      .split(sep)
      .join('/');
    return `${before}${quote}${target.startsWith('.') ? target : `./${target}`}${quote}`;
  });
  if (/['"]@sinclair\/typebox[^'"]*['"]/.test(rewritten.replace(/^\s*(\/\/|\*).*$/gm, '')))
    throw new Error(`${file} imports a TypeBox entry this script does not bundle`);
  writeFileSync(file, rewritten);
}
