/** The worker thread of ChainHashWorker (chain-hashes.ts): answers each run of COPY rows with their claimed-link hashes. */
import { parentPort } from 'node:worker_threads';
import { type ChainHashRequest, copyRowChainHashes } from './chain-hashes.js';

if (parentPort === null) throw new Error('chain-hash-worker runs as a worker thread');
const port = parentPort;
port.on('message', ({ streamId, rows }: ChainHashRequest) => {
  port.postMessage(copyRowChainHashes(streamId, Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength).toString('utf8')));
});
