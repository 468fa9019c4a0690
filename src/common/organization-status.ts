/** An organization's standing: pending until approved; suspended stops its live keys. */
export type OrganizationStatus = 'pending' | 'approved' | 'suspended';
