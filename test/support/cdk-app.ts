/** The CDK app the infra suites synthesize: the context of cdk.json, as `cdk synth` would use it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { isRecord } from '../../shared/util/records.js';
import { REPO_ROOT } from './build.js';

/** cdk.json's `context`. */
export const CDK_CONTEXT: Readonly<Record<string, unknown>> = (() => {
  const file: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8'));
  const context = isRecord(file) ? file['context'] : undefined;
  if (!isRecord(context)) throw new Error('cdk.json has no context object');
  return context;
})();

/** An App writing to `outdir`, with cdk.json's context plus `context` (CloudFormation validation off: offline). */
export function cdkApp(outdir: string, context: Record<string, unknown>): App {
  return new App({ outdir, context: { ...CDK_CONTEXT, ...context }, builtinCloudFormationValidation: false });
}
