/**
 * Acknowledging a cdk-nag finding at the construct that causes it, with the reason beside it
 * (CDK's `Validations.of(construct).acknowledge`, which cdk-nag 3 reads; the stack does not depend
 * on cdk-nag). `npm run nag` and test/infra/nag.test.ts report every finding not acknowledged.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledges the AwsSolutions rule `rule` (e.g. `DDB3`) for `construct` and everything under it. */
export function acknowledgeNag(construct: IConstruct, rule: string, reason: string): void {
  Validations.of(construct).acknowledge({ id: `AwsSolutions-${rule}`, reason });
}

/**
 * Acknowledges one wildcard resource of the IAM policies under `principal` (its role or user): the
 * AwsSolutions-IAM5 finding of that resource alone, so any other wildcard is still reported.
 * `resource` is the ARN as granted (tokens and all); the finding names it as cdk-nag renders it.
 */
export function acknowledgeWildcardResource(principal: IConstruct, resource: string, reason: string): void {
  acknowledgeNag(principal, `IAM5[Resource::${renderedResource(Stack.of(principal).resolve(resource))}]`, reason);
}

/**
 * A resolved CloudFormation value as cdk-nag's findings show it: `Ref` and `Fn::GetAtt` as
 * `<LogicalId>` and `<LogicalId.Attribute>`, `Fn::Join` joined.
 */
function renderedResource(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return String(value);
  if ('Ref' in value && typeof value.Ref === 'string') return `<${value.Ref}>`;
  if ('Fn::GetAtt' in value && Array.isArray(value['Fn::GetAtt'])) return `<${value['Fn::GetAtt'].join('.')}>`;
  const join: unknown = 'Fn::Join' in value ? value['Fn::Join'] : undefined;
  if (Array.isArray(join)) {
    const separator: unknown = join[0];
    const parts: unknown = join[1];
    if (typeof separator === 'string' && Array.isArray(parts))
      return parts.map((part: unknown) => renderedResource(part)).join(separator);
  }
  return JSON.stringify(value);
}
