/**
 * The platform simulator's options: every problem is found at once and names its option, so the
 * CLI can report them all as usage errors (startPlatformSimulator's refusal is in server.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { simulatorOptionProblems } from '../../../../edge-agent/simulate/platform/options.js';

describe('simulatorOptionProblems', () => {
  it('refuses options it cannot honour, naming each', () => {
    expect(
      simulatorOptionProblems({
        servers: 3,
        basePort: 4747,
        proxyBasePort: 4748,
        appPort: 4749,
        virtualProxies: ['/', '/hdr/', '/hdr', 'x'],
        host: '::1',
        stepMs: 5,
        failures: { node4: 'timeout' },
      }),
    ).toEqual([
      `host must be an IPv4 address (Svc's servers[].host cannot hold an IPv6 one) (got "::1")`,
      'stepMs must be 0 or an integer 10–86400000 (got 5)',
      'virtualProxies: "/hdr" is given twice',
      'virtualProxies: "x" must be "/" or "/" and one path segment of letters, digits, . _ ~ - (e.g. /hdr)',
      'basePort (ports 4747–4749) and proxyBasePort (ports 4748–4750) overlap',
      'basePort (ports 4747–4749) and appPort (port 4749) overlap',
      'proxyBasePort (ports 4748–4750) and appPort (port 4749) overlap',
      'failures: target "node4" is not a server name (node1, node2, node3), "apps" or "all"',
    ]);
    expect(simulatorOptionProblems({ servers: 2, basePort: 65535 })).toEqual([
      'basePort 65535 with 2 servers goes past port 65535',
    ]);
  });
});
