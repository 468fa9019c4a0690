import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { get, onCsrfRenewal, onSessionLost, setCsrfToken } from './api';
import type { Environment, Role, Session } from './types';

// The session's shapes are the server's (types.ts aliases the generated api-schema.ts).
export type { Environment, OperatorRole, Organization, Role, Session, User } from './types';

const SESSION_KEY = ['session'] as const;

/** The session (its user null when signed out); its CSRF token is handed to the API client as soon as it is known. */
export function useSession() {
  const client = useQueryClient();
  const query = useQuery({
    queryKey: SESSION_KEY,
    queryFn: async ({ signal }) => {
      const session = await get<Session>('/session', signal);
      setCsrfToken(session.csrfToken);
      return session;
    },
    staleTime: 60_000,
  });
  useEffect(() => {
    onCsrfRenewal(async () => {
      await client.refetchQueries({ queryKey: SESSION_KEY });
    });
    // A 401 on any call: the session expired or was revoked; forget what it showed and ask again.
    onSessionLost(() => {
      client.removeQueries({ predicate: (entry) => entry.queryKey[0] !== SESSION_KEY[0] });
      void client.invalidateQueries({ queryKey: SESSION_KEY });
    });
  }, [client]);
  return query;
}

/** After sign-up, sign-in and the like: the answer is the new session, with its new CSRF token. */
export function useSetSession() {
  const client = useQueryClient();
  return useCallback(
    (session: Session) => {
      setCsrfToken(session.csrfToken);
      client.removeQueries({ predicate: (entry) => entry.queryKey[0] !== SESSION_KEY[0] });
      client.setQueryData(SESSION_KEY, session);
    },
    [client],
  );
}

export function useRefreshSession() {
  const client = useQueryClient();
  return useCallback(async () => {
    await client.refetchQueries({ queryKey: SESSION_KEY });
  }, [client]);
}

/** After signing out: forget every cached answer, they belonged to that session, and take an anonymous one. */
export function useForgetSession() {
  const client = useQueryClient();
  return useCallback(async () => {
    client.removeQueries({ predicate: (entry) => entry.queryKey[0] !== SESSION_KEY[0] });
    await client.refetchQueries({ queryKey: SESSION_KEY });
  }, [client]);
}

interface EnvironmentContextValue {
  environment: Environment;
  setEnvironment: (environment: Environment) => void;
}

const EnvironmentContext = createContext<EnvironmentContextValue>({ environment: 'test', setEnvironment: () => undefined });

const STORAGE_KEY = 'console.environment';

export function EnvironmentProvider({ children }: { children: ReactNode }) {
  const [environment, setState] = useState<Environment>(() => (localStorage.getItem(STORAGE_KEY) === 'live' ? 'live' : 'test'));
  const setEnvironment = useCallback((next: Environment) => {
    localStorage.setItem(STORAGE_KEY, next);
    setState(next);
  }, []);
  return <EnvironmentContext.Provider value={{ environment, setEnvironment }}>{children}</EnvironmentContext.Provider>;
}

export const useEnvironment = () => useContext(EnvironmentContext);

/** What each team role may see in the console; the server decides what each may do. */
export const ROLE_PAGES: Record<Role, readonly string[]> = {
  owner: ['overview', 'keys', 'webhooks', 'verifications', 'flows', 'playground', 'wallet', 'payments-audit', 'data-requests', 'settings', 'team', 'security'],
  developer: ['overview', 'keys', 'webhooks', 'verifications', 'flows', 'playground', 'settings', 'team', 'security'],
  finance: ['overview', 'wallet', 'payments-audit', 'settings', 'team', 'security'],
};

export function mayOpen(session: Session | null | undefined, page: string): boolean {
  const user = session?.user;
  if (user?.kind !== 'integrator') return false;
  return (ROLE_PAGES[user.role as Role] ?? []).includes(page);
}

export const isOperator = (session: Session | null | undefined) => session?.user?.kind === 'operator';
export const isIntegrator = (session: Session | null | undefined) => session?.user?.kind === 'integrator';
export const readOnly = (session: Session | null | undefined) => session?.user?.role === 'auditor';
