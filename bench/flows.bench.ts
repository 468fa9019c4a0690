/**
 * `npm run bench:flows`: the server's own re-check of what a verification session receives
 * (src/face-checks/human-face-checks.ts, @vladmandic/human on tfjs's wasm backend), per selfie and per
 * document image: median and p99 over FLOWS_BENCH_IMAGES images (default 50) of each, wall time and the
 * process's CPU time (user + system) beside it. The images are made from the sample faces
 * (src/scopes/sandbox-faces.ts) at a phone's sizes: selfies 720 by 960, JPEG; document photos 1,280 by
 * 960, a card of 1,000 by 700 on a darker table, JPEG (src/face-checks/document-measures.ts finds its edges). The models' first load and the first image (the wasm engine's warm-up) are reported apart.
 * The machine (cores, CPU, load average) is printed with the figures.
 *
 * Then the hosted page's first load in Chromium (first-load.ts): the bytes transferred to the
 * camera's first frame, by kind, against the 3 MB target, median of FLOWS_BENCH_LOAD_RUNS runs
 * (default 5; 0 skips it).
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { DocumentCheck } from '../src/face-checks/face-checks.port.js';
import type { Pixels } from '../src/face-checks/face-measures.js';
import { HumanFaceChecks, loadHuman } from '../src/face-checks/human-face-checks.js';
import { cutSample, type SampleName, toJpeg } from '../src/scopes/sandbox-faces.js';
import { format, runBench, sizeFromEnv, status } from './bench-support.js';
import { FIRST_LOAD_TARGET_BYTES, type FirstLoad, measureFirstLoads, PARTS, type PartBytes, totalOf } from './first-load.js';

const FACES: readonly SampleName[] = ['authorWebcam', 'authorParty', 'otherPerson', 'authorPortrait'];

/** The face scaled by nearest neighbour to `side` pixels and placed at (left, top) on a `width` by `height` canvas of `background`. */
function place(face: Pixels, width: number, height: number, side: number, left: number, top: number, background: readonly number[]): Pixels {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set(background, i * 4);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const from = (Math.floor((y * face.height) / side) * face.width + Math.floor((x * face.width) / side)) * 4;
      data.set(face.data.subarray(from, from + 4), ((top + y) * width + left + x) * 4);
    }
  }
  return { width, height, data };
}

/** A selfie: the face 40 to 60% of the width, near the centre. */
function selfie(i: number): Uint8Array {
  const side = Math.round(720 * (0.4 + 0.05 * (i % 5)));
  return toJpeg(
    place(cutSample(FACES[i % FACES.length]!), 720, 960, side, Math.round((720 - side) / 2) + ((i * 7) % 21) - 10, 240 + ((i * 11) % 31), [96 + (i % 40), 100, 104, 255]),
    85,
  );
}

/** A document photo: a light card with lines of print and the portrait at the left, on a darker table. */
function documentPage(i: number): Uint8Array {
  const card = place(cutSample(FACES[i % FACES.length]!), 1000, 700, 260, 60, 120, [214, 222, 208, 255]);
  for (let y = 100; y < 600; y++) {
    if (y % 40 >= 6) continue;
    for (let x = 380; x < 940; x++) if ((x * 7 + y + i) % 23 < 15) card.data.set([40, 40, 60, 255], (y * 1000 + x) * 4);
  }
  const photo = place({ width: 1, height: 1, data: new Uint8Array([0, 0, 0, 0]) }, 1280, 960, 0, 0, 0, [84 + (i % 20), 66, 50, 255]);
  for (let y = 0; y < 700; y++) photo.data.set(card.data.subarray(y * 1000 * 4, (y + 1) * 1000 * 4), ((130 + y) * 1280 + 140) * 4);
  return toJpeg(photo, 85);
}

interface Timing {
  readonly wallMs: number;
  readonly cpuMs: number;
}

async function timed(run: () => Promise<unknown>): Promise<Timing> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1_000 };
}

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

function report(name: string, timings: readonly Timing[]): void {
  const wall = timings.map((timing) => timing.wallMs);
  const cpu = timings.map((timing) => timing.cpuMs);
  const line = (label: string, values: number[]) => `${label} median ${quantile(values, 0.5).toFixed(0)} ms, p99 ${quantile(values, 0.99).toFixed(0)} ms`;
  process.stdout.write(`${name.padEnd(34)} ${line('wall', wall)}; ${line('CPU', cpu)}\n`);
}

const median = (values: readonly number[]): number => quantile(values, 0.5);

/** The median of each part over the runs, and of the runs' totals. */
function reportBytes(title: string, loads: readonly PartBytes[]): void {
  const total = median(loads.map(totalOf));
  const shipped = median(loads.map((parts) => parts.scripts + parts.styles + parts.models + parts.wasm));
  process.stdout.write(`${title}\n`);
  for (const part of PARTS) process.stdout.write(`  ${part.padEnd(10)} ${format(median(loads.map((parts) => parts[part]))).padStart(11)} B\n`);
  process.stdout.write(
    `  ${'total'.padEnd(10)} ${format(total).padStart(11)} B (${((100 * total) / FIRST_LOAD_TARGET_BYTES).toFixed(0)}% of the 3 MB target); scripts, styles and models ${format(shipped)} B\n`,
  );
}

function reportFirstLoads(loads: readonly FirstLoad[]): void {
  process.stdout.write(`\nhosted page's first load, Chromium, empty cache, 390 px, median of ${loads.length} runs:\n`);
  reportBytes(
    "to the camera's first frame",
    loads.map((load) => load.toFirstFrame),
  );
  reportBytes(
    "to the camera guide's first report (its face models loaded)",
    loads.map((load) => load.toGuide),
  );
  process.stdout.write(
    `first frame ${format(median(loads.map((load) => load.firstFrameMs)))} ms, guide's first report ${format(median(loads.map((load) => load.guideMs)))} ms after the page's address (consent and NIN given by the bench); load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} at the end\n`,
  );
}

runBench(async () => {
  const loadRuns = sizeFromEnv('FLOWS_BENCH_LOAD_RUNS', 5, { min: 0, max: 50 });
  const images = sizeFromEnv('FLOWS_BENCH_IMAGES', 50, { min: 5, max: 1_000 });
  status(`making ${images} selfies and ${images} document pages from the sample faces`);
  const selfies = Array.from({ length: images }, (_, i) => selfie(i));
  const documents = Array.from({ length: images }, (_, i) => documentPage(i));
  const checks = new HumanFaceChecks();
  const load = await timed(() => loadHuman());
  const first = await timed(() => checks.checkSelfie(selfies[0]!));

  const selfieTimings: Timing[] = [];
  let passed = 0;
  for (const image of selfies) {
    let ok = false;
    selfieTimings.push(await timed(async () => (ok = (await checks.checkSelfie(image)).passed)));
    if (ok) passed++;
  }
  const documentTimings: Timing[] = [];
  let portraits = 0;
  let accepted = 0;
  for (const image of documents) {
    let check: DocumentCheck | undefined;
    documentTimings.push(await timed(async () => (check = await checks.checkDocument(image, 'passport'))));
    if (check?.descriptor != null) portraits++;
    if (check?.passed === true) accepted++;
  }

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(
    `\nbench:flows — ${cpus().length} cores, ${cpu}, Node ${process.version}, tfjs wasm backend, load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} at the end\n\n`,
  );
  process.stdout.write(
    `models loaded in ${load.wallMs.toFixed(0)} ms (CPU ${load.cpuMs.toFixed(0)} ms); first selfie ${first.wallMs.toFixed(0)} ms (CPU ${first.cpuMs.toFixed(0)} ms)\n`,
  );
  report(`selfie 720x960 (${passed}/${images} passed)`, selfieTimings);
  report(`document 1280x960 (${accepted}/${images} passed, ${portraits} portraits)`, documentTimings);
  if (loadRuns > 0) reportFirstLoads(await measureFirstLoads(loadRuns));
});
