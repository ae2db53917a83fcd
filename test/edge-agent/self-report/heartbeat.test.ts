/**
 * The heartbeat (platform-formats.md §10.2) against a real local HTTP server (test/support/
 * recording-http.ts): the call at start, success at DEBUG, failures at ERROR naming the URL with
 * credentials and query masked, a slow server cut at the timeout. The timeout is injected (300 ms
 * here instead of 10 s) so that the test does not wait 10 s; the code path is the same.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { beat, HEARTBEAT_TIMEOUT_MS, heartbeatTask } from '../../../edge-agent/self-report/heartbeat.js';
import { recordingLog } from '../../support/log.js';
import { freePort, LOOPBACK } from '../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => server.reset());

describe('heartbeat', () => {
  it('GETs the URL at start (credentials as Basic auth), logs success at DEBUG, and stops its timer on stop', async () => {
    const { log, lines } = recordingLog();
    server.setFallback(200);
    const url = `http://alive:s3cret@${LOOPBACK}:${server.port}/ping/abc?token=t0ken`;
    const task = heartbeatTask({ url, frequency: 'every 1 hour', log });
    await task.start();
    await expect.poll(() => lines.length, { timeout: 5_000 }).toBe(1);
    await task.stop();
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(request?.url).toBe('/ping/abc?token=t0ken');
    expect(request?.headers.authorization).toBe(`Basic ${Buffer.from('alive:s3cret').toString('base64')}`);
    expect(lines[0]).toMatchObject({
      level: 'debug',
      msg: `heartbeat sent to http://[REDACTED]@${LOOPBACK}:${server.port}/ping/abc?[REDACTED]: HTTP 200`,
    });
    expect(JSON.stringify(lines)).not.toMatch(/s3cret|t0ken/);
  });

  it('logs an HTTP error at ERROR with the URL masked and the status', async () => {
    const { log, lines } = recordingLog();
    server.reply(503);
    expect(await beat({ url: `${server.url}/hb?key=abc123`, frequency: 'every 1 hour', log })).toBe(false);
    expect(lines).toEqual([
      {
        level: 'error',
        obj: expect.objectContaining({ status: 503 }),
        msg: `heartbeat to ${server.url}/hb?[REDACTED] failed: HTTP 503`,
      },
    ]);
  });

  it('logs a refused connection at ERROR, saying so', async () => {
    const { log, lines } = recordingLog();
    const port = await freePort();
    expect(await beat({ url: `http://${LOOPBACK}:${port}/hb`, frequency: 'every 1 hour', log })).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe('error');
    expect(lines[0]?.msg).toMatch(new RegExp(`^heartbeat to http://${LOOPBACK}:${port}/hb failed: .*ECONNREFUSED`));
  });

  it('cuts a slow server at the timeout (10 s by default; 300 ms injected here)', async () => {
    expect(HEARTBEAT_TIMEOUT_MS).toBe(10_000);
    const { log, lines } = recordingLog();
    server.reply({ status: 200, delayMs: 5_000 });
    const started = Date.now();
    expect(await beat({ url: `${server.url}/slow`, frequency: 'every 1 hour', log, timeoutMs: 300 })).toBe(false);
    // Cut well before the server would have answered.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lines).toEqual([
      {
        level: 'error',
        obj: expect.objectContaining({ reason: 'no answer within 300 ms (timeout)' }),
        msg: `heartbeat to ${server.url}/slow failed: no answer within 300 ms (timeout)`,
      },
    ]);
  });
});
