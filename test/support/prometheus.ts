/** Reading Prometheus's text exposition format (version 0.0.4) as a scraper does, for the metrics endpoint's tests. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  help: Map<string, string>;
  type: Map<string, string>;
  samples: Sample[];
  /** The samples of one metric name, optionally only those whose labels include `labels`. */
  series(name: string, labels?: Record<string, string>): Sample[];
  /** The value of the one sample of `name` with (at least) `labels`; throws unless exactly one matches. */
  value(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** Parses an exposition; a line that is neither a comment nor a sample throws. */
export function parseExposition(text: string): Exposition {
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (comment) {
      (comment[1] === 'HELP' ? help : type).set(
        comment[2] ?? '',
        comment[1] === 'HELP' ? unescape(comment[3] ?? '') : (comment[3] ?? ''),
      );
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not an exposition line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1] ?? ''] = unescape(l[2] ?? '');
    samples.push({ name: m[1] ?? '', labels, value: parseValue(m[3] ?? '') });
  }
  const series = (name: string, labels: Record<string, string> = {}): Sample[] =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    help,
    type,
    samples,
    series,
    value(name, labels = {}) {
      const found = series(name, labels);
      if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
      return (found[0] as Sample).value;
    },
  };
}

/** GET `url` and parse it; the status and content type come along for checking. */
export async function scrape(
  url: string,
): Promise<{ status: number; contentType: string | null; body: string; metrics: Exposition }> {
  const res = await fetch(url);
  const body = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    body,
    metrics: parseExposition(res.status === 200 ? body : ''),
  };
}
