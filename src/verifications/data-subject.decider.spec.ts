import { describe, expect, it } from '@jest/globals';
import { Conflict, NotFound, ValidationFailed } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { maskIdentifier, validateHold } from './data-subject-rights.js';
import { dataHoldDecider, type DataHoldCommand } from './data-subject.decider.js';
import type { DataHoldEvent } from './data-subject.events.js';

const holdId = 'hld_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const owner = { organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', environment: 'test' };
const at = new Date('2026-11-01T10:00:00Z');
const given = givenFor(dataHoldDecider, { occurredAt: at });
const hold = {
  holdId,
  ...owner,
  reference: null,
  subjectKind: 'nin',
  maskedIdentifier: '***976',
  subjectToken: 'token',
  reason: 'litigation' as const,
  until: null,
  placedAt: at.toISOString(),
};
const place: DataHoldCommand = { type: 'PlaceHold', hold };
const placed: DataHoldEvent = { type: 'DataHoldPlaced', data: { schemaVersion: 1, ...hold } };
const lifted: DataHoldEvent = { type: 'DataHoldLifted', data: { schemaVersion: 1, holdId, liftedAt: at.toISOString() } };

describe('the data hold decider', () => {
  it('places a hold once', () => {
    given([]).when(place).then([placed]);
    given([placed]).when(place).thenThrows(Conflict);
  });

  it('lifts a hold of its owner (or any, for an operator) once; another organization finds none', () => {
    given([placed]).when({ type: 'LiftHold', owner, at }).then([lifted]);
    given([placed]).when({ type: 'LiftHold', owner: null, at }).then([lifted]);
    given([placed, lifted]).when({ type: 'LiftHold', owner, at }).then([]);
    given([placed])
      .when({ type: 'LiftHold', owner: { ...owner, organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TS' }, at })
      .thenThrows(NotFound);
    given([placed])
      .when({ type: 'LiftHold', owner: { ...owner, environment: 'live' }, at })
      .thenThrows(NotFound);
    given([]).when({ type: 'LiftHold', owner: null, at }).thenThrows(NotFound);
  });
});

describe('a hold body', () => {
  it('takes exactly one of reference and subject, a known reason code, and an end after now within ten years', () => {
    expect(validateHold({ subject: { nin: '21440414976' }, reason: 'aml_record_keeping' }, at)).toEqual({
      subject: { nin: '21440414976' },
      reason: 'aml_record_keeping',
      until: null,
    });
    expect(validateHold({ reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', reason: 'litigation', until: '2027-01-01T00:00:00Z' }, at).until).toEqual(new Date('2027-01-01T00:00:00Z'));
    for (const body of [
      { reason: 'litigation' },
      { reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', subject: { nin: '21440414976' }, reason: 'litigation' },
      { reference: 'vrf_x', reason: 'litigation' },
      { subject: { nin: '21440414976' }, reason: 'the customer is John Doe' },
      { subject: { nin: '21440414976' }, reason: 'litigation', until: '2026-10-01T00:00:00Z' },
      { subject: { nin: '21440414976' }, reason: 'litigation', until: '2040-01-01T00:00:00Z' },
      { subject: { nin: '21440414976' }, reason: 'litigation', until: 'tomorrow' },
      { subject: { nin: '21440414976' }, reason: 'litigation', note: 'free text' },
    ]) {
      expect(() => validateHold(body, at)).toThrow(ValidationFailed);
    }
  });

  it('masks an identifier to its last 3 characters, alike in every form of a phone number', () => {
    expect(maskIdentifier('nin', '21440414976')).toBe('***976');
    expect(maskIdentifier('phone', '08061234575')).toBe(maskIdentifier('phone', '+2348061234575'));
  });
});
