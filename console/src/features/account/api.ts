import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post, query } from '../../api';
import type { Body, Data } from '../../types';

export type SignInSession = Data<'listSessions'>[number];

/** The user's own sign-in sessions: not the flows' verification sessions (`flowsKeys.sessions`). */
export const accountKeys = {
  sessions: ['sign-in-sessions'] as const,
  mailbox: ['mailbox'] as const,
  invitation: (token: string) => ['invitation', token] as const,
};

export const useSignInSessions = () => useQuery({ queryKey: accountKeys.sessions, queryFn: ({ signal }) => get<SignInSession[]>('/sessions', signal) });

/** Ends a sign-in session: the current one hands over to `endedCurrent` (the page forgets the session), another reads the list again; either is awaited. */
export function useEndSignInSession(endedCurrent: () => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (row: SignInSession) => {
      await del(`/sessions/${encodeURIComponent(row.id)}`);
      return row;
    },
    onSuccess: async (row) => {
      if (row.current) await endedCurrent();
      else await client.invalidateQueries({ queryKey: accountKeys.sessions });
    },
  });
}

/** The development mailbox, read every `refetchMs`. */
export const useMailbox = (refetchMs: number) =>
  useQuery({ queryKey: accountKeys.mailbox, queryFn: ({ signal }) => get<Data<'getDevMailbox'>>('/dev/mailbox', signal), refetchInterval: refetchMs });

export const useInvitation = (token: string) =>
  useQuery({ queryKey: accountKeys.invitation(token), queryFn: ({ signal }) => get<Data<'getInvitation'>>(`/invitation${query({ token })}`, signal) });

/** Sign-in, sign-up, the password and the invitation: requests that start or end a session rather than read a cached list. */
export const sessionRequests = {
  signIn: (credentials: Body<'signIn'>) => post<Data<'signIn'>>('/login', credentials),
  signUp: (account: Body<'signUp'>) => post<Data<'signUp'>>('/signup', account),
  signInOperator: (credentials: Body<'signInOperator'>) => post<Data<'signInOperator'>>('/operator/login', credentials),
  bootstrapOperator: (operator: Body<'bootstrapOperator'>) => post<Data<'bootstrapOperator'>>('/operator/bootstrap', operator),
  setUpOperatorTotp: () => post<Data<'setUpOperatorTotp'>>('/operator/totp/setup'),
  confirmOperatorTotp: (code: string) => post<Data<'confirmOperatorTotp'>>('/operator/totp/confirm', { code } satisfies Body<'confirmOperatorTotp'>),
  verifyEmail: (token: string) => post<Data<'verifyEmail'>>('/email/verify', { token } satisfies Body<'verifyEmail'>),
  forgotPassword: (email: string) => post<Data<'forgotPassword'>>('/password/forgot', { email } satisfies Body<'forgotPassword'>),
  resetPassword: (reset: Body<'resetPassword'>) => post<Data<'resetPassword'>>('/password/reset', reset),
  changePassword: (change: Body<'changePassword'>) => post<Data<'changePassword'>>('/password/change', change),
  acceptInvitation: (acceptance: Body<'acceptInvitation'>) => post<Data<'acceptInvitation'>>('/invitations/accept', acceptance),
  signOut: () => post('/logout'),
  deleteAccount: (proof: Body<'deleteAccount'>) => post('/account/delete', proof),
};

/** Signs in; `signedIn` keeps the session it answers and opens the next page. */
export const useSignIn = (signedIn: (session: Data<'signIn'>) => void) => useMutation({ mutationFn: sessionRequests.signIn, onSuccess: signedIn });

/** Signs up: the answer is the same whether the address is new or has an account already (its holder is mailed): no session, a mail. */
export const useSignUp = () => useMutation({ mutationFn: sessionRequests.signUp });

/** Whether an operator's sign-in was refused only for want of the authenticator's code. */
export const needsOperatorCode = (error: unknown): boolean => error instanceof ApiError && error.code === 'totp_required';

/** An operator's sign-in; a refusal for want of the code calls `codeRequired`, so the form asks for it. */
export function useOperatorSignIn(handlers: { signedIn: (session: Data<'signInOperator'>) => void; codeRequired: () => void }) {
  return useMutation({
    mutationFn: sessionRequests.signInOperator,
    onSuccess: handlers.signedIn,
    onError: (error) => {
      if (needsOperatorCode(error)) handlers.codeRequired();
    },
  });
}

/** The first operator account, made with the service's admin token. */
export const useBootstrapOperator = (created: (session: Data<'bootstrapOperator'>) => void) => useMutation({ mutationFn: sessionRequests.bootstrapOperator, onSuccess: created });

/** An operator's authenticator set-up: the secret, then the code that confirms it (answering the session). */
export function useOperatorTotpEnrolment(confirmed: (session: Data<'confirmOperatorTotp'>) => void) {
  return {
    setup: useMutation({ mutationFn: sessionRequests.setUpOperatorTotp }),
    confirm: useMutation({ mutationFn: sessionRequests.confirmOperatorTotp, onSuccess: confirmed }),
  };
}

export const useChangePassword = () => useMutation({ mutationFn: sessionRequests.changePassword });

/** Deletes the signed-in account; `deleted` (awaited) forgets the session. */
export const useDeleteAccount = (deleted: () => Promise<unknown>) => useMutation({ mutationFn: sessionRequests.deleteAccount, onSuccess: () => deleted() });
