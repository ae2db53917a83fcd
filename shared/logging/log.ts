/**
 * What every part of Svc logs through: the service logger (`Logger`, pino) satisfies it, and so does a
 * test's capture. One type for everything that logs, so a component never declares its own subset.
 */
export interface Log {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
