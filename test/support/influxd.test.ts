import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InfluxdHandle, query, startInfluxd, writeLines } from './influxd.js';
import { canConnect } from './ports.js';

const DB = 'support_roundtrip';
// 1700000000123456789 ns = 2023-11-14T22:13:20.123456789Z (RFC3339 output keeps all 9 digits; epoch=ns would
// come back as a JSON number above 2^53 and lose precision).
const TS_NS = '1700000000123456789';
const TS_RFC3339 = '2023-11-14T22:13:20.123456789Z';
const LINE = `cpu,host=server-1 load=0.75,procs=5i,msg="hello \\"world\\", ok" ${TS_NS}`;

const expectedPoint = {
  results: [
    {
      statement_id: 0,
      series: [
        {
          name: 'cpu',
          columns: ['time', 'host', 'load', 'msg', 'procs'],
          values: [[TS_RFC3339, 'server-1', 0.75, 'hello "world", ok', 5]],
        },
      ],
    },
  ],
};

const expectedFieldKeys = {
  results: [
    {
      statement_id: 0,
      series: [
        {
          name: 'cpu',
          columns: ['fieldKey', 'fieldType'],
          values: [
            ['load', 'float'],
            ['msg', 'string'],
            ['procs', 'integer'],
          ],
        },
      ],
    },
  ],
};

describe('startInfluxd (real influxd 1.x)', () => {
  let influx: InfluxdHandle | undefined;
  let dataDir = '';
  let lastPid: number | undefined;

  const server = (): InfluxdHandle => {
    if (influx === undefined) throw new Error('influxd not started');
    return influx;
  };

  beforeAll(async () => {
    influx = await startInfluxd();
    dataDir = influx.dataDir;
  });

  afterAll(async () => {
    lastPid = influx?.pid;
    await influx?.stop();
    // stop() must leave neither the process nor the temp dir behind.
    expect(influx?.running).toBe(false);
    if (lastPid !== undefined) expect(() => process.kill(lastPid as number, 0)).toThrow();
    if (dataDir !== '') expect(existsSync(dataDir)).toBe(false);
  });

  it('listens on free loopback ports (not the defaults) and answers /ping with 204', async () => {
    const h = server();
    expect(h.host).toBe('127.0.0.1');
    expect(h.port).not.toBe(8086);
    expect(h.rpcPort).not.toBe(8088);
    expect(h.rpcPort).not.toBe(h.port);
    expect(h.url).toBe(`http://127.0.0.1:${h.port}`);
    expect(existsSync(dataDir)).toBe(true);

    const res = await fetch(`${h.url}/ping`);
    expect(res.status).toBe(204);
    expect(res.headers.get('x-influxdb-version')).toMatch(/^1\./);
    expect(await canConnect(h.rpcPort)).toBe(true);
  });

  it('round-trips a point with tag, float, integer and string fields and an explicit ns timestamp', async () => {
    const h = server();
    await query(h, `CREATE DATABASE ${DB}`);
    await writeLines(h, DB, LINE);

    expect(await query(h, 'SELECT * FROM cpu', DB)).toEqual(expectedPoint);
    expect(await query(h, 'SHOW FIELD KEYS FROM cpu', DB)).toEqual(expectedFieldKeys);
  });

  it('rejects bad writes and bad queries with the server error', async () => {
    const h = server();
    await expect(writeLines(h, DB, 'cpu load=')).rejects.toThrow(/HTTP 400/);
    await expect(writeLines(h, 'no_such_db', LINE)).rejects.toThrow(/HTTP 404.*database not found/);
    await expect(query(h, 'SELEKT nonsense', DB)).rejects.toThrow(/HTTP 400/);
  });

  it('keeps the data across restart() on the same port', async () => {
    const h = server();
    const { port, rpcPort, pid } = h;
    expect(pid).toBeTypeOf('number');

    await h.restart();

    expect(h.port).toBe(port);
    expect(h.rpcPort).toBe(rpcPort);
    expect(h.pid).toBeTypeOf('number');
    expect(h.pid).not.toBe(pid);
    expect(() => process.kill(pid as number, 0)).toThrow();
    expect(await query(h, 'SELECT * FROM cpu', DB)).toEqual(expectedPoint);
  });

  it('stopProcess() makes the server unreachable and startProcess() brings it back with the data', async () => {
    const h = server();
    await h.stopProcess();
    expect(h.running).toBe(false);
    expect(await canConnect(h.port)).toBe(false);

    await h.startProcess();
    expect(h.running).toBe(true);
    expect(await query(h, 'SELECT * FROM cpu', DB)).toEqual(expectedPoint);
  });
});
