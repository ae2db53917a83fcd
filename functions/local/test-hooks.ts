/**
 * Hooks the crash tests set through the environment; without the variable nothing happens.
 *
 * SVC_TEST_CRASH_BEFORE_SETTLE=<group>[,<group>…]: once every named consumer group of the audit
 * queue has had a batch written by its destination and not yet recorded as delivered, the process
 * kills itself with SIGKILL. This puts the crash exactly between a destination write and its
 * acknowledgement, which no timing guess from outside can.
 */
export const CRASH_BEFORE_SETTLE_ENV = 'SVC_TEST_CRASH_BEFORE_SETTLE';

export function crashBeforeSettle(
  env: NodeJS.ProcessEnv = process.env,
): ((group: string) => Promise<void>) | undefined {
  const groups = new Set(
    (env[CRASH_BEFORE_SETTLE_ENV] ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g !== ''),
  );
  if (groups.size === 0) return undefined;
  const reached = new Set<string>();
  return (group) => {
    if (!groups.has(group)) return Promise.resolve();
    reached.add(group);
    if (reached.size === groups.size) process.kill(process.pid, 'SIGKILL');
    // Hold this group's outcome until the others have written too.
    return new Promise<void>(() => undefined);
  };
}
