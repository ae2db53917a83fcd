/**
 * The resolved config document (`svc.json` in every function bundle): the config as the full YAML
 * loader validated it at synth (every default applied, disabled sections cut, rules checked), the
 * references a function resolves at cold start (`${env:NAME}` from its environment, `${aws-secret:…}`
 * and `${aws-ssm:…}` from the stores it is granted), and a format version. The CDK app makes it with
 * resolvedConfigDocument, the only producer; the functions read it with resolved-load.ts, which
 * holds neither the YAML parser nor ajv nor the rules, so a cold start does not validate the whole
 * file again (docs/deployment.md, "The bundled config").
 *
 * This module is shared by both sides: the producer needs only the loader's types, and the reader
 * needs the document's schema.
 */
import { type Static, Type } from '@sinclair/typebox';
import { setPath } from '../util/records.js';
import type { LoadedConfig } from './load.js';
import { displayPath } from './walk.js';

/** What the document's `format` says it is. */
export const RESOLVED_CONFIG_FORMAT = 'svc-resolved-config';
/**
 * The document's layout version: raised when the layout or the meaning of a field changes, so a
 * function refuses a document of another version instead of misreading it.
 */
export const RESOLVED_CONFIG_VERSION = 1;
/** Largest document a function reads (4 MiB): a 1 MiB YAML config (the loader's limit) with every default stays far below it. */
export const MAX_RESOLVED_CONFIG_BYTES = 4 * 1_048_576;

const PathSchema = Type.Array(Type.Union([Type.String(), Type.Integer({ minimum: 0 })]), { minItems: 2 });

/** A value the function substitutes at cold start: the key (below the file's root, `Svc` first) and the reference as written. */
const ReferenceSchema = Type.Object(
  {
    path: PathSchema,
    text: Type.String({ minLength: 1 }),
    /** Where the reference is in the YAML file the operator wrote (`source`), for messages. */
    line: Type.Integer({ minimum: 0 }),
    column: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** The document's layout (checked by the functions before anything in it is used). */
export const ResolvedConfigDocumentSchema = Type.Object(
  {
    format: Type.Literal(RESOLVED_CONFIG_FORMAT),
    version: Type.Literal(RESOLVED_CONFIG_VERSION),
    /** The YAML file it was made from, as given to `cdk synth` (messages name it with the reference's line). */
    source: Type.String(),
    /** Everything under `Svc`; each reference's key holds the reference's text. */
    config: Type.Record(Type.String(), Type.Unknown()),
    references: Type.Array(ReferenceSchema),
  },
  { additionalProperties: false },
);

export type ResolvedConfigDocument = Static<typeof ResolvedConfigDocumentSchema>;
export type ResolvedReference = Static<typeof ReferenceSchema>;

/**
 * The document of a config the full loader validated (at synth: with placeholders for the
 * variables the functions' environment will hold). The keys that hold a reference get the
 * reference's text back (a placeholder must not reach a function). The placeholder was validated
 * against each key's schema, schedule parser included, so a `${env:…}` stands only where a text
 * like it is accepted: never in a number, a switch or a text schedule, which the functions'
 * loader therefore never has to parse.
 */
export function resolvedConfigDocument(
  loaded: Pick<LoadedConfig, 'file' | 'config' | 'envRefs' | 'secretRefs'>,
): ResolvedConfigDocument {
  const references: ResolvedReference[] = [
    ...loaded.envRefs.map(({ path, name, line, column }) => ({ path, text: `\${env:${name}}`, line, column })),
    ...loaded.secretRefs.map(({ path, ref, line, column }) => ({ path, text: ref.text, line, column })),
  ].sort((a, b) => a.line - b.line || a.column - b.column);
  const document = { Svc: structuredClone(loaded.config) };
  for (const ref of references) {
    if (!setPath(document, ref.path, ref.text))
      throw new Error(`${displayPath(ref.path)} is not in the loaded config (a reference of a cut section?)`);
  }
  return {
    format: RESOLVED_CONFIG_FORMAT,
    version: RESOLVED_CONFIG_VERSION,
    source: loaded.file,
    config: document.Svc,
    references,
  };
}

/** The document as the file's text (one line per key: readable in the function's code view). */
export function resolvedConfigText(document: ResolvedConfigDocument): string {
  return `${JSON.stringify(document, null, 1)}\n`;
}
