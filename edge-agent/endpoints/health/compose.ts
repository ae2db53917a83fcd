/**
 * The container health endpoint of a process (`Svc.containerHealthCheck`, platform-formats.md
 * §10.3): on every interface, on its port, reading the parts the composition registers in `observed`.
 */
import type { AppContext } from '../../../shared/runtime/context.js';
import type { Observed } from '../observed.js';
import { HealthEndpoint } from './endpoint.js';

/** The endpoint, when `containerHealthCheck.enable`; else null. */
export function healthEndpoint(ctx: Pick<AppContext, 'config' | 'logger'>, observed: Observed): HealthEndpoint | null {
  const settings = ctx.config.containerHealthCheck;
  if (!settings.enable) return null;
  return new HealthEndpoint({ port: settings.port, observed, log: ctx.logger });
}
