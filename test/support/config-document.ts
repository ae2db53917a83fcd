/**
 * The bundled config of a function, made as `cdk synth` makes it: the YAML validated by the app's
 * synth-time loader and turned into the resolved config document by the one producer
 * (infra/app.ts configDocumentForSynth → shared/config/resolved.ts). Tests that run the built
 * entries hand them this file, never the YAML.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_CONFIG_FILE } from '../../functions/contract.js';
import { configDocumentForSynth } from '../../infra/app.js';

/** Writes `yaml` and its document into `dir`: `file` is the document's path (what SVC_CONFIG names), `source` the YAML's (what messages name). */
export function bundledConfigFiles(
  yaml: string,
  dir: string = mkdtempSync(join(tmpdir(), 'svc-bundled-')),
): { file: string; source: string } {
  const name = `svc-${Math.random().toString(36).slice(2)}`;
  const source = join(dir, `${name}.yaml`);
  writeFileSync(source, yaml);
  const file = join(dir, `${name}-${BUNDLED_CONFIG_FILE}`);
  writeFileSync(file, configDocumentForSynth(source));
  return { file, source };
}

/** The path of the document made of `yaml` (bundledConfigFiles). */
export function bundledConfig(yaml: string, dir?: string): string {
  return bundledConfigFiles(yaml, dir).file;
}
