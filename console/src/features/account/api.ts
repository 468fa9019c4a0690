import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, query } from '../../api';
import type { Body, Data } from '../../types';

export type SignInSession = Data<'listSessions'>[number];

export const accountKeys = {
  sessions: ['sessions'] as const,
  mailbox: ['mailbox'] as const,
  invitation: (token: string) => ['invitation', token] as const,
};

export const useSignInSessions = () => useQuery({ queryKey: accountKeys.sessions, queryFn: ({ signal }) => get<SignInSession[]>('/sessions', signal) });

export function useRefreshSignInSessions() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: accountKeys.sessions });
}

export const endSignInSession = (id: string) => del(`/sessions/${encodeURIComponent(id)}`);

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
