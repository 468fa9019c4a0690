/** The worker thread of ChainHashWorker (chain-hashes.ts): answers each run of COPY rows with their claimed-link hashes. */
import { parentPort, workerData } from 'node:worker_threads';
import { type ChainHashRequest, copyRowChainHashes } from './chain-hashes.js';

if (parentPort === null) throw new Error('chain-hash-worker runs as a worker thread');
const port = parentPort;
/** The ring of shared memory the rows come through (ChainHashWorker). */
const ring = workerData as Uint8Array;
port.on('message', (request: ChainHashRequest) => {
  // Read whole before the answer goes back: the ring's bytes may be overwritten from then on.
  const rows = 'rows' in request ? request.rows : new Uint8Array(ring.buffer, request.start, request.end - request.start);
  port.postMessage(copyRowChainHashes(request.streamId, rows));
});
