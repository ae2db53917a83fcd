#!/usr/bin/env node
/**
 * The license check of the production tree (`npm run licenses`; test/deploy/licenses.test.ts runs it
 * in `npm test`): every package `npm ci --omit=dev` installs must carry a license on ALLOWED, or an
 * SPDX expression those satisfy (`(BSD-3-Clause OR GPL-2.0)` passes: BSD-3-Clause is allowed).
 * Svc's own packages (the root and its workspaces) are not dependencies and are left out.
 *
 *   node scripts/licenses.mjs [--packages file.json]
 *
 * The packages are `npm query .prod` of this checkout, or the JSON list in `--packages` (each
 * `{name, version, license, location}`, as npm query gives them). Prints a line per license with its
 * count; exits 1 naming each package whose license is missing or not allowed.
 */
import { readFileSync } from 'node:fs';
import satisfies from 'spdx-satisfies';
import { licenseOf, productionPackages } from './production-tree.mjs';

/** Permissive licenses whose terms ask no more of a binary distribution than a notice. */
export const ALLOWED = [
  'MIT',
  'MIT-0',
  'ISC',
  'Apache-2.0',
  'BSD-2-Clause',
  'BSD-3-Clause',
  '0BSD',
  'BlueOak-1.0.0',
  'CC0-1.0',
  'Unlicense',
];

function allowed(expression) {
  try {
    return satisfies(expression, ALLOWED);
  } catch {
    // Not an SPDX expression (e.g. "SEE LICENSE IN …"): a person must look at it.
    return false;
  }
}

const at = process.argv.indexOf('--packages');
const packages = productionPackages(at > 0 ? JSON.parse(readFileSync(process.argv[at + 1], 'utf8')) : undefined);

const counts = new Map();
const refused = [];
for (const entry of packages) {
  const license = licenseOf(entry);
  counts.set(license ?? '(none)', (counts.get(license ?? '(none)') ?? 0) + 1);
  if (license === undefined || !allowed(license))
    refused.push(`${entry.name}@${entry.version}: ${license ?? 'no license field'}`);
}
console.log(`production dependencies: ${packages.length}, by license:`);
for (const [license, count] of [...counts].sort((a, b) => b[1] - a[1]))
  console.log(`  ${String(count).padStart(4)}  ${license}`);
if (refused.length > 0) {
  console.log(`not on the allow list (${ALLOWED.join(', ')}):`);
  for (const line of refused) console.log(`  ${line}`);
  process.exit(1);
}
console.log(`every license is on the allow list (${ALLOWED.join(', ')})`);
