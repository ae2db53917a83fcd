/**
 * The container health endpoint (platform-formats.md §10.3, docs/operations.md): `GET /health`
 * answers 200 `{"statusCode":200,"status":"ok"}`, or 503 `{"statusCode":503,"status":"ko","reason":…}`
 * naming every problem at once: an enabled UDP listener that is not bound, an event loop more than
 * 1 s late, a durable queue that cannot write to its disk or is full. In `svc edge` forwarding to
 * the cloud, the body also has `forwarding`: the state of each forwarded destination (an unreachable
 * cloud alone is not unhealthy: the durable local queue keeps the events until it is back;
 * docs/deployment.md). `HEAD /health` answers the same status without a body; other methods 405,
 * other paths 404. It reads Svc's parts through `Observed` at each request, so it costs nothing
 * between probes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Log } from '../../../shared/logging/log.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { close, listen } from '../http-server.js';
import type { Observed } from '../observed.js';
import { EventLoopLag } from './event-loop.js';

export const HEALTH_PATH = '/health';
/** More lag than this is unhealthy (§10.3). */
export const MAX_EVENT_LOOP_LAG_MS = 1000;

export interface HealthEndpointOptions {
  /** undefined (Svc's choice, §10.3): every interface, so an orchestrator's probe reaches it; tests give a loopback address. */
  host?: string;
  /** 0 picks a free port (tests). */
  port: number;
  observed: Observed;
  log: Log;
  /** What the health endpoint states the event-loop lag from; default a sampler of its own, started and stopped with it. */
  lag?: EventLoopLag;
}

/** Why Svc is not healthy now, one text per problem; empty when it is. */
export function unhealthyReasons(observed: Observed, lagMs: number): string[] {
  const reasons: string[] = [];
  for (const listener of observed.listeners) if (!listener.bound) reasons.push(`${listener.name} is not bound`);
  if (lagMs > MAX_EVENT_LOOP_LAG_MS)
    reasons.push(`event loop lag ${Math.round(lagMs)} ms exceeds ${MAX_EVENT_LOOP_LAG_MS} ms`);
  for (const { name, queue } of observed.queues) {
    const fault = queue.storageFault;
    if (fault)
      reasons.push(
        `the ${name} queue cannot write its ${fault.log} to disk (${fault.code}) since ${new Date(fault.since).toISOString()}`,
      );
    // Full: new events are refused (and lost upstream). Merely growing, e.g. while the cloud is
    // unreachable, is the durable queue doing its job: a restart would not help, so that stays 200.
    const held = Math.max(0, ...Object.values(queue.stats()).map((s) => s.pendingEvents));
    if (held >= queue.capacity)
      reasons.push(`the ${name} queue is full (${held} of ${queue.capacity} events): new events are refused`);
  }
  return reasons;
}

/** The state of one destination the edge forwards to the cloud, as the body of GET /health shows it. */
export interface ForwardingHealth {
  state: 'ok' | 'unreachable';
  /** While unreachable: since when (ISO 8601). The reason is in the log only (it may name hosts). */
  unreachableSince: string | null;
  pendingEvents: number;
  oldestPendingAgeSeconds: number;
}

/** Per destination forwarded to the cloud (`svc edge` with Svc.cloud): its state; empty without forwarding. */
export function forwardingHealth(observed: Observed, now = Date.now()): Record<string, ForwardingHealth> {
  const out: Record<string, ForwardingHealth> = {};
  for (const { queue, destinations } of observed.queues) {
    const stats = queue.stats();
    for (const d of destinations) {
      const s = stats[d.name];
      if (!d.sqs || !s) continue;
      out[d.name] = {
        state: s.unavailableSince === null ? 'ok' : 'unreachable',
        unreachableSince: s.unavailableSince === null ? null : new Date(s.unavailableSince).toISOString(),
        pendingEvents: s.pendingEvents,
        oldestPendingAgeSeconds:
          s.oldestPendingAt === null ? 0 : Math.max(0, Math.round((now - s.oldestPendingAt) / 1000)),
      };
    }
  }
  return out;
}

export class HealthEndpoint implements Component {
  readonly name: string;
  private server: Server | undefined;
  private boundPort = 0;
  private readonly lag: EventLoopLag;
  /** The reasons of the last answer, to log a change of state once rather than every probe. */
  private lastReasons = '';

  constructor(private readonly options: HealthEndpointOptions) {
    this.name = `container health endpoint (${options.host === undefined ? 'all interfaces' : options.host}, port ${options.port}, ${HEALTH_PATH})`;
    this.lag = options.lag ?? new EventLoopLag();
  }

  /** The port listened on (differs from the option only when that is 0). */
  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const { host, port, log } = this.options;
    await this.lag.start();
    const server = createServer((req, res) => this.answer(req, res));
    try {
      this.boundPort = await listen(server, {
        host,
        port,
        what: 'Svc.containerHealthCheck.port: the container health endpoint',
        log,
      });
    } catch (err) {
      await this.lag.stop();
      throw err;
    }
    this.server = server;
    log.info(
      { host: host ?? 'all interfaces', port: this.boundPort },
      `container health endpoint listening on port ${this.boundPort} (${host ?? 'all interfaces'}): GET ${HEALTH_PATH}`,
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await close(server);
    await this.lag.stop();
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const head = req.method === 'HEAD';
    try {
      const path = (req.url ?? '').split('?')[0];
      if (path !== HEALTH_PATH)
        return json(res, head, 404, { statusCode: 404, error: `not found: the health check is GET ${HEALTH_PATH}` });
      if (req.method !== 'GET' && !head) {
        res.setHeader('allow', 'GET, HEAD');
        return json(res, head, 405, {
          statusCode: 405,
          error: `method ${req.method ?? ''} not allowed: use GET or HEAD`,
        });
      }
      const reasons = unhealthyReasons(this.options.observed, this.lag.lagMs());
      this.logChange(reasons);
      const forwarding = forwardingHealth(this.options.observed);
      const extra: Record<string, Record<string, ForwardingHealth>> = Object.keys(forwarding).length > 0
        ? { forwarding }
        : {};
      if (reasons.length === 0) return json(res, head, 200, { statusCode: 200, status: 'ok', ...extra });
      return json(res, head, 503, { statusCode: 503, status: 'ko', reason: reasons.join('; '), ...extra });
    } catch (err) {
      this.options.log.error({ err }, 'container health endpoint: answering failed; answered 500');
      if (!res.headersSent) json(res, head, 500, { statusCode: 500, error: 'internal error' });
      else res.destroy();
    }
  }

  private logChange(reasons: readonly string[]): void {
    const text = reasons.join('; ');
    if (text === this.lastReasons) return;
    this.lastReasons = text;
    if (text === '') this.options.log.info({ health: 'ok' }, 'container health: ok again (GET /health answers 200)');
    else this.options.log.warn({ health: 'ko', reasons }, `container health: GET /health answers 503: ${text}`);
  }
}

function json(
  res: ServerResponse,
  head: boolean,
  status: number,
  body: Record<string, string | number | Record<string, ForwardingHealth>>,
): void {
  const text = JSON.stringify(body);
  // A probe must see the state of now, never a cached one.
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(head ? undefined : text);
}
