/**
 * One UDP listener (platform-formats.md §3): an IPv4 socket on `serverHost:port` whose datagrams go
 * through the checks source → size → rate limit → queue, in that order, the first failing one
 * dropping and counting the datagram. Accepted datagrams wait in the MessageQueue for a handler.
 *
 * Nothing is dropped silently: every reason has its counter, the kernel's own drops (receive
 * buffer overflow, invisible to a process) are read from the OS and counted as `kernel`, a summary
 * of the last minute's drops is logged at most once a minute, and a socket error is logged and the
 * listener goes on receiving (binding a new socket if the old one closed).
 */
import dgram from 'node:dgram';
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { ErrorTracker } from '../../../shared/errors/tracker.js';
import type { Log } from '../../../shared/logging/log.js';
import { LogThrottle } from '../../../shared/logging/throttle.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { FixedWindowRateLimit, type Resolve4, resolveAllowedSources, senderIPv4 } from './checks.js';
import { type KernelDropSource, ProcNetUdpDrops } from './kernel-drops.js';
import { type MessageHandler, MessageQueue } from './message-queue.js';

/** The settings both listeners share (`…udpServerConfig`). */
export type UdpServerSettings = Omit<SvcConfig['userEvents']['udpServerConfig'], 'portUserActivityEvents'>;

export type QueueType = 'user_events' | 'log_events';

export const DROP_REASONS = ['source', 'size', 'rate_limit', 'queue_full', 'kernel'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** A datagram as read from the socket. */
export interface ReceivedDatagram {
  data: Buffer;
  /** Sender IPv4 address. */
  address: string;
  port: number;
  /** Wall-clock ms at the read (§0.3 receive time). */
  receivedAtMs: number;
}

/**
 * The listener's counters since it was made (never reset): what the metrics endpoint exposes as
 * counters, and what §3's "since the last successful write" is derived from.
 */
export interface ListenerTotals {
  received: number;
  queued: number;
  processed: number;
  failed: number;
  /** Per reason; `kernel` stays 0 where the OS has no per-socket drop counter (`kernelCounted` false). */
  dropped: Record<DropReason, number>;
  kernelCounted: boolean;
}

/** §3 queue metrics, a snapshot. Counters are "since the last successful write". */
export interface QueueMetrics {
  queue_type: QueueType;
  queue_size: number;
  queue_max_size: number;
  queue_utilization_pct: number;
  queue_running: number;
  messages_received: number;
  messages_queued: number;
  messages_processed: number;
  messages_failed: number;
  messages_dropped_total: number;
  messages_dropped_rate_limit: number;
  messages_dropped_queue_full: number;
  messages_dropped_size: number;
  messages_dropped_source: number;
  /** Absent where the OS has no per-socket drop counter. */
  messages_dropped_kernel?: number;
  processing_time_avg_ms: number;
  processing_time_p95_ms: number;
  processing_time_max_ms: number;
  rate_limit_current: number;
  backpressure_active: 0 | 1;
}

export interface UdpListenerOptions {
  queueType: QueueType;
  port: number;
  settings: UdpServerSettings;
  handler: MessageHandler<ReceivedDatagram>;
  log: Log;
  errors: Pick<ErrorTracker, 'track'>;
  /** Error type and module for a socket error or a handler that throws (§1.3 step 6, §2.3 step 7). */
  errorType: 'UDP_USER_EVENT' | 'UDP_LOG_EVENT';
  module: string;
  /** Host-name resolution for allowedSources; default the system resolver (tests inject one). */
  resolve4?: Resolve4;
  /** The kernel drop counter; default /proc/net/udp where it exists, else none. */
  kernelDrops?: (address: string, port: number) => Promise<KernelDropSource | null>;
  /** Wall clock in ms; default Date.now. */
  now?: () => number;
  /** How often the kernel counter is read and backpressure re-evaluated; default 1 s. */
  pollIntervalMs?: number;
  /** Drop summary, backpressure repeat and per-sender WARN interval; default 60 s (§3). */
  summaryIntervalMs?: number;
  /** Wait before a closed socket is bound again; default 1 s. */
  rebindDelayMs?: number;
}

type DropCounts = Record<DropReason, number>;
const zeroDrops = (): DropCounts => ({ source: 0, size: 0, rate_limit: 0, queue_full: 0, kernel: 0 });

async function defaultKernelDrops(address: string, port: number): Promise<KernelDropSource | null> {
  return (await ProcNetUdpDrops.available()) ? new ProcNetUdpDrops(address, port) : null;
}

export class UdpListener implements Component {
  readonly name: string;
  readonly queue: MessageQueue<ReceivedDatagram>;
  private socket: dgram.Socket | undefined;
  private stopping = false;
  private allowed: ReadonlySet<string> | null = null;
  private readonly rateLimit: FixedWindowRateLimit | null;
  private kernel: KernelDropSource | null = null;
  private kernelLast: number | null = null;
  private polling: Promise<void> | undefined;
  private readonly now: () => number;
  /** Per sender IP (§3: one WARN per sender per 60 s, DEBUG otherwise), and for failing handlers. */
  private readonly senderWarn: LogThrottle;
  private readonly sizeWarn: LogThrottle;
  private readonly handlerWarn: LogThrottle;
  private timers: NodeJS.Timeout[] = [];
  private rebindTimer: NodeJS.Timeout | undefined;
  private backpressure = false;
  private backpressureWarnedAt = 0;
  /** Since the listener was made; the queue counts queued / processed / failed the same way. */
  private received = 0;
  private drops = zeroDrops();
  /** What the successful metrics writes carried so far: §3's counters are the totals minus this. */
  private committed: Omit<ListenerTotals, 'kernelCounted'> = {
    received: 0,
    queued: 0,
    processed: 0,
    failed: 0,
    dropped: zeroDrops(),
  };
  /** Since the last drop summary. */
  private minuteDrops = zeroDrops();
  private boundPort = 0;

  constructor(private readonly options: UdpListenerOptions) {
    this.name = `UDP listener ${options.queueType} (${options.settings.serverHost}:${options.port})`;
    this.now = options.now ?? Date.now;
    const interval = options.summaryIntervalMs ?? 60_000;
    this.senderWarn = new LogThrottle(interval, this.now);
    this.sizeWarn = new LogThrottle(interval, this.now);
    this.handlerWarn = new LogThrottle(interval, this.now);
    this.rateLimit = options.settings.rateLimit.enable
      ? new FixedWindowRateLimit(options.settings.rateLimit.maxMessagesPerMinute)
      : null;
    this.queue = new MessageQueue({
      maxSize: options.settings.messageQueue.maxSize,
      maxConcurrent: options.settings.messageQueue.maxConcurrent,
      handler: options.handler,
      onHandlerError: (err) => this.handlerFailed(err),
    });
  }

  get queueType(): QueueType {
    return this.options.queueType;
  }

  /** The port actually bound (differs from the option only when it is 0). */
  get port(): number {
    return this.boundPort;
  }

  /** Whether a socket is bound now: false before start, after stop, and while a closed socket waits to be bound again. */
  get bound(): boolean {
    return this.socket !== undefined;
  }

  async start(): Promise<void> {
    const { settings, log } = this.options;
    const sources = await resolveAllowedSources(
      settings.enableSourceValidation,
      settings.allowedSources,
      this.options.resolve4,
    );
    for (const u of sources.unresolved) {
      log.error(
        { listener: this.options.queueType, entry: u.entry, reason: u.reason },
        `allowedSources entry ${JSON.stringify(u.entry)} cannot be resolved to an IPv4 address (${u.reason}); it is skipped`,
      );
    }
    if (sources.disabledBecauseEmpty) {
      log.warn(
        { listener: this.options.queueType },
        `source validation is enabled for the ${this.options.queueType} listener, but no allowedSources entry resolved: validation is OFF and every sender is accepted`,
      );
    } else if (sources.allowed) {
      log.info(
        { listener: this.options.queueType, allowed: [...sources.allowed] },
        `source validation on: ${sources.allowed.size} allowed IPv4 address(es)`,
      );
    }
    this.allowed = sources.allowed;

    await this.bind();
    this.kernel = await (this.options.kernelDrops ?? defaultKernelDrops)(settings.serverHost, this.boundPort);
    if (this.kernel === null) {
      log.warn(
        { listener: this.options.queueType },
        'this OS offers no per-socket UDP drop counter: datagrams the kernel drops when the receive buffer overflows cannot be counted (metric messages_dropped_kernel omitted)',
      );
    } else {
      this.kernelLast = await this.kernel.read();
    }
    this.timers.push(setInterval(() => void this.poll(), this.options.pollIntervalMs ?? 1000));
    this.timers.push(setInterval(() => this.summarise(), this.options.summaryIntervalMs ?? 60_000));
    for (const t of this.timers) t.unref();
  }

  /** Stops receiving, lets the handlers finish what was accepted (bounded by the lifecycle's stop timeout). */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.rebindTimer) clearTimeout(this.rebindTimer);
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
    await this.queue.idle();
    await this.poll();
    this.summarise();
  }

  /** The counters since the listener was made (the kernel counter as of the last poll). */
  totals(): ListenerTotals {
    const q = this.queue;
    return {
      received: this.received,
      queued: q.queued,
      processed: q.processed,
      failed: q.failed,
      dropped: { ...this.drops },
      kernelCounted: this.kernel !== null,
    };
  }

  /** §3 metrics snapshot (the kernel counter as of the last poll). */
  metrics(): QueueMetrics {
    const q = this.queue;
    const totals = this.totals();
    const c = this.committed;
    const t = totals.dropped;
    const d: DropCounts = {
      source: t.source - c.dropped.source,
      size: t.size - c.dropped.size,
      rate_limit: t.rate_limit - c.dropped.rate_limit,
      queue_full: t.queue_full - c.dropped.queue_full,
      kernel: t.kernel - c.dropped.kernel,
    };
    const durations = q.durations.stats();
    const total = d.source + d.size + d.rate_limit + d.queue_full + (this.kernel ? d.kernel : 0);
    return {
      queue_type: this.options.queueType,
      queue_size: q.size,
      queue_max_size: q.maxSize,
      queue_utilization_pct: q.utilisationPct,
      queue_running: q.running,
      messages_received: totals.received - c.received,
      messages_queued: totals.queued - c.queued,
      messages_processed: totals.processed - c.processed,
      messages_failed: totals.failed - c.failed,
      messages_dropped_total: total,
      messages_dropped_rate_limit: d.rate_limit,
      messages_dropped_queue_full: d.queue_full,
      messages_dropped_size: d.size,
      messages_dropped_source: d.source,
      ...(this.kernel ? { messages_dropped_kernel: d.kernel } : {}),
      processing_time_avg_ms: durations.avg,
      processing_time_p95_ms: durations.p95,
      processing_time_max_ms: durations.max,
      rate_limit_current: this.rateLimit?.currentPerMinute(this.now()) ?? 0,
      backpressure_active: this.backpressure ? 1 : 0,
    };
  }

  /** Reads the kernel counter now (the metrics writer calls it before a snapshot). */
  async refreshKernelDrops(): Promise<void> {
    await this.poll();
  }

  /**
   * After a successful write of `written` (§3: counters reset only then): what was written no longer
   * counts in `metrics()`, what arrived between the snapshot and now still does; clears the duration
   * window. The totals are untouched.
   */
  commitMetrics(written: QueueMetrics): void {
    const c = this.committed;
    c.received += written.messages_received;
    c.queued += written.messages_queued;
    c.processed += written.messages_processed;
    c.failed += written.messages_failed;
    c.dropped.source += written.messages_dropped_source;
    c.dropped.size += written.messages_dropped_size;
    c.dropped.rate_limit += written.messages_dropped_rate_limit;
    c.dropped.queue_full += written.messages_dropped_queue_full;
    c.dropped.kernel += written.messages_dropped_kernel ?? 0;
    this.queue.durations.clear();
  }

  private bind(): Promise<void> {
    const { settings, log } = this.options;
    const socket = dgram.createSocket({ type: 'udp4' });
    socket.on('message', (data, rinfo) => this.receive(data, rinfo.address, rinfo.port));
    return new Promise<void>((resolve, reject) => {
      const onBindError = (err: Error) => {
        socket.removeAllListeners('close');
        socket.close();
        reject(
          new Error(
            `the ${this.options.queueType} listener cannot bind UDP ${settings.serverHost}:${this.options.port}: ${err.message}`,
            { cause: err },
          ),
        );
      };
      socket.once('error', onBindError);
      socket.bind(this.boundPort || this.options.port, settings.serverHost, () => {
        socket.off('error', onBindError);
        socket.on('error', (err) => this.socketError(err));
        socket.on('close', () => this.socketClosed(socket));
        this.socket = socket;
        this.boundPort = socket.address().port;
        this.sizeReceiveBuffer(socket);
        log.info(
          { listener: this.options.queueType, host: settings.serverHost, port: this.boundPort },
          `${this.options.queueType} listener receiving on udp://${settings.serverHost}:${this.boundPort}`,
        );
        resolve();
      });
    });
  }

  private sizeReceiveBuffer(socket: dgram.Socket): void {
    const requested = this.options.settings.receiveBufferBytes;
    try {
      socket.setRecvBufferSize(requested);
    } catch (err) {
      this.options.log.warn(
        { listener: this.options.queueType, requested, err },
        `cannot set the UDP receive buffer to ${requested} bytes`,
      );
    }
    // Linux reports twice the size it grants (its bookkeeping overhead); a report below the
    // request means the OS capped it (net.core.rmem_max).
    const granted = socket.getRecvBufferSize();
    if (granted < requested) {
      this.options.log.warn(
        { listener: this.options.queueType, requestedBytes: requested, grantedBytes: granted },
        `the OS granted a UDP receive buffer of ${granted} bytes, less than receiveBufferBytes ${requested}: bursts may overflow it (kernel drops). On Linux raise net.core.rmem_max (sysctl -w net.core.rmem_max=${requested})`,
      );
    } else {
      this.options.log.debug(
        { listener: this.options.queueType, requestedBytes: requested, grantedBytes: granted },
        'UDP receive buffer set',
      );
    }
  }

  private receive(data: Buffer, address: string, port: number): void {
    this.received += 1;
    const sender = senderIPv4(address);
    const nowMs = this.now();
    if (this.allowed !== null && !this.allowed.has(sender)) {
      this.drop('source');
      const level = this.senderWarn.take(sender).log ? 'warn' : 'debug';
      this.options.log[level](
        { listener: this.options.queueType, sender },
        `datagram from ${sender} dropped: not in allowedSources`,
      );
      return;
    }
    if (data.length > this.options.settings.maxMessageSize) {
      this.drop('size');
      const level = this.sizeWarn.take(sender).log ? 'warn' : 'debug';
      this.options.log[level](
        {
          listener: this.options.queueType,
          sender,
          bytes: data.length,
          maxMessageSize: this.options.settings.maxMessageSize,
        },
        `datagram of ${data.length} bytes from ${sender} dropped: larger than maxMessageSize ${this.options.settings.maxMessageSize}`,
      );
      return;
    }
    if (this.rateLimit !== null && !this.rateLimit.take(nowMs)) {
      this.drop('rate_limit');
      return;
    }
    if (!this.queue.offer({ data, address: sender, port, receivedAtMs: nowMs })) {
      this.drop('queue_full');
      this.checkBackpressure(nowMs);
      return;
    }
    if (!this.backpressure && this.queue.size > 0) this.checkBackpressure(nowMs);
  }

  private drop(reason: DropReason, count = 1): void {
    this.drops[reason] += count;
    this.minuteDrops[reason] += count;
  }

  /** §3 backpressure: WARN at the threshold (again every interval while active), INFO below 0.8 × threshold. */
  private checkBackpressure(nowMs: number): void {
    const threshold = this.options.settings.messageQueue.backpressureThreshold;
    const pct = this.queue.utilisationPct;
    const interval = this.options.summaryIntervalMs ?? 60_000;
    if (pct >= threshold) {
      if (!this.backpressure || nowMs - this.backpressureWarnedAt >= interval) {
        this.backpressure = true;
        this.backpressureWarnedAt = nowMs;
        this.options.log.warn(
          {
            listener: this.options.queueType,
            utilisationPct: pct,
            queueSize: this.queue.size,
            maxSize: this.queue.maxSize,
            threshold,
          },
          `${this.options.queueType} listener queue at ${pct.toFixed(0)} % (${this.queue.size}/${this.queue.maxSize}), backpressure threshold ${threshold} %: handlers cannot keep up`,
        );
      }
    } else if (this.backpressure && pct < threshold * 0.8) {
      this.backpressure = false;
      this.options.log.info(
        { listener: this.options.queueType, utilisationPct: pct },
        `${this.options.queueType} listener queue back to ${pct.toFixed(0)} %: backpressure cleared`,
      );
    }
  }

  /** One read of the kernel counter at a time: two overlapping reads finishing out of order would miscount. */
  private poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    this.checkBackpressure(this.now());
    if (!this.kernel) return;
    const value = await this.kernel.read();
    if (value === null) return;
    // A socket bound again starts its counter at 0.
    const increase = this.kernelLast === null ? 0 : value >= this.kernelLast ? value - this.kernelLast : value;
    if (increase > 0) this.drop('kernel', increase);
    this.kernelLast = value;
  }

  /** §3 drop summary: one WARN with the drops per reason since the last summary, when there were any. */
  private summarise(): void {
    const d = this.minuteDrops;
    const total = d.source + d.size + d.rate_limit + d.queue_full + d.kernel;
    if (total === 0) return;
    this.minuteDrops = zeroDrops();
    const parts = DROP_REASONS.filter((r) => d[r] > 0).map((r) => `${r} ${d[r]}`);
    this.options.log.warn(
      { listener: this.options.queueType, dropped: { ...d }, total },
      `${this.options.queueType} listener dropped ${total} datagram(s) in the last interval: ${parts.join(', ')}`,
    );
  }

  private socketError(err: Error): void {
    this.options.log.error(
      { listener: this.options.queueType, err },
      `${this.options.queueType} listener socket error: ${err.message}; still receiving`,
    );
    this.options.errors.track(this.options.errorType, err, { module: this.options.module });
  }

  private socketClosed(socket: dgram.Socket): void {
    if (this.stopping || this.socket !== socket) return;
    this.socket = undefined;
    const delay = this.options.rebindDelayMs ?? 1000;
    this.options.log.error(
      { listener: this.options.queueType },
      `${this.options.queueType} listener socket closed unexpectedly; binding again in ${delay} ms`,
    );
    const retry = () => {
      this.rebindTimer = undefined;
      if (this.stopping) return;
      this.bind().then(
        () =>
          this.options.log.info({ listener: this.options.queueType }, `${this.options.queueType} listener bound again`),
        (err: unknown) => {
          this.options.log.error(
            { listener: this.options.queueType, err },
            `${this.options.queueType} listener cannot bind again; retrying in ${delay} ms`,
          );
          this.rebindTimer = setTimeout(retry, delay);
        },
      );
    };
    this.rebindTimer = setTimeout(retry, delay);
  }

  private handlerFailed(err: unknown): void {
    this.options.errors.track(this.options.errorType, err, { module: this.options.module });
    const level = this.handlerWarn.take('handler').log ? 'error' : 'debug';
    this.options.log[level](
      { listener: this.options.queueType, err },
      `${this.options.queueType} handler failed; the datagram is counted as failed`,
    );
  }

  /** For fault tests: the socket currently bound. */
  get currentSocket(): dgram.Socket | undefined {
    return this.socket;
  }
}
