/**
 * cdk-nag's AwsSolutions pack over a synthesized Svc app: the findings as rows (rule, severity,
 * resource) and as a table, for `npm run nag` and for test/infra/nag.test.ts, which fails on any.
 * A finding a construct acknowledges (`Validations.of(construct).acknowledge`, with its reason
 * beside it in the code) is not reported.
 *
 * `npm run nag -- -c config=<file> [-c key=value …]` runs this file as the CDK app (the CLI gives
 * it cdk.json's context and the `-c` values): it builds the stack as `cdk synth` does, prints the
 * findings and exits 1 when there is one. docs/deployment.md ("Checked by cdk-nag").
 */
import type { App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { isMainModule, runApp } from './app.js';

/** One resource a rule finds fault with; an IAM5 finding's rule names its wildcard (`AwsSolutions-IAM5[Resource::*]`). */
export interface NagFinding {
  rule: string;
  severity: string;
  /** The construct path of the CloudFormation resource, e.g. `Svc/IngestApi/HttpApi/DefaultStage/Resource`. */
  resource: string;
  /** What the rule says is wrong. */
  description: string;
}

/** The AwsSolutions findings of every resource under `scope` (an app or a stack), synthesized or not. */
export function nagFindings(scope: IConstruct): NagFinding[] {
  const report = new AwsSolutionsChecks().validateScope(scope);
  return report.violations.flatMap((violation) =>
    violation.violatingResources.map((resource) => ({
      rule: violation.ruleName,
      severity: violation.severity ?? 'error',
      resource: resource.constructPath ?? resource.resourceLogicalId ?? '(unknown resource)',
      description: violation.description,
    })),
  );
}

/** The findings as lines `rule (severity) ×count: what` followed by the resources, sorted by rule. */
export function formatFindings(findings: readonly NagFinding[]): string {
  if (findings.length === 0) return 'cdk-nag AwsSolutions: no findings';
  const byRule = new Map<string, NagFinding[]>();
  for (const finding of findings) byRule.set(finding.rule, [...(byRule.get(finding.rule) ?? []), finding]);
  const lines = [`cdk-nag AwsSolutions: ${findings.length} finding(s) of ${byRule.size} rule(s)`];
  for (const [rule, list] of [...byRule].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`${rule} (${list[0]?.severity}) ×${list.length}: ${list[0]?.description}`);
    for (const finding of list) lines.push(`  ${finding.resource}`);
  }
  return lines.join('\n');
}

/** Builds and synthesizes the app as `cdk synth` would, then prints its findings; exit code 1 when there is one. */
export function main(): void {
  runApp((app: App) => {
    const findings = nagFindings(app);
    process.stdout.write(`${formatFindings(findings)}\n`);
    if (findings.length > 0) process.exitCode = 1;
  });
}

if (isMainModule(import.meta.url)) main();
