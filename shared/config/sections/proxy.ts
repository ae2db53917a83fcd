/**
 * `proxy`: the corporate forward proxy of every outbound HTTP(S) call of `svc local` / `svc edge`
 * (Svc choice: the reference has no such section; docs/deployment.md "Behind a corporate proxy").
 * An empty key takes the environment's variable; a key that is set wins over it.
 */
import { Secret, Section, Str } from '../builders.js';

/**
 * A proxy URL, or '' (from the environment), or a secret reference not fetched yet (checked again
 * once its value is in).
 */
const PROXY_URL = {
  pattern: '^(|https?://[^\\s/?#][^\\s]*|\\$\\{aws-[^}]*\\})$',
  'x-expect': 'an http:// or https:// proxy URL such as http://proxy.example.com:3128',
} as const;

export const proxy = Section(
  'Forward proxy of outbound HTTP(S) calls: SQS, S3, Secrets Manager and SSM, the monitoring SaaS, heartbeats, telemetry, the platform APIs and the tsdb (docs/deployment.md); not used by the Lambda functions',
  {
    httpProxy: Secret(
      'Proxy of plain-HTTP targets, e.g. http://proxy.example.com:3128 (may hold a user name and password: http://user:password@proxy.example.com:3128); empty: the http_proxy / HTTP_PROXY variable',
      PROXY_URL,
    ),
    httpsProxy: Secret(
      'Proxy of HTTPS targets, reached with CONNECT (TLS stays end to end), e.g. http://proxy.example.com:3128; empty: the https_proxy / HTTPS_PROXY variable',
      PROXY_URL,
    ),
    noProxy: Str(
      '',
      'Hosts reached directly, comma-separated, in NO_PROXY syntax (a host name, .domain for its subdomains, an IP address, host:port, * for every host); loopback addresses go through the proxy unless listed; empty: the no_proxy / NO_PROXY variable',
    ),
  },
);
