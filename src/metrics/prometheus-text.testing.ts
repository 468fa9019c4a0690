/** One sample line of the Prometheus text format the service's /metrics writes. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** `name{a="x",b="y"} 12.5` lines of the Prometheus text format, comments left out; any other line throws. For tests and benchmarks. */
export function parseMetrics(text: string): MetricSample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (match === null) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function sumOfSamples(samples: readonly MetricSample[], name: string, labels: Readonly<Record<string, string>> = {}): number {
  return samples
    .filter((entry) => entry.name === name && Object.entries(labels).every(([label, value]) => entry.labels[label] === value))
    .reduce((sum, entry) => sum + entry.value, 0);
}
