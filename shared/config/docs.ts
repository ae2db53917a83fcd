/** Renders docs/configuration.md from the config schema (a test fails when the file is stale). */

import { groupDigits } from '../util/numbers.js';
import { MAX_PRINTED_ISSUES, MAX_QUOTED_CHARS } from './errors.js';
import { MAX_ALIAS_VALUES, MAX_CONFIG_BYTES, MAX_NESTING } from './read.js';
import { notBuiltFeature } from './rules.js';
import { ConfigFileSchema } from './schema.js';
import { SECRET_REF_SYNTAX } from './secret-refs.js';
import { describeSchema, type SchemaNode } from './walk.js';

const ROOT = (ConfigFileSchema as SchemaNode).properties?.['Svc'] as SchemaNode;

function renderDefault(node: SchemaNode, inList: boolean): string {
  if (node.default === undefined) return inList ? 'required' : '—';
  if (node['x-required']) return 'must be set when used';
  const value = node.default;
  if (typeof value === 'string') return value === '' ? "`''` (empty)" : `\`${value}\``;
  return `\`${JSON.stringify(value)}\``;
}

function notBuiltNote(feature: string): string {
  return `**not built yet** (${feature}): no effect`;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

interface Row {
  key: string;
  accepts: string;
  def: string;
  meaning: string;
}

function rows(node: SchemaNode, prefix: string, inList: boolean, out: Row[]): void {
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const notes: string[] = [];
    const notBuilt = notBuiltFeature(path.split('.'));
    if (notBuilt) notes.push(notBuiltNote(notBuilt));
    if (child['x-secret'])
      notes.push('secret: may be written `${env:NAME}`, `${aws-secret:…}` or `${aws-ssm:…}`; never logged');
    if (child['x-only-when'])
      notes.push(`used only when \`${child['x-only-when'].key}\` is ${String(child['x-only-when'].value)}`);
    if (child['x-gate'] && !(child['x-gate'].length === 1 && child['x-gate'][0] === 'enable')) {
      notes.push(`in use when ${child['x-gate'].map((g) => `\`${g}\``).join(' or ')} is true`);
    }
    if (child.type === 'object' && child.properties) {
      if (notes.length > 0 || child['x-gate']) {
        out.push({
          key: path,
          accepts: 'section',
          def: '',
          meaning: [child.description ?? '', ...notes].filter(Boolean).join('; '),
        });
      }
      rows(child, path, inList, out);
    } else if (child.type === 'array' && child.items?.type === 'object' && child.items.properties) {
      out.push({
        key: `${path}[]`,
        accepts: 'list',
        def: renderDefault(child, inList),
        meaning: child.description ?? '',
      });
      rows(child.items, `${path}[]`, true, out);
    } else {
      out.push({
        key: path,
        accepts: describeSchema(child),
        def: renderDefault(child, inList),
        meaning: [child.description ?? '', ...notes].filter(Boolean).join('; '),
      });
    }
  }
}

export function renderConfigDocs(): string {
  const lines: string[] = [
    '# Configuration reference',
    '',
    '<!-- Generated from shared/config/schema.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    'Svc reads one YAML file (`.yaml` or `.yml`) whose root key is `Svc`. The file is chosen by',
    '`--config <file>`, else the environment variable `SVC_CONFIG`, else `./config/svc.yaml`; the log',
    'says which file was loaded. `svc validate-config --config <file>` checks a file without starting anything.',
    '',
    'Rules that hold for every key:',
    '',
    '- Every key has a default, so a file sets only what differs: `Svc: {}` is a valid file.',
    '- A section with an `enable` switch (or the switches named for it) is in use only when that switch is',
    '  true. The values of a section that is not in use are neither validated nor used, so placeholders',
    '  may stay. "must be set when used" marks settings without a usable default.',
    '- Unknown keys, wrong types, bad values and keys set twice are all reported at once, each as',
    '  `file:line:column Svc.key.path: problem`, and Svc exits with code 1. An unknown key inside a section',
    '  that is not in use (`enabel: true` leaves the section off) is a warning of `svc validate-config` and',
    '  of the start-up log, at its `file:line:column`, with the closest known key.',
    '- Any string value written exactly `${env:NAME}` is replaced by the environment variable `NAME`',
    '  (a missing variable is an error). Where the key wants a number or a boolean, the text is converted.',
    `- A key marked secret may instead name where the secret is kept in AWS: ${SECRET_REF_SYNTAX}`,
    '  (a secret whose text is a JSON object: `#key` picks one key; a SecureString parameter is decrypted). The',
    "  Lambda functions fetch these once per cold start, `svc local` and `svc edge` at start with the machine's",
    '  AWS credentials (`AWS_PROFILE`, `AWS_REGION`, …); `svc validate-config` checks their syntax only. A',
    '  reference in a key that is not secret is an error. docs/deployment.md (Secrets) has the details.',
    '- Every tag list (`…tags[]`, `staticTags[]`) holds `{name, value}` items; tag names start with a letter,',
    '  hold letters, digits and `_`, and are not `time`.',
    '- Durations in milliseconds are whole numbers; schedules are texts such as `every 15 minutes`',
    '  (`@breejs/later`, evaluated in UTC); relative directories resolve from the working directory.',
    `- Limits: a file holds at most ${groupDigits(MAX_CONFIG_BYTES)} bytes (${MAX_CONFIG_BYTES / 1_048_576} MiB) of UTF-8 text; aliases (\`*name\`) add at most`,
    `  ${groupDigits(MAX_ALIAS_VALUES)} values in total, each a copy of its anchor; lists and mappings nest at most ${MAX_NESTING} levels. A report`,
    `  prints the first ${MAX_PRINTED_ISSUES} problems and how many more there are; a message quotes at most ${MAX_QUOTED_CHARS} characters of`,
    '  the file and never the value of a secret.',
    '- Settings marked **not built yet** belong to features Svc does not have yet: they are checked but have',
    '  no effect, and `svc validate-config` and the start-up log warn about each such switch that is on.',
    '',
    'Cross-field rules checked at start: `anonTelemetry: true` needs `systemInfo.enable: true`; every',
    "name in `serversToMonitor.serverTagsDefinition` is present in every server's `serverTags` and no",
    'other, and is not named like a built-in tag of its measurements (nor, with `tsdbConfig.enable`, like',
    'a built-in field); `auditEvents.destination.type` lists each writer once and `tsdb` only with',
    '`tsdbConfig.enable`; monitoring-SaaS account names have credentials; two enabled listeners never',
    'share a port. A feature flag whose destination master switch is off (for example',
    '`userEvents.sendToTsdb.enable` with `tsdbConfig.enable: false`) is logged as a warning.',
    '',
  ];
  const table = (out: Row[]) => {
    lines.push('| Key | Accepts | Default | Meaning |', '|---|---|---|---|');
    for (const r of out)
      lines.push(`| \`${r.key}\` | ${escapeCell(r.accepts)} | ${escapeCell(r.def)} | ${escapeCell(r.meaning)} |`);
    lines.push('');
  };
  const sections = Object.entries(ROOT.properties ?? {});
  const topLevel: Row[] = [];
  for (const [key, node] of sections) {
    if (node.type !== 'object') {
      const notBuilt = notBuiltFeature([key]);
      topLevel.push({
        key,
        accepts: describeSchema(node),
        def: renderDefault(node, false),
        meaning: [node.description ?? '', ...(notBuilt ? [notBuiltNote(notBuilt)] : [])].join('; '),
      });
    }
  }
  lines.push('## Top level', '');
  table(topLevel);
  for (const [section, node] of sections) {
    if (node.type !== 'object') continue;
    const out: Row[] = [];
    rows(node, section, false, out);
    lines.push(`## ${section}`, '');
    const notBuilt = notBuiltFeature([section]);
    if (node.description) {
      const gate = node['x-gate'];
      lines.push(
        `${node.description}.${gate ? ` In use when ${gate.map((g) => `\`${g}\``).join(' or ')} is true.` : ''}`,
        '',
      );
    }
    if (notBuilt) lines.push(`**Not built yet** (${notBuilt}): these settings are checked but have no effect.`, '');
    table(out);
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
