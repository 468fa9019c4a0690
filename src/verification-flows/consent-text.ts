import { createHash } from 'node:crypto';
import type { FlowDefinition } from './flow-definition.js';

/** The consent text's wording version: a new wording is a new version, and the record names which one the person read. */
export const CONSENT_TEXT_VERSION = 1;

const STEP_PURPOSES: Readonly<Record<string, string>> = {
  identity_number: 'your identity number, checked against the official register it belongs to',
  selfie: 'a selfie, compared with the photo on that record',
  documents: 'photos of your identity document',
};

/**
 * What the person agrees to before anything is captured: who asks, what is checked and why, how
 * long it is kept, and their rights under the Nigeria Data Protection Act 2023. Built by the
 * server, so the hash it records is of the text it served.
 */
export function consentText(definition: FlowDefinition, retentionDays: number): { readonly version: number; readonly text: string; readonly hash: string } {
  const checked = definition.steps.map((step) => STEP_PURPOSES[step.type]).filter((purpose): purpose is string => purpose !== undefined);
  const text = [
    `${definition.branding.displayName} asks to verify your identity.`,
    `We will collect ${checked.join('; ')}.`,
    'They are used only to confirm that you are who you say you are, and the result is sent to ' + `${definition.branding.displayName}.`,
    `Your data is kept for at most ${retentionDays} days, encrypted, and then erased.`,
    'Under the Nigeria Data Protection Act 2023 you may ask to see, correct or erase your data, withdraw this consent, and complain to the Nigeria Data Protection Commission.',
  ].join('\n');
  return { version: CONSENT_TEXT_VERSION, text, hash: createHash('sha256').update(text, 'utf8').digest('hex') };
}
