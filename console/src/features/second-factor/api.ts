import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/browser';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../../api';
import type { Body, Data } from '../../types';

export type SecondFactorStatus = Data<'getSecondFactor'>;
export type Passkey = Data<'listPasskeys'>[number];

export const secondFactorKeys = { status: ['second-factor'] as const, passkeys: ['passkeys'] as const };

export const useSecondFactorStatus = () => useQuery({ queryKey: secondFactorKeys.status, queryFn: ({ signal }) => get<SecondFactorStatus>('/second-factor', signal) });

export const usePasskeys = () => useQuery({ queryKey: secondFactorKeys.passkeys, queryFn: ({ signal }) => get<Passkey[]>('/second-factor/passkeys', signal) });

export function useRefreshPasskeys() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: secondFactorKeys.passkeys });
}

const passkeyPath = (id: string) => `/second-factor/passkeys/${encodeURIComponent(id)}`;

/** The second factor's requests that change no cached list by themselves. */
export const secondFactorRequests = {
  setUpTotp: () => post<Data<'setUpTotp'>>('/second-factor/totp/setup'),
  confirmTotp: (code: string) => post<Data<'confirmTotp'>>('/second-factor/totp/confirm', { code } satisfies Body<'confirmTotp'>),
  disableTotp: (code: string) => post<Data<'disableTotp'>>('/second-factor/totp/disable', { code } satisfies Body<'disableTotp'>),
  renewBackupCodes: (code: string) => post<Data<'renewBackupCodes'>>('/second-factor/backup-codes', { code } satisfies Body<'renewBackupCodes'>),
  registrationOptions: () => post<PublicKeyCredentialCreationOptionsJSON>('/second-factor/passkeys/options'),
  registerPasskey: (response: RegistrationResponseJSON, name: string) => post<Data<'registerPasskey'>>('/second-factor/passkeys', { response, name }),
  renamePasskey: (id: string, name: string) => put(passkeyPath(id), { name } satisfies Body<'renamePasskey'>),
  removePasskey: (id: string) => del(passkeyPath(id)),
  verify: (answer: Body<'verifySecondFactor'>) => post<Data<'verifySecondFactor'>>('/second-factor/verify', answer),
  authenticationOptions: () => post<PublicKeyCredentialRequestOptionsJSON>('/second-factor/passkey/options'),
  verifyPasskey: (response: AuthenticationResponseJSON) => post<Data<'verifyPasskey'>>('/second-factor/passkey/verify', { response }),
  setRequirement: (required: boolean) => put<Data<'setSecondFactorRequirement'>>('/organization/second-factor', { required } satisfies Body<'setSecondFactorRequirement'>),
};
