/**
 * The MQTT writer (platform-formats.md §7): one client per process, connected to
 * `mqtt://<brokerHost>:<brokerPort>` (`mqtts://` with `mqttConfig.tls.enable`), with the client id,
 * user name, password and TLS files of security.ts, publishing UTF-8 string payloads with QoS 0, not
 * retained. The per-feature topics and payloads (§7.1–7.4) are built by the features; this is the
 * transport.
 *
 * - A lifecycle component: `start()` connects and resolves once connected, or — with a WARN — when
 *   the first connection attempt fails or `connectTimeoutMs` passes. A broker that is down at start
 *   does not stop Svc: the client keeps reconnecting in the background (every `reconnectPeriodMs`).
 * - A broker that refuses the connection (CONNACK: bad user name or password, not authorised, …) or
 *   a TLS handshake that fails (an untrusted or misnamed broker certificate, a client certificate
 *   the broker wants or refuses) is one ERROR naming the broker, the reason in words and what to
 *   check, tracked once as `MQTT_PUBLISH` (module `MQTT_CONNECTION`), not a line per attempt; the
 *   next connection says so at INFO. While refused, the attempts back off: the reconnect period
 *   doubles up to `refusedReconnectCapMs`. (The mqtt library gives up after a refusal; the writer
 *   asks it to connect again.) A TLS failure is retried every `reconnectPeriodMs` by the library.
 * - `publish()` never throws. It resolves true once the message is written to the broker connection
 *   (all QoS 0 promises), false when the writer is not connected, the topic is not publishable or the
 *   write fails; every false is tracked as `MQTT_PUBLISH` with the caller's module, the error carrying
 *   `host` = broker host, and logged at ERROR (at most one line per module and minute).
 * - A broker that is away (down, unreachable, the connection lost) is one WARN and one tracked error
 *   per outage. The writer queues nothing meanwhile (QoS 0); the MQTT destination keeps the events
 *   waiting in the local queue while the writer is not connected (`unavailableReason`).
 * - `stop()` waits for the publishes in flight, then disconnects cleanly.
 *
 * The writer does not look at `mqttConfig.enable` or feature flags (§0.6): callers only create and
 * use it when MQTT is enabled. The mqtt library (≈ 9 MB of RSS) is imported by `start()`, so a
 * process whose config has no MQTT destination never loads it.
 */
import type * as Mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import type { ErrorTracker } from '../../errors/tracker.js';
import type { Log } from '../../logging/log.js';
import { LogThrottle } from '../../logging/throttle.js';
import type { Component } from '../../runtime/lifecycle.js';
import { type ConnectionFailure, connectionFailure } from './refusals.js';
import { type MqttSettings, mqttSecurity } from './security.js';

export type { MqttSettings } from './security.js';

/** The module a refused connection or failed TLS handshake is tracked with (Svc's addition to §10.9). */
export const MQTT_CONNECTION_MODULE = 'MQTT_CONNECTION';

export interface MqttWriterOptions {
  settings: MqttSettings;
  log: Log;
  errors: Pick<ErrorTracker, 'track'>;
  /** How long `start()` waits for the first connection, also the CONNACK timeout; default 5 s. */
  connectTimeoutMs?: number;
  /** Wait between reconnection attempts; default 1 s. */
  reconnectPeriodMs?: number;
  /** Longest wait between attempts while the broker refuses the connection; default 60 s. */
  refusedReconnectCapMs?: number;
  /** Longest a publish may take to be written to the connection; default 10 s. */
  publishTimeoutMs?: number;
  /** Longest `stop()` waits for in-flight publishes and the clean disconnect; default 5 s. */
  stopTimeoutMs?: number;
  /** At most one ERROR line per module in this interval; default 60 s. */
  errorLogIntervalMs?: number;
}

/** The error given to the error tracker for a failed publish (§10.9 metadata: `host`, `code`). */
export class MqttPublishError extends Error {
  override readonly name = 'MqttPublishError';
  /** Broker host (`mqttConfig.brokerHost`). */
  readonly host: string;
  readonly port: number;
  readonly topic: string;
  /** Network error code when the client reported one (`ETIMEDOUT`, `ECONNRESET`, …). */
  readonly code: string | undefined;

  constructor(message: string, details: { host: string; port: number; topic: string; code?: string; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.host = details.host;
    this.port = details.port;
    this.topic = details.topic;
    this.code = details.code;
  }
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_RECONNECT_PERIOD_MS = 1_000;
const DEFAULT_REFUSED_RECONNECT_CAP_MS = 60_000;
const DEFAULT_PUBLISH_TIMEOUT_MS = 10_000;
const DEFAULT_STOP_TIMEOUT_MS = 5_000;
const MAX_TOPIC_BYTES = 65_535;

/** §7: a topic level built from data, with the wildcards `+` and `#` replaced by `_`. */
export function topicLevel(text: string): string {
  return text.replace(/[+#]/g, '_');
}

/** Why `topic` cannot be published to, or undefined when it can (MQTT 3.1.1 §4.7). */
export function invalidTopicReason(topic: string): string | undefined {
  if (topic === '') return 'the topic is empty';
  if (/[+#]/.test(topic)) return 'the topic contains a wildcard (+ or #)';
  if (topic.includes('\u0000')) return 'the topic contains U+0000';
  if (Buffer.byteLength(topic, 'utf8') > MAX_TOPIC_BYTES) return `the topic is longer than ${MAX_TOPIC_BYTES} bytes`;
  return undefined;
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code: unknown = Reflect.get(err, 'code');
  return typeof code === 'string' ? code : undefined;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The mqtt library, imported once by the first start(). */
let mqttLibrary: Promise<typeof Mqtt> | undefined;

export class MqttWriter implements Component {
  readonly name = 'mqtt-writer';
  /** `mqtt://host:port` or `mqtts://host:port` */
  readonly url: string;
  private readonly settings: MqttSettings;
  private readonly log: Log;
  private readonly errors: Pick<ErrorTracker, 'track'>;
  private readonly connectTimeoutMs: number;
  private readonly reconnectPeriodMs: number;
  private readonly refusedReconnectCapMs: number;
  private readonly publishTimeoutMs: number;
  private readonly stopTimeoutMs: number;
  private readonly throttle: LogThrottle;
  private readonly inFlight = new Set<Promise<unknown>>();
  private client: MqttClient | undefined;
  private started = false;
  private stopping = false;
  /** True after a connection was lost, until the next one is made (one WARN per outage). */
  private outage = false;
  /** The refusal or TLS failure of the last attempt (one ERROR per change), until a connection is made. */
  private failure: { key: string; since: number; attempts: number } | undefined;
  /** The next attempt after a refusal (the library makes none of its own). */
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(options: MqttWriterOptions) {
    this.settings = options.settings;
    this.log = options.log;
    this.errors = options.errors;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.reconnectPeriodMs = options.reconnectPeriodMs ?? DEFAULT_RECONNECT_PERIOD_MS;
    this.refusedReconnectCapMs = Math.max(
      this.reconnectPeriodMs,
      options.refusedReconnectCapMs ?? DEFAULT_REFUSED_RECONNECT_CAP_MS,
    );
    this.publishTimeoutMs = options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS;
    this.stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    this.throttle = new LogThrottle(options.errorLogIntervalMs ?? 60_000);
    const host = this.settings.brokerHost.includes(':') ? `[${this.settings.brokerHost}]` : this.settings.brokerHost;
    this.url = `${this.settings.tls.enable ? 'mqtts' : 'mqtt'}://${host}:${this.settings.brokerPort}`;
  }

  /** Whether the client is connected to the broker right now. */
  get connected(): boolean {
    return this.client?.connected === true;
  }

  /** Why the writer cannot publish now (for the queue's outage line), or undefined when it is connected. */
  get unavailableReason(): string | undefined {
    if (this.connected) return undefined;
    if (this.failure !== undefined) return `the MQTT broker ${this.url} refuses the connection (see the ERROR line)`;
    return `not connected to the MQTT broker ${this.url}`;
  }

  /**
   * Connects. Rejects only when the TLS files or credentials cannot be used (start-up checked them
   * already with `checkMqttSecurity`; this is the same check, for a file changed since).
   */
  async start(): Promise<void> {
    if (this.started || this.stopping) throw new Error('MqttWriter.start() called twice or after stop()');
    this.started = true;
    const checked = mqttSecurity(this.settings);
    if (!checked.ok)
      throw new Error(
        `the MQTT settings cannot be used: ${checked.problems.map((p) => `Svc.${p.path.join('.')}: ${p.message}`).join('; ')}`,
      );
    const library = await (mqttLibrary ??= import('mqtt'));
    // stop() while the library loaded: there is nothing to connect.
    if (this.stopping) return;
    const security = checked.security;
    const broker = { host: this.settings.brokerHost, port: this.settings.brokerPort, url: this.url };
    const client = library.connect(this.url, {
      ...security,
      clean: true,
      connectTimeout: this.connectTimeoutMs,
      reconnectPeriod: this.reconnectPeriodMs,
      // QoS 0 messages are not held back while disconnected: publish() fails at once instead.
      queueQoSZero: false,
    });
    this.client = client;

    let settled = false;
    /** The connection attempt whose failure was reported. */
    let failedStream: unknown;
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        if (settled) return;
        this.outageBegins(
          { ...broker, timeoutMs: this.connectTimeoutMs },
          'MQTT broker not reached at start; publishes fail until it is, reconnecting in the background',
          'ETIMEDOUT',
        );
        finish();
      }, this.connectTimeoutMs);

      client.on('connect', () => {
        const failure = this.failure;
        if (failure !== undefined) {
          this.log.info(
            {
              ...broker,
              clientId: security.clientId,
              refusedMs: Date.now() - failure.since,
              attempts: failure.attempts,
            },
            `the MQTT broker ${this.url} accepts the connection again`,
          );
        } else if (!settled) {
          this.log.info({ ...broker, clientId: security.clientId }, 'connected to the MQTT broker');
        } else if (this.outage) {
          this.log.info(broker, 'reconnected to the MQTT broker');
        }
        this.failure = undefined;
        this.outage = false;
        finish();
      });
      client.on('error', (err: Error) => {
        const failure = connectionFailure(err, err instanceof library.ErrorWithReasonCode && !client.connected);
        if (failure !== undefined) {
          // A failed TLS handshake reaches the client twice (from the TLS layer and from the stream).
          if (failedStream === client.stream) return;
          failedStream = client.stream;
          this.outage = true;
          this.refused(failure, err, security.clientId, failure.kind === 'refused' ? client : undefined);
          finish();
          return;
        }
        const details = { ...broker, code: errorCode(err), reason: err.message };
        if (!settled) {
          this.outageBegins(
            details,
            'MQTT broker not reached at start; publishes fail until it is, reconnecting in the background',
            details.code,
            err,
          );
          finish();
        } else if (!this.outage) {
          this.outageBegins(details, 'MQTT connection error; reconnecting in the background', details.code, err);
        } else {
          this.log.debug(details, 'MQTT reconnection failed');
        }
      });
      client.on('close', () => {
        if (this.stopping || !settled || this.outage) return;
        this.outageBegins(broker, 'MQTT connection lost; reconnecting in the background', undefined);
      });
    });
  }

  /**
   * The broker is away (down, unreachable, the connection lost): one WARN and one tracked error for
   * the outage (`MQTT_PUBLISH`, module `MQTT_CONNECTION`), not one per reconnection attempt. The
   * events meanwhile wait in the local queue (destination.ts), so nothing else fails to track.
   */
  private outageBegins(details: object, message: string, code: string | undefined, cause?: unknown): void {
    this.outage = true;
    this.log.warn(details, message);
    const host = this.settings.brokerHost;
    this.errors.track(
      'MQTT_PUBLISH',
      new MqttPublishError(`${message} (${this.url})`, {
        host,
        port: this.settings.brokerPort,
        topic: '',
        ...(code === undefined ? {} : { code }),
        cause,
      }),
      { module: MQTT_CONNECTION_MODULE, destinationHost: host },
    );
  }

  /**
   * A refusal or TLS failure: one ERROR and one tracked error per distinct failure, DEBUG for the
   * attempts that meet it again. `retry`: the client to connect again after the backoff (a refused
   * CONNACK ends the library's reconnecting; a TLS failure does not).
   */
  private refused(failure: ConnectionFailure, err: Error, clientId: string, retry: MqttClient | undefined): void {
    const key = `${failure.kind}:${failure.code}`;
    const previous = this.failure;
    const attempts = previous === undefined ? 1 : previous.attempts + 1;
    this.failure = { key, since: previous?.since ?? Date.now(), attempts };
    const waitMs = retry
      ? Math.min(this.refusedReconnectCapMs, this.reconnectPeriodMs * 2 ** Math.min(attempts - 1, 30))
      : this.reconnectPeriodMs;
    const host = this.settings.brokerHost;
    const details = {
      host,
      port: this.settings.brokerPort,
      url: this.url,
      clientId,
      code: failure.code,
      reason: failure.reason,
    };
    if (previous?.key !== key) {
      const what =
        failure.kind === 'refused'
          ? `the MQTT broker ${this.url} refused the connection: ${failure.reason} (code ${failure.code})`
          : `the TLS handshake with the MQTT broker ${this.url} failed: ${failure.reason} (${failure.code})`;
      this.log.error(
        { ...details, check: failure.check },
        `${what}; check ${failure.check}. Nothing is published until it connects; events wait in the local queue, and Svc tries again${retry ? `, backing off up to every ${Math.round(this.refusedReconnectCapMs / 1000)} s` : ` every ${this.reconnectPeriodMs} ms`}`,
      );
      this.errors.track(
        'MQTT_PUBLISH',
        new MqttPublishError(`${what}; check ${failure.check}`, {
          host,
          port: this.settings.brokerPort,
          topic: '',
          code: failure.code,
          cause: err,
        }),
        { module: MQTT_CONNECTION_MODULE, destinationHost: host },
      );
    } else {
      this.log.debug(
        { ...details, attempts, waitMs },
        failure.kind === 'refused'
          ? 'the MQTT broker still refuses the connection'
          : 'the TLS handshake with the MQTT broker still fails',
      );
    }
    if (retry === undefined) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.stopping) retry.reconnect();
    }, waitMs);
  }

  /**
   * Publishes `payload` (UTF-8) to `topic` with QoS 0, not retained. Resolves true once written to the
   * broker connection; false (tracked as `MQTT_PUBLISH` with `module`, logged) otherwise. Never rejects.
   */
  async publish(topic: string, payload: string, module: string, serverName?: string): Promise<boolean> {
    const client = this.client;
    if (client === undefined || this.stopping) {
      return this.fail(
        topic,
        module,
        serverName,
        this.stopping ? 'the MQTT writer is stopped' : 'the MQTT writer is not started',
      );
    }
    const invalid = invalidTopicReason(topic);
    if (invalid !== undefined) return this.fail(topic, module, serverName, invalid);
    if (!client.connected) return this.fail(topic, module, serverName, 'not connected to the MQTT broker');

    const sent = this.send(client, topic, payload);
    this.inFlight.add(sent);
    let err: unknown;
    try {
      err = await sent;
    } finally {
      this.inFlight.delete(sent);
    }
    if (err === undefined) return true;
    return this.fail(topic, module, serverName, `publish failed: ${errorMessage(err)}`, err);
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    if (client === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.stopTimeoutMs);
    });
    try {
      const graceful = (async () => {
        await Promise.allSettled([...this.inFlight]);
        // Connected: DISCONNECT after what is written; otherwise just stop reconnecting.
        await client.endAsync(!client.connected);
      })();
      const outcome = await Promise.race([graceful.then(() => 'ok' as const), deadline]);
      if (outcome === 'timeout') {
        this.log.warn(
          { host: this.settings.brokerHost, port: this.settings.brokerPort, timeoutMs: this.stopTimeoutMs },
          'MQTT client did not end in time; closing it',
        );
        await client.endAsync(true);
      }
    } catch (err) {
      this.log.warn(
        { host: this.settings.brokerHost, reason: errorMessage(err) },
        'error while ending the MQTT client',
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** The publish, resolving with the error or undefined; a write that never completes times out. */
  private send(client: MqttClient, topic: string, payload: string): Promise<unknown> {
    return new Promise<unknown>((resolve) => {
      const timer = setTimeout(() => {
        resolve(
          Object.assign(new Error(`publish not written within ${this.publishTimeoutMs} ms (timeout)`), {
            code: 'ETIMEDOUT',
          }),
        );
      }, this.publishTimeoutMs);
      const done = (err?: unknown): void => {
        clearTimeout(timer);
        resolve(err ?? undefined);
      };
      try {
        client.publish(topic, payload, { qos: 0, retain: false }, (err) => done(err));
      } catch (err) {
        done(err ?? new Error('publish threw'));
      }
    });
  }

  private fail(topic: string, module: string, serverName: string | undefined, reason: string, cause?: unknown): false {
    const host = this.settings.brokerHost;
    const port = this.settings.brokerPort;
    const code = errorCode(cause);
    const err = new MqttPublishError(`MQTT publish to ${topic} on ${host}:${port} failed: ${reason}`, {
      host,
      port,
      topic,
      ...(code === undefined ? {} : { code }),
      ...(cause === undefined ? {} : { cause }),
    });
    this.errors.track('MQTT_PUBLISH', err, {
      ...(serverName === undefined ? {} : { serverName }),
      module,
      destinationHost: host,
    });
    const { log, suppressed } = this.throttle.take(module);
    if (log) {
      this.log.error(
        { module, host, port, topic, reason, ...(suppressed > 0 ? { suppressed } : {}) },
        'MQTT publish failed',
      );
    } else {
      this.log.debug({ module, host, port, topic, reason }, 'MQTT publish failed');
    }
    return false;
  }
}
