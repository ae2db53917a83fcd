#!/usr/bin/env node
/**
 * `npm run sbom`: a CycloneDX SBOM of the production tree (what `npm ci --omit=dev` installs),
 * written to sbom.cdx.json (not committed) or the file given with `--out`.
 *
 * `npm sbom` makes it. Its own `--omit=dev` is not used: in a checkout with workspaces (npm 11.19) it
 * leaves out most of the root's production dependencies (pino, ajv, yaml …). So the SBOM of the whole
 * tree is taken and cut to the packages `npm query .prod` names, by their `name@version` (the
 * CycloneDX bom-ref npm writes), with the dependency graph cut alike.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const at = process.argv.indexOf('--out');
const out = at > 0 ? process.argv[at + 1] : 'sbom.cdx.json';
const npm = (args) => JSON.parse(execFileSync('npm', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));

const production = new Set(npm(['query', '.prod']).map((entry) => `${entry.name}@${entry.version}`));
const bom = npm(['sbom', '--sbom-format=cyclonedx', '--sbom-type=application']);
const root = bom.metadata.component['bom-ref'];
const kept = (ref) => ref === root || production.has(ref);
bom.metadata.component.name = 'svc';
bom.components = bom.components.filter((component) => kept(component['bom-ref']));
bom.dependencies = bom.dependencies
  .filter((entry) => kept(entry.ref))
  .map((entry) => ({ ...entry, dependsOn: (entry.dependsOn ?? []).filter(kept) }));
writeFileSync(out, `${JSON.stringify(bom, null, 2)}\n`);
console.log(`wrote ${out}: CycloneDX ${bom.specVersion}, ${bom.components.length} components (the production tree)`);
