/**
 * Component lifecycle: components start in the order they were added and stop in reverse, so a
 * source stops taking input before the queue and writers behind it flush. No global state: the
 * process entry point owns one Lifecycle and passes components in.
 */
import type { Log } from '../logging/log.js';
import { EXIT_ERROR, EXIT_OK } from './exit-codes.js';

/** A part of the running service (listener, queue, writer, endpoint …). */
export interface Component {
  readonly name: string;
  start(): Promise<void>;
  /** Stop taking input, flush what is buffered, release resources. Called once. */
  stop(): Promise<void>;
}

export interface LifecycleOptions {
  log: Log;
  /** Longest a single component may take to stop before it is abandoned (default 30 s). */
  stopTimeoutMs?: number;
}

type State = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped';

export class Lifecycle {
  private readonly components: Component[] = [];
  private readonly started: Component[] = [];
  private state: State = 'idle';
  private stopping: Promise<boolean> | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly log: Log;
  private readonly stopTimeoutMs: number;

  constructor(options: LifecycleOptions) {
    this.log = options.log;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 30_000;
  }

  add(component: Component): this {
    if (this.state !== 'idle') throw new Error(`cannot add component ${component.name}: lifecycle is ${this.state}`);
    this.components.push(component);
    return this;
  }

  get names(): string[] {
    return this.components.map((c) => c.name);
  }

  /** Starts every component in order; when one fails, stops those already started and rethrows. */
  async start(): Promise<void> {
    if (this.state !== 'idle') throw new Error(`lifecycle already ${this.state}`);
    this.state = 'starting';
    // Keeps the process alive while running, even when no component holds a socket or timer.
    this.keepAlive = setInterval(() => undefined, 1 << 30);
    for (const component of this.components) {
      try {
        await component.start();
        this.started.push(component);
        this.log.info({ component: component.name }, `started ${component.name}`);
      } catch (err) {
        this.log.error({ component: component.name, err }, `failed to start ${component.name}`);
        await this.stop();
        throw err;
      }
    }
    this.state = 'running';
  }

  /** Stops started components in reverse order. Resolves true when every stop succeeded. Idempotent. */
  stop(): Promise<boolean> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private async stopAll(): Promise<boolean> {
    this.state = 'stopping';
    let clean = true;
    for (const component of [...this.started].reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.stopTimeoutMs);
      });
      try {
        const outcome = await Promise.race([component.stop().then(() => 'ok' as const), timeout]);
        if (outcome === 'timeout') {
          clean = false;
          this.log.warn(
            { component: component.name, timeoutMs: this.stopTimeoutMs },
            `${component.name} did not stop in time; abandoned`,
          );
        } else {
          this.log.info({ component: component.name }, `stopped ${component.name}`);
        }
      } catch (err) {
        clean = false;
        this.log.error({ component: component.name, err }, `error while stopping ${component.name}`);
      } finally {
        clearTimeout(timer);
      }
    }
    this.started.length = 0;
    clearInterval(this.keepAlive);
    this.state = 'stopped';
    return clean;
  }
}

/** What signals arrive on: `process`, or any EventEmitter in tests. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface SignalOptions {
  log: Log;
  exit: (code: number) => void;
  /** Signal source; `process` in production, an EventEmitter in tests. */
  emitter?: SignalSource;
  signals?: readonly NodeJS.Signals[];
}

/**
 * First SIGINT/SIGTERM: stop the lifecycle, then exit 0 (1 when a component failed to stop).
 * A second signal while stopping forces exit 1. Returns a function that removes the handlers.
 */
export function exitOnSignals(lifecycle: Lifecycle, options: SignalOptions): () => void {
  const emitter = options.emitter ?? process;
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      options.log.warn({ signal, first: received }, `received ${signal} while shutting down: forcing exit`);
      options.exit(EXIT_ERROR);
      return;
    }
    received = signal;
    options.log.info({ signal }, `received ${signal}: shutting down`);
    lifecycle.stop().then(
      (clean) => {
        options.log.info({ clean }, clean ? 'shutdown complete' : 'shutdown finished with errors');
        options.exit(clean ? EXIT_OK : EXIT_ERROR);
      },
      (err: unknown) => {
        options.log.error({ err }, 'shutdown failed');
        options.exit(EXIT_ERROR);
      },
    );
  };
  for (const signal of signals) emitter.on(signal, onSignal);
  return () => {
    for (const signal of signals) emitter.off(signal, onSignal);
  };
}
