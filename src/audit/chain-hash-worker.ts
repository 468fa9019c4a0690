/** The worker thread of ChainHashWorker (chain-hashes.ts): answers each run of COPY rows with their claimed-link hashes. */
import { parentPort } from 'node:worker_threads';
import { type ChainHashAnswer, type ChainHashRequest, copyRowChainHashes } from './chain-hashes.js';

if (parentPort === null) throw new Error('chain-hash-worker runs as a worker thread');
const port = parentPort;
port.on('message', ({ streamId, rows }: ChainHashRequest) => {
  const answer: ChainHashAnswer = { hashes: copyRowChainHashes(streamId, rows), buffer: rows.buffer as ArrayBuffer };
  // The buffer goes back to be filled with a later run.
  port.postMessage(answer, [answer.buffer]);
});
