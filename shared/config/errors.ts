/** One problem found in a config file, placed at the line and column where it is. */
export interface ConfigIssue {
  file: string;
  line: number;
  column: number;
  /** Key path such as `Svc.tsdbConfig.port`; '' for file-level problems. */
  path: string;
  message: string;
}

export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  return issue.path ? `${where} ${issue.path}: ${issue.message}` : `${where} ${issue.message}`;
}

/** A config file that cannot be used; `issues` lists every problem found, in file order. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly issues: ConfigIssue[]) {
    super(`invalid configuration (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`);
  }
}
