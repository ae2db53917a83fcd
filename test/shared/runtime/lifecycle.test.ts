import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type Component, exitOnSignals, Lifecycle } from '../../../shared/runtime/lifecycle.js';
import { recordingLog } from '../../support/log.js';

function component(
  name: string,
  events: string[],
  opts: { failStart?: boolean; stopMs?: number; failStop?: boolean } = {},
): Component {
  return {
    name,
    start: () => {
      events.push(`start ${name}`);
      return opts.failStart ? Promise.reject(new Error(`${name} cannot start`)) : Promise.resolve();
    },
    stop: async () => {
      events.push(`stop ${name}`);
      if (opts.stopMs) await new Promise((r) => setTimeout(r, opts.stopMs));
      if (opts.failStop) throw new Error(`${name} cannot stop`);
    },
  };
}

describe('Lifecycle', () => {
  it('starts in order and stops in reverse, once', async () => {
    const events: string[] = [];
    const lc = new Lifecycle({ log: recordingLog().log })
      .add(component('queue', events))
      .add(component('writer', events))
      .add(component('listener', events));
    await lc.start();
    expect(await lc.stop()).toBe(true);
    expect(await lc.stop()).toBe(true);
    expect(events).toEqual([
      'start queue',
      'start writer',
      'start listener',
      'stop listener',
      'stop writer',
      'stop queue',
    ]);
  });

  it('stops what started when a later component fails to start, and rethrows', async () => {
    const events: string[] = [];
    const lc = new Lifecycle({ log: recordingLog().log })
      .add(component('a', events))
      .add(component('b', events, { failStart: true }))
      .add(component('c', events));
    await expect(lc.start()).rejects.toThrow('b cannot start');
    expect(events).toEqual(['start a', 'start b', 'stop a']);
  });

  it('abandons a component that does not stop in time, and reports an unclean stop', async () => {
    const events: string[] = [];
    const { log, lines } = recordingLog();
    const lc = new Lifecycle({ log, stopTimeoutMs: 20 })
      .add(component('a', events))
      .add(component('slow', events, { stopMs: 1000 }));
    await lc.start();
    expect(await lc.stop()).toBe(false);
    expect(events).toEqual(['start a', 'start slow', 'stop slow', 'stop a']);
    expect(lines.map((l) => l.msg)).toContain('slow did not stop in time; abandoned');
  });

  it('keeps stopping the others when one stop throws', async () => {
    const events: string[] = [];
    const lc = new Lifecycle({ log: recordingLog().log })
      .add(component('a', events))
      .add(component('b', events, { failStop: true }));
    await lc.start();
    expect(await lc.stop()).toBe(false);
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('refuses components added after start', async () => {
    const lc = new Lifecycle({ log: recordingLog().log });
    await lc.start();
    expect(() => lc.add(component('late', []))).toThrow(/cannot add component late/);
    await lc.stop();
  });
});

describe('exitOnSignals', () => {
  it('stops the lifecycle on the first signal and exits 0', async () => {
    const events: string[] = [];
    const lc = new Lifecycle({ log: recordingLog().log }).add(component('a', events));
    await lc.start();
    const emitter = new EventEmitter();
    const exited = new Promise<number>((resolve) =>
      exitOnSignals(lc, { log: recordingLog().log, exit: resolve, emitter }),
    );
    emitter.emit('SIGTERM', 'SIGTERM');
    expect(await exited).toBe(0);
    expect(events).toEqual(['start a', 'stop a']);
  });

  it('forces exit 1 on a second signal while stopping', async () => {
    const lc = new Lifecycle({ log: recordingLog().log }).add(component('slow', [], { stopMs: 500 }));
    await lc.start();
    const emitter = new EventEmitter();
    const codes: number[] = [];
    exitOnSignals(lc, { log: recordingLog().log, exit: (c) => codes.push(c), emitter });
    emitter.emit('SIGINT', 'SIGINT');
    emitter.emit('SIGINT', 'SIGINT');
    expect(codes).toEqual([1]);
    await lc.stop();
  });

  it('exits 1 when a component fails to stop', async () => {
    const lc = new Lifecycle({ log: recordingLog().log }).add(component('bad', [], { failStop: true }));
    await lc.start();
    const emitter = new EventEmitter();
    const exited = new Promise<number>((resolve) =>
      exitOnSignals(lc, { log: recordingLog().log, exit: resolve, emitter }),
    );
    emitter.emit('SIGTERM', 'SIGTERM');
    expect(await exited).toBe(1);
  });
});
