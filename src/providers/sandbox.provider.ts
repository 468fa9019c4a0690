import type { FaceChecks } from '../face-checks/face-checks.port.js';
import { sampleJpeg, type SampleName } from '../scopes/sandbox-faces.js';
import { decodeImage } from '../scopes/input-formats.js';
import { ownerOf, SANDBOX_FACES } from '../scopes/sandbox-records.js';
import type { SandboxBehaviour, SandboxRecord } from '../scopes/scope-definition.js';
import { scopeDefinition, type Scope } from '../scopes/scopes.js';
import type { JsonObject } from '../scopes/shapes.js';
import { VerificationProvider, type ProviderCallOptions, type ProviderOutcome } from './provider.port.js';

export type { SandboxBehaviour } from '../scopes/scope-definition.js';
export { sandboxPortrait } from '../scopes/sandbox-records.js';

/**
 * The deterministic sandbox register behind test keys (and live keys on the embedded default).
 * The last digit of the scope's main input decides the outcome:
 *   1 not_found · 2 provider failure · 3 too slow (fails at the provider timeout)
 *   4 face_match: found with `match: false` · anything else: found.
 * face_match against a person with a real sample face (SANDBOX_FACES) compares the faces instead.
 * A found result describes one person of the sandbox world (`src/scopes/sandbox-world.ts`): the owner of the
 * main input, with that person's own linked numbers, so one input always gives the same record and
 * the NIN, BVN, phones, accounts, vNIN, VIN and passport of one person all name them.
 */

/** The input whose last digit decides: the scope's sandbox names it. */
export function sandboxKeyInput(scope: Scope, input: Readonly<Record<string, string>>): string {
  return scopeDefinition(scope).sandbox.keyInput(input);
}

export function sandboxBehaviour(scope: Scope, input: Readonly<Record<string, string>>): SandboxBehaviour {
  const { sandbox } = scopeDefinition(scope);
  switch (sandbox.keyInput(input).slice(-1)) {
    case '1':
      return 'not_found';
    case '2':
      return 'failure';
    case '3':
      return 'slow';
    case '4':
      return sandbox.noMatchOnFour === true ? 'no_match' : 'found';
    default:
      return 'found';
  }
}

/**
 * The found record of one scope: a pure function of the scope and the input (its definition's
 * sandbox). Every record names the owner of its main number, and the numbers in it (phones, NIN,
 * BVN) are that person's own.
 */
export function sandboxRecord(scope: Scope, input: Readonly<Record<string, string>>, behaviour: 'found' | 'no_match' = 'found'): SandboxRecord {
  return scopeDefinition(scope).sandbox.record(input, behaviour);
}

/** Waits until the caller gives up (or `ms` passes), like an upstream that never answers in time. */
function hang(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolveHang) => {
    if (signal.aborted) return resolveHang();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolveHang();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** How long the sandbox takes per check (SANDBOX_LATENCY_MS): drawn evenly in [min, max]; both 0 answers at once. */
export interface SandboxLatency {
  readonly min: number;
  readonly max: number;
}

/**
 * The similarity (the face checks' `similarity`, 0 to 1) at which the sandbox's face_match answers a
 * match. Measured on the sample faces: the author's webcam photo against his portrait 0.46, the other
 * person's face against it 0.12 (and 0.10 to 0.33 for any two different people of the samples).
 */
export const SANDBOX_FACE_MATCH_THRESHOLD = 0.4;

export class SandboxProvider extends VerificationProvider {
  readonly name = 'sandbox';
  private readonly portraitDescriptors = new Map<SampleName, Promise<readonly number[] | null>>();

  /** `faces` compares faces for the people with a sample face; without it they answer by the last digit like everyone. */
  constructor(
    private readonly latencyMs: SandboxLatency = { min: 0, max: 0 },
    private readonly faces?: FaceChecks,
  ) {
    super();
  }

  /** face_match against a person whose portrait is a sample face: `{match, confidence}` by the faces' similarity. */
  private async compareFaces(input: Readonly<Record<string, string>>): Promise<JsonObject | undefined> {
    if (this.faces === undefined) return undefined;
    const { person } = input.nin !== undefined ? ownerOf('nin', input.nin) : ownerOf('bvn', input.bvn ?? '');
    const sample = SANDBOX_FACES[person.nin];
    const image = decodeImage(input.image ?? '');
    if (sample === undefined || typeof image === 'string') return undefined;
    const faces = this.faces;
    let portrait = this.portraitDescriptors.get(sample);
    if (portrait === undefined) {
      portrait = faces.checkSelfie(sampleJpeg(sample)).then((check) => check.descriptor);
      this.portraitDescriptors.set(sample, portrait);
    }
    const [selfie, portraitDescriptor] = await Promise.all([faces.checkSelfie(image.bytes), portrait]);
    if (selfie.descriptor === null || portraitDescriptor === null) return { match: false, confidence: 0 };
    const similarity = faces.similarity(selfie.descriptor, portraitDescriptor);
    return { match: similarity >= SANDBOX_FACE_MATCH_THRESHOLD, confidence: Math.round(similarity * 1000) / 10 };
  }

  async verify(scope: Scope, input: Readonly<Record<string, string>>, options: ProviderCallOptions): Promise<ProviderOutcome> {
    const behaviour = sandboxBehaviour(scope, input);
    // Like an upstream's round trip: the answer is the same, it only comes later (a slow input hangs anyway).
    const { min, max } = this.latencyMs;
    if (max > 0 && behaviour !== 'slow') await hang(min + Math.random() * (max - min), options.signal);
    switch (behaviour) {
      case 'not_found':
        return { outcome: 'not_found' };
      case 'failure':
        return { outcome: 'failed', reasonCode: 'provider_error', retryable: true };
      case 'slow':
        await hang(options.timeoutMs, options.signal);
        return { outcome: 'failed', reasonCode: 'provider_timeout', retryable: true };
      case 'found':
      case 'no_match': {
        const record = sandboxRecord(scope, input, behaviour);
        const { portrait } = record;
        const result = (scope === 'face_match' ? await this.compareFaces(input) : undefined) ?? record.result;
        return portrait === undefined ? { outcome: 'found', result } : { outcome: 'found', result, portrait };
      }
      default: {
        const _exhaustive: never = behaviour;
        throw new Error(`invariant: unknown sandbox behaviour ${String(_exhaustive)}`);
      }
    }
  }
}
