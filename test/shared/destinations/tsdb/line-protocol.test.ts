import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bool,
  float,
  formatFloat,
  int,
  LineProtocolError,
  type Point,
  str,
  toLine,
} from '../../../../shared/destinations/tsdb/line-protocol.js';
import { PointClock, pointTime } from '../../../../shared/queue/point-clock.js';

const T = 1710233130000000000n;
const p = (over: Partial<Point>): Point => ({
  measurement: 'm',
  tags: { t: 'a' },
  fields: { f: int(1) },
  timeNs: T,
  ...over,
});

describe('§6.11 examples, verbatim', () => {
  it('builds the five example lines (time = event ms × 1,000,000 + process counter)', () => {
    const clock = new PointClock();
    const server = { host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node' };
    const lines = [
      toLine({
        measurement: 'mem',
        tags: server,
        fields: { committed: float(4213.6), allocated: float(4577.3), free: float(27890.4) },
        timeNs: clock.next(1710233130000),
      }),
      toLine({ measurement: 'cpu', tags: server, fields: { total: float(7.5) }, timeNs: clock.next(1710233130000) }),
      toLine({
        measurement: 'user_events',
        tags: {
          host: 'PLAT-N1',
          event_action: 'Open connection',
          userFull: 'LAB\\goran',
          userDirectory: 'LAB',
          userId: 'goran',
          origin: 'AppAccess',
          appId: 'e7af59a0-c243-480d-9571-08727551a66f',
          appName: '<unknown app name>',
          uaBrowserName: 'Chrome',
          uaBrowserMajorVersion: '120',
          uaOsName: 'Windows',
          uaOsVersion: 'NT 10.0',
        },
        // natural names; the tag names get the _field suffix
        fields: {
          userFull: str('LAB\\goran'),
          userId: str('goran'),
          appId: str('e7af59a0-c243-480d-9571-08727551a66f'),
          appName: str('<unknown app name>'),
        },
        timeNs: clock.next(1710234000000),
      }),
      toLine({
        measurement: 'log_event',
        tags: {
          host: 'PLAT-N1',
          level: 'WARN',
          source: 'qseow-proxy',
          log_row: '312',
          subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
          qs_log_category: 'access-denied',
          user_full: 'LAB\\kalle',
          user_directory: 'LAB',
          user_id: 'kalle',
          windows_user: 'LAB\\svc_platform',
          result_code: '403',
        },
        fields: {
          message: str("Access was denied for User: 'LAB\\kalle'. No license available."),
          exception_message: str(''),
          command: str('Login'),
          result_code: str('403'),
          origin: str('AppAccess'),
          context: str('/hub/'),
          raw_event: str('{…}'),
        },
        timeNs: clock.next(1710233101876),
      }),
      toLine({
        measurement: 'event_count',
        tags: {
          event_type: 'log',
          source: 'qseow-proxy',
          host: 'PLAT-N1',
          subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
        },
        fields: { counter: int(3) },
        timeNs: clock.next(1710233120000),
      }),
    ];
    expect(lines).toEqual([
      'mem,host=node1.lab.local,server_name=Node1,server_description=Central\\ node committed=4213.6,allocated=4577.3,free=27890.4 1710233130000000000',
      'cpu,host=node1.lab.local,server_name=Node1,server_description=Central\\ node total=7.5 1710233130000000001',
      'user_events,host=PLAT-N1,event_action=Open\\ connection,userFull=LAB\\goran,userDirectory=LAB,userId=goran,origin=AppAccess,appId=e7af59a0-c243-480d-9571-08727551a66f,appName=<unknown\\ app\\ name>,uaBrowserName=Chrome,uaBrowserMajorVersion=120,uaOsName=Windows,uaOsVersion=NT\\ 10.0 userFull_field="LAB\\\\goran",userId_field="goran",appId_field="e7af59a0-c243-480d-9571-08727551a66f",appName_field="<unknown app name>" 1710234000000000002',
      'log_event,host=PLAT-N1,level=WARN,source=qseow-proxy,log_row=312,subsystem=Audit.Proxy.Proxy.Core.RequestListener,qs_log_category=access-denied,user_full=LAB\\kalle,user_directory=LAB,user_id=kalle,windows_user=LAB\\svc_platform,result_code=403 message="Access was denied for User: \'LAB\\\\kalle\'. No license available.",exception_message="",command="Login",result_code_field="403",origin="AppAccess",context="/hub/",raw_event="{…}" 1710233101876000003',
      'event_count,event_type=log,source=qseow-proxy,host=PLAT-N1,subsystem=Audit.Proxy.Proxy.Core.RequestListener counter=3i 1710233120000000004',
    ]);
  });
});

describe('toLine: names and tags', () => {
  it('escapes , = and space in tag keys, tag values and field keys; , and space in the measurement', () => {
    expect(
      toLine(p({ measurement: 'my meas,x=y', tags: { 'a b,c=d': 'x,y=z w' }, fields: { 'f x,y=z': int(1) } })),
    ).toBe('my\\ meas\\,x=y,a\\ b\\,c\\=d=x\\,y\\=z\\ w f\\ x\\,y\\=z=1i 1710233130000000000');
  });

  it('removes control characters (U+0000–U+001F, U+007F) from names and tag values, alters nothing else', () => {
    expect(
      toLine(
        p({
          measurement: 'm\u0000e\ta',
          tags: { 'k\ney': 'a\tb\r\nc\u007fd\u001f', u: 'ü ✓ 😀 \\x "q"' },
          fields: { 'f\u0001': int(1) },
        }),
      ),
    ).toBe('mea,key=abcd,u=ü\\ ✓\\ 😀\\ \\x\\ "q" f=1i 1710233130000000000');
  });

  it('omits empty tag values (also undefined, null and control-only), keeps their order otherwise', () => {
    expect(toLine(p({ tags: { z: '1', empty: '', u: undefined, n: null, ctl: '\n\t', a: '2' } }))).toBe(
      'm,z=1,a=2 f=1i 1710233130000000000',
    );
  });

  it('refuses a point without a non-empty tag', () => {
    expect(() => toLine(p({ tags: {} }))).toThrow(LineProtocolError);
    expect(() => toLine(p({ tags: { a: '', b: undefined } }))).toThrow(/at least one non-empty tag/);
  });

  it('suffixes _field to a field whose name is a tag of the point (also an omitted empty one)', () => {
    expect(
      toLine(p({ tags: { host: 'h', app_id: '' }, fields: { host: str('x'), app_id: str(''), other: int(2) } })),
    ).toBe('m,host=h host_field="x",app_id_field="",other=2i 1710233130000000000');
  });

  it('refuses a field that collides with another after the suffix', () => {
    expect(() => toLine(p({ tags: { x: 'a' }, fields: { x: int(1), x_field: int(2) } }))).toThrow(/given twice/);
  });

  it('applies the suffix and the collision rule on a point with many tags and fields too (past the short key list)', () => {
    const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const tags = Object.fromEntries(many('t', 40).map((k) => [k, 'v']));
    // t3 is among the first 32 tag keys, t35 after them.
    const fields = Object.fromEntries([...many('f', 40), 't3', 't35'].map((k) => [k, int(1)]));
    const line = toLine(p({ tags, fields }));
    expect(line).toContain(',f39=1i,t3_field=1i,t35_field=1i ');
    expect(line.split(' ')[1]?.split(',')).toHaveLength(42);
    // A field named like a tag, and another named like its suffixed name: past 32 keys of each.
    expect(() => toLine(p({ tags, fields: { ...fields, t35_field: int(2) } }))).toThrow(/t35_field given twice/);
    expect(() =>
      toLine(p({ tags, fields: { ...Object.fromEntries(many('f', 40).map((k) => [k, int(1)])), f39_dup: int(1) } })),
    ).not.toThrow();
  });

  it('refuses names line protocol cannot carry: empty, "time", a measurement starting with #', () => {
    expect(() => toLine(p({ measurement: '' }))).toThrow(/empty measurement/);
    expect(() => toLine(p({ measurement: '\n' }))).toThrow(/empty measurement/);
    expect(() => toLine(p({ measurement: '#m' }))).toThrow(/comment/);
    expect(() => toLine(p({ tags: { '': 'a', t: 'b' } }))).toThrow(/empty tag key/);
    expect(() => toLine(p({ tags: { time: 'a' } }))).toThrow(/reserved/);
    expect(() => toLine(p({ fields: { time: int(1) } }))).toThrow(/reserved/);
  });

  it('keeps a backslash literally, but refuses one that line protocol would read as an escape', () => {
    expect(toLine(p({ tags: { u: 'LAB\\goran\\\\x' } }))).toBe('m,u=LAB\\goran\\\\x f=1i 1710233130000000000');
    for (const value of ['LAB\\', 'a\\,b', 'a\\ b', 'a\\=b']) {
      expect(() => toLine(p({ tags: { u: value } })), value).toThrow(/backslash/);
    }
    expect(() => toLine(p({ measurement: 'm\\' }))).toThrow(/backslash/);
    expect(() => toLine(p({ fields: { 'f\\': int(1) } }))).toThrow(/backslash/);
  });
});

describe('toLine: field values', () => {
  const line = (fields: Point['fields']): string => toLine(p({ fields }));

  it('writes integers as signed 64-bit with the i suffix', () => {
    expect(
      line({
        a: int(5),
        b: int(-3n),
        c: int(0),
        d: int(9223372036854775807n),
        e: int(-9223372036854775808n),
        f: int(2 ** 60),
      }),
    ).toBe(
      'm,t=a a=5i,b=-3i,c=0i,d=9223372036854775807i,e=-9223372036854775808i,f=1152921504606846976i 1710233130000000000',
    );
    expect(() => line({ a: int(9223372036854775808n) })).toThrow(/64-bit/);
    expect(() => line({ a: int(-9223372036854775809n) })).toThrow(/64-bit/);
    expect(() => line({ a: int(1e20) })).toThrow(/64-bit/);
    expect(() => line({ a: int(1.5) })).toThrow(/not an integer/);
    expect(() => line({ a: int(Number.NaN) })).toThrow(/not an integer/);
  });

  it('writes floats always as floats: whole numbers without i, never in exponent notation', () => {
    expect(
      line({
        a: float(7),
        b: float(7.5),
        c: float(-0),
        d: float(-12),
        e: float(1e21),
        f: float(1.5e-7),
        g: float(-2.5e-10),
        h: float(123456789012345680000),
      }),
    ).toBe(
      'm,t=a a=7,b=7.5,c=0,d=-12,e=1000000000000000000000,f=0.00000015,g=-0.00000000025,h=123456789012345680000 1710233130000000000',
    );
    expect(() => line({ a: float(Number.NaN) })).toThrow(/not finite/);
    expect(() => line({ a: float(Number.POSITIVE_INFINITY) })).toThrow(/not finite/);
  });

  it('formats any finite double in plain decimal that parses back to the same number', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = formatFloat(x);
        expect(text).toMatch(/^-?\d+(\.\d+)?$/);
        expect(Number(text)).toBe(x === 0 ? 0 : x);
      }),
      { numRuns: 2000 },
    );
  });

  it('quotes strings, escaping only " and \\', () => {
    expect(line({ s: str('say "hi" \\ C:\\dir\\'), e: str(''), n: str('a,b=c d\ttab') })).toBe(
      'm,t=a s="say \\"hi\\" \\\\ C:\\\\dir\\\\",e="",n="a,b=c d\ttab" 1710233130000000000',
    );
  });

  it('quotes any string alike, whichever escaping path it takes (control characters, lone surrogates, JSON text)', () => {
    // quoted() takes JSON.stringify for plain text and a replace for the rest: both must equal the rule.
    const reference = (text: string) => `"${text.replace(/[\\"]/g, '\\$&')}"`;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.string({ unit: fc.constantFrom('"', '\\', 'a', '\n', '\ud800', '\u{1F600}', '\u007f') }),
          fc.json(),
        ),
        (text) => {
          expect(line({ s: str(text) })).toBe(`m,t=a s=${reference(text)} 1710233130000000000`);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('writes booleans as true/false', () => {
    expect(line({ a: bool(true), b: bool(false) })).toBe('m,t=a a=true,b=false 1710233130000000000');
  });

  it('skips null and undefined fields; refuses a point with no field left', () => {
    expect(line({ a: null, b: int(2), c: undefined })).toBe('m,t=a b=2i 1710233130000000000');
    expect(() => line({})).toThrow(/at least one field/);
    expect(() => line({ a: null, b: undefined })).toThrow(/at least one field/);
  });

  it('always writes the nanosecond timestamp; refuses one outside int64', () => {
    expect(toLine(p({ timeNs: 0n }))).toBe('m,t=a f=1i 0');
    expect(toLine(p({ timeNs: -1n }))).toBe('m,t=a f=1i -1');
    expect(() => toLine(p({ timeNs: 2n ** 63n }))).toThrow(/64-bit/);
  });
});

describe('point time (§0.3)', () => {
  it('pointTime = event ms × 1,000,000 + discriminator mod 1,000,000', () => {
    expect(pointTime(1710233130000, 0)).toBe(1710233130000000000n);
    expect(pointTime(1710233130000, 5)).toBe(1710233130000000005n);
    expect(pointTime(1710233130000, 999_999n)).toBe(1710233130000999999n);
    expect(pointTime(1710233130000, 1_000_001)).toBe(1710233130000000001n);
    expect(pointTime(1710233130000, 123_456_789_012n)).toBe(1710233130000789012n);
    expect(pointTime(1710233130000, -1)).toBe(1710233130000999999n);
    expect(pointTime(1710233130000.9, 1)).toBe(1710233130000000001n);
    expect(() => pointTime(Number.NaN, 0)).toThrow(RangeError);
    expect(() => pointTime(0, 0.5)).toThrow(RangeError);
  });

  it('PointClock counts per point built, wraps at 1,000,000, and each instance is independent', () => {
    const clock = new PointClock(999_998);
    expect([clock.next(1000), clock.next(1000), clock.next(1000), clock.next(2000)]).toEqual([
      1000999998n,
      1000999999n,
      1000000000n,
      2000000001n,
    ]);
    const other = new PointClock();
    expect(other.next(1000)).toBe(1000000000n);
    // the same event ms for two points gives two different timestamps
    expect(other.next(1000)).toBe(1000000001n);
  });
});
