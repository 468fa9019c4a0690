import { validateBody } from '../common/validation.js';
import { RegisterOrganizationDto } from './organization.dto.js';

/**
 * A registration's fields checked (422 `validation_failed`): the one check its handler
 * makes, for a caller that must refuse before any other work (the console's sign-up, whose answer
 * must not depend on whether the address has an account).
 */
export function validRegistration(input: { name: string; email: string }): { name: string; email: string } {
  const valid = validateBody(RegisterOrganizationDto, { name: input.name, email: input.email });
  return { name: valid.name, email: valid.email };
}
