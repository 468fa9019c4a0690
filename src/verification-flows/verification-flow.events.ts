import type { Event } from '../common/event.js';

/**
 * Events of `verificationFlow-{flowId}`: a flow and its versions. The definition (name, steps,
 * decision rule, branding, origins, redirect, lifetime) is the integrator's free text: it travels
 * only sealed under the organization's key-encryption key, bound to the flow and the version.
 */
type FlowIds = { flowId: string; organizationId: string; environment: string };
export type VerificationFlowCreated = Event<'VerificationFlowCreated', FlowIds & { version: number; definition: string }>;
export type VerificationFlowVersionPublished = Event<'VerificationFlowVersionPublished', FlowIds & { version: number; definition: string }>;
/** A reusable link (like a payment link): each visit starts a session of the flow's newest version, its checks run on `keyId`. */
export type VerificationFlowLinkCreated = Event<'VerificationFlowLinkCreated', FlowIds & { linkId: string; keyId: string }>;
export type VerificationFlowEvent = VerificationFlowCreated | VerificationFlowVersionPublished | VerificationFlowLinkCreated;

export const VERIFICATION_FLOW_CATEGORY = 'verificationFlow';
export const verificationFlowStream = (flowId: string): string => `${VERIFICATION_FLOW_CATEGORY}-${flowId}`;
/** What a version's sealed definition is bound to. */
export const flowSealContext = (flowId: string, version: number): string => `verificationFlow:${flowId}:${version}`;
