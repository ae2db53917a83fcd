/**
 * Secret references: a key marked secret (`x-secret`, `x-secret-values`) may name a secret in AWS
 * Secrets Manager or a parameter in SSM Parameter Store instead of holding the value, in the same
 * `${…}` form as `${env:NAME}`:
 *
 *   ${aws-secret:<name or ARN>}            the secret's string
 *   ${aws-secret:<name or ARN>#<key>}      one key of a secret whose string is a JSON object
 *   ${aws-ssm:<parameter name or ARN>}     the parameter's value (a SecureString is decrypted)
 *   ${aws-ssm:<parameter name or ARN>#<key>}
 *
 * The whole value must be the reference. This module is pure (no AWS SDK): the loader checks the
 * syntax and lists the references, the CDK app grants them, and shared/secrets/ fetches them.
 *
 * Which function needs which secret is one table (SECRET_READERS), by key path: the stack grants
 * read access from it and each Lambda function fetches exactly the references it is granted.
 */
import { type MaskPath, matchesPrefix, parseMaskPath } from './mask.js';
import type { PathSegment } from './walk.js';

/** Where a reference points: Secrets Manager (`secret`) or SSM Parameter Store (`ssm`). */
export type SecretStore = 'secret' | 'ssm';

export interface SecretRef {
  store: SecretStore;
  /** The secret's name or ARN, or the parameter's name or ARN. */
  id: string;
  /** The key of a JSON object value, after `#`. */
  jsonKey: string | undefined;
  /** The region of an ARN (a name is looked up in the caller's region). */
  region: string | undefined;
  /** The reference as written, `${aws-secret:…}`: for messages and as the key of fetched values. */
  text: string;
}

/** A reference found in a config file: the key it is in, and where. */
export interface SecretRefAt {
  /** Path below the file's root (`Svc` first). */
  path: PathSegment[];
  ref: SecretRef;
  line: number;
  column: number;
}

/** Anything that starts like a reference is checked as one (a typo must not become a literal secret). */
const REF_START = /^\$\{aws-/;
const REF = /^\$\{aws-(secret|ssm):([^#}]+)(?:#([^}]+))?\}$/;

/**
 * Secrets Manager names: letters, digits and /_+=.@- (up to 512). An ARN ends in the name and the
 * six random characters AWS appends.
 * https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_CreateSecret.html
 */
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/;
/**
 * Parameter names: letters, digits and _.-/ (a hierarchy starts with /), up to 2048.
 * https://docs.aws.amazon.com/systems-manager/latest/userguide/sysman-paramstore-su-create.html
 */
const PARAMETER_NAME = /^[A-Za-z0-9_./-]{1,2048}$/;
const PARAMETER_ARN = /^arn:aws[a-z-]*:ssm:([a-z0-9-]+):\d{12}:parameter\/[A-Za-z0-9_./-]+$/;

/** The syntax in one line, for messages and the docs. */
export const SECRET_REF_SYNTAX =
  '${aws-secret:<name or ARN>}, ${aws-secret:<name or ARN>#<json key>} or ${aws-ssm:<parameter name or ARN>}';

/** Whether `value` is meant as a reference (it starts with `${aws-`), well-formed or not. */
export function looksLikeSecretRef(value: string): boolean {
  return REF_START.test(value);
}

/** The reference `text` stands for, or what is wrong with it. */
export function parseSecretRef(text: string): { ok: true; ref: SecretRef } | { ok: false; problem: string } {
  const match = REF.exec(text);
  if (!match) return { ok: false, problem: `is not a secret reference; write ${SECRET_REF_SYNTAX}` };
  const store: SecretStore = match[1] === 'ssm' ? 'ssm' : 'secret';
  const id = match[2] ?? '';
  const jsonKey = match[3];
  if (store === 'secret') {
    const arn = SECRET_ARN.exec(id);
    if (!arn && !SECRET_NAME.test(id))
      return {
        ok: false,
        problem:
          "names no valid secret: a Secrets Manager name has letters, digits and /_+=.@- only, or give the secret's full ARN",
      };
    return { ok: true, ref: { store, id, jsonKey, region: arn?.[1], text } };
  }
  const arn = PARAMETER_ARN.exec(id);
  if (!arn && !PARAMETER_NAME.test(id))
    return {
      ok: false,
      problem:
        'names no valid parameter: an SSM parameter name has letters, digits and _.-/ only (e.g. /svc/tsdb/password), or give its full ARN',
    };
  return { ok: true, ref: { store, id, jsonKey, region: arn?.[1], text } };
}

/** A function of the stack that reads secrets: the audit API, or the writer of a destination. */
export type SecretReader = 'audit' | 'tsdb' | 'monsaas';

/**
 * Who needs each secret key on AWS: the one table the stack's grants and the functions' fetching
 * both follow. Paths are below `Svc` (`[]` = every element of a list, `*` = every key of a mapping).
 * `reader: undefined` marks a secret used on the edge only (the pollers): no function fetches it
 * and none is granted it. A test holds the table complete: every secret key of the schema is here.
 */
export const SECRET_READERS: readonly { key: MaskPath; reader: SecretReader | undefined }[] = [
  { key: 'auditEvents.apiToken', reader: 'audit' },
  { key: 'tsdbConfig.v1Config.auth.password', reader: 'tsdb' },
  { key: 'tsdbConfig.v2Config.token', reader: 'tsdb' },
  { key: 'tsdbConfig.v3Config.token', reader: 'tsdb' },
  { key: 'thirdPartyToolsCredentials.monsaas[].insertApiKey', reader: 'monsaas' },
  // The monitoring SaaS destination scrambles user names with it (shared/destinations/registry.ts).
  { key: 'userEvents.sendToMonSaas.scrambleSecret', reader: 'monsaas' },
  { key: 'cert.clientCertPassphrase', reader: undefined },
  // The edge's and local mode's proxy (shared/runtime/proxy.ts): no function uses one.
  { key: 'proxy.httpProxy', reader: undefined },
  { key: 'proxy.httpsProxy', reader: undefined },
  // MQTT runs on the edge only: no writer Lambda publishes to a broker.
  { key: 'mqttConfig.password', reader: undefined },
  { key: 'serversToMonitor.servers[].headers.*', reader: undefined },
  // The alert channels are sent from the edge's alert engine (edge-agent/alerts/engine.ts): no function sends them.
  { key: 'alerts.channels[].url', reader: undefined },
  { key: 'alerts.channels[].email.smtp.password', reader: undefined },
];

const READER_PATTERNS = SECRET_READERS.map((row) => ({ ...row, pattern: parseMaskPath(row.key) }));

/** The table's row for the secret at `path` (below the file's root, `Svc` first). */
export function secretReaderRow(path: readonly PathSegment[]): (typeof SECRET_READERS)[number] | undefined {
  const below = path[0] === 'Svc' ? path.slice(1) : path;
  return READER_PATTERNS.find((row) => row.pattern.length === below.length && matchesPrefix(row.pattern, below));
}

/** The function that needs the secret at `path`, if any runs on AWS. */
export function secretReader(path: readonly PathSegment[]): SecretReader | undefined {
  return secretReaderRow(path)?.reader;
}
