import cliProgress from 'cli-progress';
import type { RebuildProgress } from './rebuild.js';

const RATE_WINDOW_MS = 5_000;

/** One bar per projection on stderr: events done of the total, events/s over the last seconds, time left. */
export class RebuildProgressBars {
  private readonly multibar: cliProgress.MultiBar;
  private readonly bars = new Map<string, { bar: cliProgress.SingleBar; samples: { atMs: number; done: number }[] }>();

  constructor(stream: NodeJS.WritableStream = process.stderr) {
    this.multibar = new cliProgress.MultiBar(
      {
        stream,
        format: '{name} [{bar}] {percentage}% | {value}/{total} events | {rate} events/s | ETA {left} | {phase}',
        barsize: 30,
        hideCursor: true,
        clearOnComplete: false,
        fps: 5,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  update(progress: RebuildProgress): void {
    let entry = this.bars.get(progress.projection);
    const total = progress.eventsTotal ?? Math.max(progress.eventsDone, 1);
    // The name goes with every update: off a terminal, cli-progress never starts the bar (and drops
    // the payload given to create), yet still draws it once when stopped.
    const name = progress.projection.padEnd(16);
    if (entry === undefined) {
      const bar = this.multibar.create(total, 0, { name, rate: '0', left: '?', phase: progress.phase });
      entry = { bar, samples: [] };
      this.bars.set(progress.projection, entry);
    }
    const nowMs = Date.now();
    entry.samples.push({ atMs: nowMs, done: progress.eventsDone });
    while (entry.samples.length > 2 && nowMs - entry.samples[0].atMs > RATE_WINDOW_MS) entry.samples.shift();
    const first = entry.samples[0];
    const elapsedMs = nowMs - first.atMs;
    const rate = elapsedMs > 0 ? ((progress.eventsDone - first.done) * 1000) / elapsedMs : 0;
    const remaining = Math.max(0, total - progress.eventsDone);
    const left = rate > 0 ? formatSeconds(remaining / rate) : '?';
    entry.bar.setTotal(Math.max(total, progress.eventsDone));
    entry.bar.update(progress.eventsDone, { name, rate: Math.round(rate).toLocaleString('en-US'), left, phase: progress.phase });
  }

  stop(): void {
    this.multibar.stop();
  }
}

function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const whole = Math.ceil(seconds);
  const minutes = Math.floor(whole / 60);
  return minutes > 0 ? `${minutes}m${String(whole % 60).padStart(2, '0')}s` : `${whole}s`;
}
