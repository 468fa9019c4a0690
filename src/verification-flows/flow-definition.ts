import { ValidationFailed, type FieldError } from '../common/errors.js';
import type { JsonObject } from '../event-store/event-store.port.js';

/** The identity numbers a flow may accept, each an ordinary scope with one input field. */
export const IDENTITY_KINDS = ['nin', 'vnin', 'bvn', 'pvc', 'passport', 'phone'] as const;
export type IdentityKind = (typeof IDENTITY_KINDS)[number];
/** The scope's one input field for each kind (POST /v1/{kind} takes `{[field]: number}`). */
export const IDENTITY_FIELD: Readonly<Record<IdentityKind, string>> = { nin: 'nin', vnin: 'vnin', bvn: 'bvn', pvc: 'vin', passport: 'passport_number', phone: 'phone' };
/** The kinds face_match can compare a selfie with (the portrait on file for the number). */
export const FACE_MATCH_KINDS: readonly IdentityKind[] = ['nin', 'bvn'];

/** The documents a flow may take, and the sides of each the page photographs. */
export const DOCUMENT_KINDS = ['passport', 'voters_card', 'drivers_licence'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];
export const DOCUMENT_SIDES: Readonly<Record<DocumentKind, readonly string[]>> = { passport: ['data_page'], voters_card: ['front'], drivers_licence: ['front', 'back'] };
/** Names of the licence's sides that flows accepted before its sides were photographed: each reads as the licence, both sides. */
export const LEGACY_DOCUMENT_KINDS: Readonly<Record<string, DocumentKind>> = { drivers_licence_front: 'drivers_licence', drivers_licence_back: 'drivers_licence' };
export const STEP_TYPES = ['consent', 'identity_number', 'selfie', 'documents'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export type FlowStep =
  | { readonly type: 'consent' }
  | { readonly type: 'identity_number'; readonly kinds: readonly IdentityKind[] }
  | { readonly type: 'selfie' }
  | { readonly type: 'documents'; readonly kinds: readonly DocumentKind[] };

/** `required`: a selfie without an active step the server saw (a head turn or a blink) sends the session to review. */
export const LIVENESS_RULES = ['required', 'off'] as const;
export type LivenessRule = (typeof LIVENESS_RULES)[number];

/**
 * What decides a submitted session: the identity record found and face_match's confidence (0 to
 * 100) at or above `faceMatchThreshold` approves; within `reviewMarginPoints` below it, review;
 * otherwise declined. With `liveness` required, an approval without the active step is a review.
 */
export interface DecisionRule {
  readonly faceMatchThreshold: number;
  readonly reviewMarginPoints: number;
  readonly liveness: LivenessRule;
}

/** A stored definition as the code reads it: versions written before the liveness rule keep deciding without it. */
export function withDefaults(
  stored: Omit<FlowDefinition, 'decision'> & { readonly decision: Omit<DecisionRule, 'liveness'> & { readonly liveness?: LivenessRule } },
): FlowDefinition {
  return { ...stored, decision: { ...stored.decision, liveness: stored.decision.liveness ?? 'off' } };
}

export interface Branding {
  readonly displayName: string;
  /** `#rrggbb`. */
  readonly colour: string;
  readonly logoUrl: string | null;
}

/** A flow's definition as the integrator gave it: free text of theirs, sealed under the organization's key in events and read models. */
export interface FlowDefinition {
  readonly name: string;
  readonly steps: readonly FlowStep[];
  readonly decision: DecisionRule;
  readonly branding: Branding;
  /** Origins (`https://host[:port]`) whose pages may frame the hosted page. */
  readonly allowedOrigins: readonly string[];
  /** Where the person is sent when done, with `?session=<id>` only. */
  readonly redirectUrl: string | null;
  readonly sessionLifetimeSeconds: number;
}

export const MIN_SESSION_LIFETIME_SECONDS = 300;
export const MAX_SESSION_LIFETIME_SECONDS = 86_400;
export const DEFAULT_SESSION_LIFETIME_SECONDS = 1_800;
const MAX_ORIGINS = 10;
const MAX_TEXT = 100;
const MAX_URL = 500;
const COLOUR = /^#[0-9a-fA-F]{6}$/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function httpsUrl(value: string, allowHttp: boolean): URL | null {
  if (value.length > MAX_URL) return null;
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return null;
    if (url.username !== '' || url.password !== '') return null;
    return url;
  } catch {
    return null;
  }
}

/**
 * A flow's definition from a request body, every problem named. `allowHttp`: plain-http URLs and
 * origins too (the embedded default and tests, where everything is on loopback).
 */
export function parseFlowDefinition(body: unknown, options: { readonly allowHttp: boolean }): FlowDefinition {
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message });
  if (!isObject(body)) throw new ValidationFailed([{ field: 'body', message: 'must be a JSON object' }]);

  const name = body.name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_TEXT) fail('name', `must be a non-empty string of at most ${MAX_TEXT} characters`);

  const steps: FlowStep[] = [];
  if (!Array.isArray(body.steps) || body.steps.length === 0 || body.steps.length > STEP_TYPES.length) {
    fail('steps', `must be a list of 1 to ${STEP_TYPES.length} steps`);
  } else {
    const seen = new Set<string>();
    body.steps.forEach((raw: unknown, index) => {
      const field = `steps[${index}]`;
      const type = isObject(raw) ? raw.type : undefined;
      if (typeof type !== 'string' || !(STEP_TYPES as readonly string[]).includes(type)) return fail(`${field}.type`, `must be one of ${STEP_TYPES.join(', ')}`);
      if (seen.has(type)) return fail(`${field}.type`, 'is already a step of this flow');
      seen.add(type);
      const kindsOf = (allowed: readonly string[]): string[] | null => {
        const kinds = (raw as Record<string, unknown>).kinds;
        if (!Array.isArray(kinds) || kinds.length === 0 || kinds.some((kind) => typeof kind !== 'string' || !allowed.includes(kind)) || new Set(kinds).size !== kinds.length) {
          fail(`${field}.kinds`, `must list one or more of ${allowed.join(', ')}, each once`);
          return null;
        }
        return kinds as string[];
      };
      if (type === 'identity_number') {
        const kinds = kindsOf(IDENTITY_KINDS);
        if (kinds !== null) steps.push({ type, kinds: kinds as IdentityKind[] });
      } else if (type === 'documents') {
        const kinds = kindsOf([...DOCUMENT_KINDS, ...Object.keys(LEGACY_DOCUMENT_KINDS)]);
        if (kinds !== null) steps.push({ type, kinds: normalisedDocuments(kinds) });
      } else {
        steps.push({ type: type as 'consent' | 'selfie' });
      }
    });
    const order = steps.map((step) => step.type);
    if (order[0] !== 'consent') fail('steps', 'must start with consent: nothing is captured before the person agrees');
    if (!order.includes('identity_number')) fail('steps', 'must include identity_number: the decision rests on the identity record');
    if (order.includes('selfie') && order.indexOf('selfie') < order.indexOf('identity_number')) fail('steps', 'must put identity_number before selfie');
  }

  const decision = isObject(body.decision) ? body.decision : {};
  const threshold = decision.faceMatchThreshold ?? 80;
  const margin = decision.reviewMarginPoints ?? 10;
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 100)) fail('decision.faceMatchThreshold', 'must be a number above 0 and at most 100');
  if (typeof margin !== 'number' || !(margin >= 0 && margin <= 100) || (typeof threshold === 'number' && margin > threshold))
    fail('decision.reviewMarginPoints', 'must be a number from 0 to the threshold');
  // Required by default where the flow takes a selfie: nothing else stands against a held-up photo.
  const takesSelfie = steps.some((step) => step.type === 'selfie');
  const liveness = decision.liveness ?? (takesSelfie ? 'required' : 'off');
  if (typeof liveness !== 'string' || !(LIVENESS_RULES as readonly string[]).includes(liveness)) fail('decision.liveness', `must be one of ${LIVENESS_RULES.join(', ')}`);
  else if (liveness === 'required' && !takesSelfie) fail('decision.liveness', 'can be required only in a flow with a selfie step');

  const branding = isObject(body.branding) ? body.branding : {};
  const displayName = branding.displayName ?? name;
  const colour = branding.colour ?? '#1c7ed6';
  const logoUrl = branding.logoUrl ?? null;
  if (typeof displayName !== 'string' || displayName.trim() === '' || displayName.length > MAX_TEXT)
    fail('branding.displayName', `must be a non-empty string of at most ${MAX_TEXT} characters`);
  if (typeof colour !== 'string' || !COLOUR.test(colour)) fail('branding.colour', 'must be a colour as #rrggbb');
  if (logoUrl !== null && (typeof logoUrl !== 'string' || httpsUrl(logoUrl, options.allowHttp) === null)) fail('branding.logoUrl', 'must be an https URL or null');

  const origins: string[] = [];
  const rawOrigins = body.allowedOrigins ?? [];
  if (!Array.isArray(rawOrigins) || rawOrigins.length > MAX_ORIGINS) {
    fail('allowedOrigins', `must be a list of at most ${MAX_ORIGINS} origins`);
  } else {
    rawOrigins.forEach((raw: unknown, index) => {
      const url = typeof raw === 'string' ? httpsUrl(raw, options.allowHttp) : null;
      if (url === null || url.origin !== (raw as string).replace(/\/$/, '')) return fail(`allowedOrigins[${index}]`, 'must be an origin: https://host[:port], no path');
      if (!origins.includes(url.origin)) origins.push(url.origin);
    });
  }

  const redirectUrl = body.redirectUrl ?? null;
  if (redirectUrl !== null && (typeof redirectUrl !== 'string' || httpsUrl(redirectUrl, options.allowHttp) === null)) fail('redirectUrl', 'must be an https URL or null');

  const lifetime = body.sessionLifetimeSeconds ?? DEFAULT_SESSION_LIFETIME_SECONDS;
  if (typeof lifetime !== 'number' || !Number.isSafeInteger(lifetime) || lifetime < MIN_SESSION_LIFETIME_SECONDS || lifetime > MAX_SESSION_LIFETIME_SECONDS) {
    fail('sessionLifetimeSeconds', `must be an integer from ${MIN_SESSION_LIFETIME_SECONDS} to ${MAX_SESSION_LIFETIME_SECONDS}`);
  }

  if (errors.length > 0) throw new ValidationFailed(errors);
  return {
    name: (name as string).trim(),
    steps,
    decision: { faceMatchThreshold: threshold as number, reviewMarginPoints: margin as number, liveness: liveness as LivenessRule },
    branding: { displayName: (displayName as string).trim(), colour: (colour as string).toLowerCase(), logoUrl: logoUrl as string | null },
    allowedOrigins: origins,
    redirectUrl: redirectUrl as string | null,
    sessionLifetimeSeconds: lifetime as number,
  };
}

/** The definition as JSON, for sealing. */
export const definitionJson = (definition: FlowDefinition): JsonObject => JSON.parse(JSON.stringify(definition)) as JsonObject;

/** The identity kinds a definition accepts (none when it has no identity step). */
export function identityKindsOf(definition: FlowDefinition): readonly IdentityKind[] {
  const step = definition.steps.find((candidate) => candidate.type === 'identity_number');
  return step?.type === 'identity_number' ? step.kinds : [];
}

export const hasStep = (definition: FlowDefinition, type: StepType): boolean => definition.steps.some((step) => step.type === type);

const normalisedDocuments = (kinds: readonly string[]): DocumentKind[] => [...new Set(kinds.map((kind) => LEGACY_DOCUMENT_KINDS[kind] ?? (kind as DocumentKind)))];

/** The documents a definition takes (none without a documents step), earlier names read as today's. */
export function documentKindsOf(definition: FlowDefinition): readonly DocumentKind[] {
  const step = definition.steps.find((candidate) => candidate.type === 'documents');
  return step?.type === 'documents' ? normalisedDocuments(step.kinds) : [];
}
