/**
 * Read access to the secrets the config references (`${aws-secret:…}`, `${aws-ssm:…}`:
 * shared/config/secret-refs.ts), granted to exactly the functions that fetch them: the table
 * SECRET_READERS says which function reads which key (the audit token → the audit function, the tsdb
 * credentials → the tsdb writer, the monitoring SaaS keys → the monsaas writer), and each function
 * fetches at cold start exactly the references of its keys (functions/lambda-runtime.ts).
 *
 * Read-only: `secretsmanager:GetSecretValue` (the one call shared/aws/secret-stores.ts makes for a
 * secret; never DescribeSecret) and `ssm:GetParameter` (decrypted), each on the ARN of
 * the secret or parameter; `kms:Decrypt` only on the customer managed keys named in context, and only
 * through those two services. A secret encrypted with the AWS managed key (aws/secretsmanager,
 * aws/ssm) needs no KMS grant: its key policy lets the service decrypt for any principal of the
 * account that may read the secret.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { type SecretRef, type SecretRefAt, secretReader } from '../../shared/config/secret-refs.js';

/** One function's grant: what it may read. */
export interface SecretGrant {
  reader: string;
  secretArns: string[];
  parameterArns: string[];
}

/**
 * The ARN to grant for a reference. A full ARN is used as it is. A secret's name becomes a partial
 * ARN with `-??????`: AWS appends six random characters to every secret's ARN, and IAM matches a
 * secret by its full ARN only, so a policy naming a secret by name must end in that wildcard (the
 * one wildcard in these grants, and one AWS requires:
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/auth-and-access_examples.html).
 * A parameter's name becomes `parameter/<name without its leading slash>`.
 */
export function secretResourceArn(scope: Construct, ref: SecretRef): string {
  if (ref.region !== undefined) return ref.id;
  const stack = Stack.of(scope);
  if (ref.store === 'secret')
    return stack.formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${ref.id}-??????`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  return stack.formatArn({
    service: 'ssm',
    resource: 'parameter',
    resourceName: ref.id.replace(/^\//, ''),
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
}

export interface SecretGrantsProps {
  /** The references of the config's sections in use (LoadedConfig.secretRefs). */
  references: readonly SecretRefAt[];
  /** The deployed function of each reader (`audit`, `tsdb`, `monsaas`); a reader without one is granted nothing. */
  readers: Readonly<Record<string, IGrantable | undefined>>;
  /** ARNs of customer managed KMS keys that encrypt referenced secrets or SecureString parameters. */
  kmsKeyArns?: readonly string[];
}

/** Adds each reader's read-only statements to its role; returns the grants made (for synth notes and tests). */
export function grantSecretReads(scope: Construct, props: SecretGrantsProps): SecretGrant[] {
  const grants = new Map<string, { secrets: Set<string>; parameters: Set<string>; regions: Set<string> }>();
  for (const at of props.references) {
    const reader = secretReader(at.path);
    if (reader === undefined || props.readers[reader] === undefined) continue;
    let grant = grants.get(reader);
    if (!grant) grants.set(reader, (grant = { secrets: new Set(), parameters: new Set(), regions: new Set() }));
    (at.ref.store === 'secret' ? grant.secrets : grant.parameters).add(secretResourceArn(scope, at.ref));
    grant.regions.add(at.ref.region ?? Stack.of(scope).region);
  }
  const made: SecretGrant[] = [];
  for (const [reader, grant] of grants) {
    const principal = props.readers[reader]?.grantPrincipal;
    if (!principal) continue;
    const secretArns = [...grant.secrets];
    const parameterArns = [...grant.parameters];
    if (secretArns.length > 0)
      principal.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: secretArns }),
      );
    if (parameterArns.length > 0)
      principal.addToPrincipalPolicy(new PolicyStatement({ actions: ['ssm:GetParameter'], resources: parameterArns }));
    if (props.kmsKeyArns && props.kmsKeyArns.length > 0) {
      const services = [...grant.regions].flatMap((region) => [
        ...(secretArns.length > 0 ? [`secretsmanager.${region}.amazonaws.com`] : []),
        ...(parameterArns.length > 0 ? [`ssm.${region}.amazonaws.com`] : []),
      ]);
      principal.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['kms:Decrypt'],
          resources: [...props.kmsKeyArns],
          conditions: { StringEquals: { 'kms:ViaService': services } },
        }),
      );
    }
    made.push({ reader, secretArns, parameterArns });
  }
  return made;
}
