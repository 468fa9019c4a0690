import { describe, expect, it } from '@jest/globals';
import { Conflict, InvariantViolated, NotFound } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { MAX_FLOW_LINKS, verificationFlowDecider } from './verification-flow.decider.js';
import type { VerificationFlowEvent } from './verification-flow.events.js';

const flowId = 'vfl_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const organizationId = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const owner = { organizationId, environment: 'test' as const };
const given = givenFor(verificationFlowDecider);
const created: VerificationFlowEvent = {
  type: 'VerificationFlowCreated',
  data: { schemaVersion: 1, flowId, organizationId, environment: 'test', version: 1, definition: 'sealed-1' },
};
const second: VerificationFlowEvent = {
  type: 'VerificationFlowVersionPublished',
  data: { schemaVersion: 1, flowId, organizationId, environment: 'test', version: 2, definition: 'sealed-2' },
};

describe('verification flow decider', () => {
  describe('creating', () => {
    it('records version 1 with its sealed definition', () => given([]).when({ type: 'CreateFlow', flowId, owner, definition: 'sealed-1' }).then([created]));
    it('refuses an id that exists', () => given([created]).when({ type: 'CreateFlow', flowId, owner, definition: 'sealed-1' }).thenThrows(Conflict));
  });

  describe('publishing a version', () => {
    it('numbers it after the last', () => given([created]).when({ type: 'PublishFlowVersion', owner, version: 2, definition: 'sealed-2' }).then([second]));
    it('keeps the older versions in the stream: the state moves to the newest', () =>
      expect(given([created, second]).when({ type: 'PublishFlowVersion', owner, version: 3, definition: 'sealed-3' }).thenState().version).toBe(3));
    it('refuses a version sealed for another number (another writer published meanwhile)', () =>
      given([created, second]).when({ type: 'PublishFlowVersion', owner, version: 2, definition: 'sealed-2' }).thenThrows(Conflict));
    it("is not found for another organization's or environment's key", () => {
      given([created])
        .when({ type: 'PublishFlowVersion', owner: { ...owner, organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TS' }, version: 2, definition: 'x' })
        .thenThrows(NotFound);
      given([created])
        .when({ type: 'PublishFlowVersion', owner: { ...owner, environment: 'live' }, version: 2, definition: 'x' })
        .thenThrows(NotFound);
    });
    it('is not found before the flow exists', () => given([]).when({ type: 'PublishFlowVersion', owner, version: 1, definition: 'x' }).thenThrows(NotFound));
  });

  describe('a reusable link', () => {
    const link: VerificationFlowEvent = {
      type: 'VerificationFlowLinkCreated',
      data: { schemaVersion: 1, flowId, organizationId, environment: 'test', linkId: 'vln_1', keyId: 'key_1' },
    };
    it('is recorded with the key its sessions run on', () => given([created]).when({ type: 'CreateLink', owner, linkId: 'vln_1', keyId: 'key_1' }).then([link]));
    it("is not found for another organization's key", () =>
      given([created])
        .when({ type: 'CreateLink', owner: { ...owner, organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TS' }, linkId: 'vln_1', keyId: 'key_1' })
        .thenThrows(NotFound));
    it(`is refused past ${MAX_FLOW_LINKS} links`, () =>
      given([created, ...Array.from({ length: MAX_FLOW_LINKS }, () => link)])
        .when({ type: 'CreateLink', owner, linkId: 'vln_2', keyId: 'key_1' })
        .thenThrows(Conflict));
  });

  it('refuses to fold a history that skips a version', () => expect(() => given([created, { ...second, data: { ...second.data, version: 3 } }])).toThrow(InvariantViolated));
});
