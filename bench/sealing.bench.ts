/**
 * `npm run bench:sealing`: the CPU cost of sealing and opening the personal fields of one check
 * (src/data-protection/sealing.ts), in µs, next to a floor measured in the same run: a plain
 * JSON.stringify / JSON.parse of the same data, which any write and read does anyway. No I/O.
 * SEALING_BENCH_ITERATIONS (default 20,000) per measure.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { blindToken } from '../src/data-protection/blind-index.js';
import { open, openBytes, seal, sealBytes } from '../src/data-protection/sealing.js';
import { runBench, status } from './bench-support.js';

const REQUEST = { nin: '21440414976' };
/** A found nin answer as the sandbox gives it (names, date of birth, phone, address, portrait id). */
const RESULT = {
  nin: '21440414976',
  firstName: 'Blessing',
  middleName: 'Ebube',
  lastName: 'Ibrahim',
  gender: 'Female',
  dateOfBirth: '2003-02-24',
  phoneNumber: '08150292236',
  email: 'blessing.ibrahim@example.com',
  stateOfOrigin: 'Anambra',
  lgaOfOrigin: 'Onitsha North',
  residenceAddress: '14 Adeola Odeku Street, Victoria Island',
  residenceState: 'Lagos',
  residenceLga: 'Eti-Osa',
  portraitId: 'prt_0123456789abcdef_1f40_3a2',
};

function measure(name: string, iterations: number, run: () => unknown): number {
  for (let i = 0; i < Math.min(2_000, iterations); i++) run();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) run();
  const micros = ((performance.now() - start) * 1_000) / iterations;
  status(`${name.padEnd(52)} ${micros.toFixed(2).padStart(8)} µs`);
  return micros;
}

runBench(async () => {
  const iterations = Number(process.env.SEALING_BENCH_ITERATIONS ?? 20_000);
  const key = randomBytes(32);
  const kek = randomBytes(32);
  const reference = 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
  const requestBinding = { reference, eventType: 'VerificationRequested', field: 'request' };
  const resultBinding = { reference, eventType: 'VerificationCompleted', field: 'result' };
  const sealedRequest = seal(key, REQUEST, requestBinding);
  const sealedResult = seal(key, RESULT, resultBinding);
  const requestText = JSON.stringify(REQUEST);
  const resultText = JSON.stringify(RESULT);
  const wrapped = sealBytes(kek, key, Buffer.from(`ivl-dek/1\norg\n${reference}`));
  status(`sealing micro-benchmark: ${iterations} iterations each, Node ${process.version}`);

  const floorWrite = measure('floor: JSON.stringify request + result', iterations, () => JSON.stringify(REQUEST).length + JSON.stringify(RESULT).length);
  const floorRead = measure('floor: JSON.parse request + result', iterations, () => [JSON.parse(requestText), JSON.parse(resultText)]);
  const sealRequest = measure('seal request', iterations, () => seal(key, REQUEST, requestBinding));
  const sealResult = measure('seal result', iterations, () => seal(key, RESULT, resultBinding));
  const openRequest = measure('open request', iterations, () => open(key, sealedRequest, requestBinding));
  const openResult = measure('open result', iterations, () => open(key, sealedResult, resultBinding));
  const makeKey = measure('new data key: random + wrap under the KEK', iterations, () => sealBytes(kek, randomBytes(32), Buffer.from(`ivl-dek/1\norg\n${reference}`)));
  const unwrap = measure('unwrap a data key (cache miss)', iterations, () => openBytes(kek, wrapped, Buffer.from(`ivl-dek/1\norg\n${reference}`)));
  const token = measure('blind-index token (HMAC-SHA-256)', iterations, () => blindToken(kek, 'phone', '+2348150292236'));

  const perCheckWrite = sealRequest + sealResult + makeKey + token;
  const perCheckRead = openRequest + openResult;
  status(`per check, written (data key, 1 token, request and result sealed): ${perCheckWrite.toFixed(1)} µs against a floor of ${floorWrite.toFixed(1)} µs`);
  status(
    `per check, read (request and result opened, key cached): ${perCheckRead.toFixed(1)} µs against a floor of ${floorRead.toFixed(1)} µs; +${unwrap.toFixed(1)} µs on a cache miss`,
  );
});
