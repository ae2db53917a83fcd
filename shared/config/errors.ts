import { groupDigits } from '../util/numbers.js';
import type { PathSegment } from './walk.js';

/** One problem found in a config file, placed at the line and column where it is. */
export interface ConfigIssue {
  file: string;
  line: number;
  column: number;
  /** Key path such as `Svc.tsdbConfig.port`; '' for file-level problems. */
  path: string;
  message: string;
}

/** What a rule over the whole config found (rules.ts, placement.ts), before it is placed in the file. */
export interface RuleFinding {
  severity: 'error' | 'warning';
  /** Path below `Svc`. */
  path: PathSegment[];
  message: string;
}

/** Problems printed for one config error; the others are counted ("… and 312 more problems"). */
export const MAX_PRINTED_ISSUES = 50;
/** Characters of the file one quote shows (a value, a name); longer texts are cut with "…". */
export const MAX_QUOTED_CHARS = 40;
/**
 * Longest key path and message of an issue. Messages quote file text only through `quote`, so
 * these are the backstop that holds whatever a message or a path built from the file's keys holds.
 */
export const MAX_PATH_CHARS = 200;
export const MAX_MESSAGE_CHARS = 400;

/** `text` cut to `max` characters (whole code points), with "…" when cut. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${Array.from(text.slice(0, max * 2))
    .slice(0, max - 1)
    .join('')}…`;
}

/**
 * File text inside a message: in double quotes, JSON-escaped (a newline or control character cannot
 * break the line) and at most MAX_QUOTED_CHARS long. The one way messages quote the file.
 */
export function quote(text: string): string {
  return JSON.stringify(cut(text, MAX_QUOTED_CHARS));
}

/** What a wrong value was: quoted, or for a secret only its kind (and a text's length, which helps find a cut-off paste). */
export function preview(value: unknown, secret: boolean): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a section';
  if (secret) {
    const kind =
      typeof value === 'string'
        ? `a text of ${value.length} character${value.length === 1 ? '' : 's'}`
        : typeof value === 'number'
          ? 'a number'
          : 'true or false';
    return `${kind}; the value of a secret is not shown`;
  }
  if (typeof value === 'string') return quote(value);
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : 'a value of another kind';
}

function bounded(issue: ConfigIssue): ConfigIssue {
  return { ...issue, path: cut(issue.path, MAX_PATH_CHARS), message: cut(issue.message, MAX_MESSAGE_CHARS) };
}

export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  return issue.path ? `${where} ${issue.path}: ${issue.message}` : `${where} ${issue.message}`;
}

/** "3 problems" */
export function problemCount(n: number): string {
  return `${groupDigits(n)} problem${n === 1 ? '' : 's'}`;
}

/** The first MAX_PRINTED_ISSUES issues as lines, then "… and M more problems" when there are more. */
export function formatIssues(issues: readonly ConfigIssue[]): string[] {
  const lines = issues.slice(0, MAX_PRINTED_ISSUES).map(formatIssue);
  const more = issues.length - MAX_PRINTED_ISSUES;
  if (more > 0)
    lines.push(`… and ${groupDigits(more)} more problem${more === 1 ? '' : 's'} (fix these and check again)`);
  return lines;
}

/** A config file that cannot be used; `issues` lists every problem found, in file order, each bounded in length. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    const all = issues.map(bounded);
    super(
      `invalid configuration (${problemCount(all.length)}):\n${formatIssues(all)
        .map((line) => `  ${line}`)
        .join('\n')}`,
    );
    this.issues = all;
  }
}
