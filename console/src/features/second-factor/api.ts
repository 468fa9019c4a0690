import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/browser';
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../../api';
import type { Body, Data } from '../../types';

export type SecondFactorStatus = Data<'getSecondFactor'>;
export type Passkey = Data<'listPasskeys'>[number];

export const secondFactorKeys = { status: ['second-factor'] as const, passkeys: ['passkeys'] as const };

export const useSecondFactorStatus = () => useQuery({ queryKey: secondFactorKeys.status, queryFn: ({ signal }) => get<SecondFactorStatus>('/second-factor', signal) });

export const usePasskeys = () => useQuery({ queryKey: secondFactorKeys.passkeys, queryFn: ({ signal }) => get<Passkey[]>('/second-factor/passkeys', signal) });

const passkeyPath = (id: string) => `/second-factor/passkeys/${encodeURIComponent(id)}`;

/** The second factor's requests that change no cached list by themselves. */
const requests = {
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

/**
 * The authenticator app's changes, each sent with the code the user typed. Confirming and renewing
 * hand the new backup codes to `codesShown`; turning it off forgets the set-up secret and waits
 * for `turnedOff` (the page reads the status again), so the button spins until that is done.
 */
export function useTotpChanges(handlers: { codesShown: (codes: string[]) => void; turnedOff: () => Promise<void> }) {
  const setup = useMutation({ mutationFn: requests.setUpTotp });
  return {
    setup,
    confirm: useMutation({ mutationFn: requests.confirmTotp, onSuccess: (data) => handlers.codesShown(data.backupCodes) }),
    disable: useMutation({
      mutationFn: requests.disableTotp,
      onSuccess: async () => {
        setup.reset();
        await handlers.turnedOff();
      },
    }),
    renew: useMutation({ mutationFn: requests.renewBackupCodes, onSuccess: (data) => handlers.codesShown(data.backupCodes) }),
  };
}

/**
 * The passkeys' changes: adding one runs the browser's registration ceremony. After each, the
 * passkeys are read again and `changed` runs (awaited: the page reads the status again);
 * `added` clears the name field first.
 */
export function usePasskeyChanges(handlers: { added: () => void; changed: () => Promise<void> }) {
  const client = useQueryClient();
  const changed = async () => {
    await client.invalidateQueries({ queryKey: secondFactorKeys.passkeys });
    await handlers.changed();
  };
  return {
    add: useMutation({
      mutationFn: async (name: string) => {
        const optionsJSON = await requests.registrationOptions();
        const response = await startRegistration({ optionsJSON });
        return requests.registerPasskey(response, name);
      },
      onSuccess: async () => {
        handlers.added();
        await changed();
      },
    }),
    rename: useMutation({ mutationFn: ({ id, name }: { id: string; name: string }) => requests.renamePasskey(id, name), onSuccess: changed }),
    remove: useMutation({ mutationFn: requests.removePasskey, onSuccess: changed }),
  };
}

/** The owner's switch of the organization's requirement; the status is read again after it. */
export function useSetSecondFactorRequirement() {
  const client = useQueryClient();
  return useMutation({ mutationFn: requests.setRequirement, onSuccess: () => void client.invalidateQueries({ queryKey: secondFactorKeys.status }) });
}

/** The sign-in step after the password: a code (of the app or a backup code) or a passkey; `finished` takes the session either answers (one type). */
export function useSecondFactorStep(finished: (session: Data<'verifySecondFactor'>) => void) {
  return {
    verify: useMutation({ mutationFn: requests.verify, onSuccess: finished }),
    passkey: useMutation({
      mutationFn: async () => {
        const optionsJSON = await requests.authenticationOptions();
        const response = await startAuthentication({ optionsJSON });
        return requests.verifyPasskey(response);
      },
      onSuccess: finished,
    }),
  };
}
