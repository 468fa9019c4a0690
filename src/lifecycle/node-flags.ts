/**
 * The V8 flags the service process runs with: `npm start`, the image's CMD, docker-compose's `api`
 * command, `bench:api` and the browser tests all start `dist/src/main.js` with them
 * (`node-flags.spec.ts` beside this file holds the first three to this list). V8 reads them only from the
 * command line (not from NODE_OPTIONS, and not once the heap exists), so they cannot be set from
 * inside the process.
 *
 * - `--min-semi-space-size=16`: the young generation never shrinks below 16 MiB per semi-space.
 *   When the process idles, V8 shrinks it to 1 MiB; the next burst of requests then scavenged every
 *   few milliseconds and promoted short-lived request objects into the old generation, so the first
 *   second after an idle spell cost markedly more CPU per request and raised the tail latency
 *   (`bench:api`'s paced phase follows the check floor's run, when the service idles).
 * - `--max-semi-space-size=64`: under load it may grow to 64 MiB, so a request's objects die young
 *   (a check allocates a few hundred KB) instead of surviving two scavenges of a small space.
 *
 * V8 sizes the young generation at three semi-spaces: 48 MiB at least with these flags, up to
 * 192 MiB under load. The audit and projection catch-up, which run in their own processes without
 * them, gain nothing from these flags.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16', '--max-semi-space-size=64'];
