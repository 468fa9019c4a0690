import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, page as fetchPage, post, put, query, withMeta } from '../../api';
import type { Body, Data, Environment, Meta, OperatorRole, Schemas } from '../../types';

export type OrganizationDetail = Data<'getOrganizationDetail'>;
export type AuditEntry = Data<'getWalletAudit'>[number];
export type AuditMeta = Meta<'getWalletAudit'>;
/** A wallet the audit page asked for. */
export interface AuditedWallet {
  organization: string;
  environment: string;
  asOf: string;
}

/** Every operator query starts with 'operator': a change of an organization reads them all again. */
export const operatorKeys = {
  all: ['operator'] as const,
  organizations: (search: string, status: string | null, page: number) => ['operator', 'organizations', search, status, page] as const,
  organization: (id: string) => ['operator', 'organization', id] as const,
  queue: ['operator', 'queue'] as const,
  operators: ['operator', 'operators'] as const,
  audit: (wallet: AuditedWallet | undefined) => ['operator', 'audit', wallet] as const,
  reconcile: (wallet: AuditedWallet | undefined) => ['operator', 'reconcile', wallet] as const,
  projections: ['operator', 'projections'] as const,
  unsettled: ['operator', 'recovery', 'unsettled'] as const,
};

export function useRefreshOperator() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: operatorKeys.all });
}

export const useOrganizations = (search: string, status: string | null, page: number, pageSize: number) =>
  useQuery({
    queryKey: operatorKeys.organizations(search, status, page),
    queryFn: ({ signal }) => fetchPage<Data<'listOrganizations'>[number]>(`/operator/organizations${query({ search, status, page, pageSize })}`, signal),
    placeholderData: keepPreviousData,
  });

const organizationPath = (id: string) => `/operator/organizations/${encodeURIComponent(id)}`;

export const useOrganizationDetail = (id: string) =>
  useQuery({ queryKey: operatorKeys.organization(id), queryFn: ({ signal }) => get<OrganizationDetail>(organizationPath(id), signal) });

/** An organization's changes, as requests (useOrganizationChanges and useApprove wrap them). */
function organizationRequests(id: string) {
  const path = organizationPath(id);
  return {
    approve: () => post<Data<'approveOrganization'>>(`${path}/approve`),
    suspend: (reason: string) => post<Data<'suspendOrganization'>>(`${path}/suspend`, { reason } satisfies Body<'suspendOrganization'>),
    reinstate: () => post<Data<'reinstateOrganization'>>(`${path}/reinstate`),
    setScopes: (scopes: Body<'setOrganizationScopes'>['scopes']) => put<Data<'setOrganizationScopes'>>(`${path}/scopes`, { scopes }),
    setPrices: (prices: Body<'setOrganizationPrices'>) => put<Data<'setOrganizationPrices'>>(`${path}/prices`, prices),
    rename: (name: string) => put<Data<'renameOrganization'>>(`${path}/name`, { name } satisfies Body<'renameOrganization'>),
    setRateLimit: (requestsPerMinute: Body<'setOrganizationRateLimit'>['requestsPerMinute']) => put<Data<'setOrganizationRateLimit'>>(`${path}/rate-limit`, { requestsPerMinute }),
    setProvider: (configuration: Body<'setOrganizationProvider'>) => put<Data<'setOrganizationProvider'>>(`${path}/provider`, configuration),
    fund: (environment: Environment, funding: Body<'fundWallet'>) => post<Data<'fundWallet'>>(`${path}/wallets/${environment}/fundings`, funding),
    issueKey: (key: Body<'issueOrganizationKey'>) => post<Data<'issueOrganizationKey'>>(`${path}/keys`, key),
    revokeKey: (keyId: string) => del<Data<'revokeOrganizationKey'>>(`/operator/keys/${encodeURIComponent(keyId)}`),
  };
}

/** The provider form: the credentials are JSON text, parsed when the form is sent. */
export interface ProviderForm {
  environment: Environment;
  provider: Provider;
  fallback: Provider | '';
  credentials: string;
  fallbackCredentials: string;
}

/** A JSON text field's value, or undefined when left empty (a parse error is the mutation's error, shown by the form). */
function jsonField(text: string): Record<string, string> | undefined {
  return text.trim() === '' ? undefined : (JSON.parse(text) as Record<string, string>);
}

const providerConfiguration = (form: ProviderForm): Body<'setOrganizationProvider'> => ({
  environment: form.environment,
  provider: form.provider,
  credentials: jsonField(form.credentials),
  // A fallback is another upstream with its own credentials.
  fallback: form.fallback === '' ? undefined : { provider: form.fallback, credentials: jsonField(form.fallbackCredentials) },
});

/**
 * An organization's changes on its operator page. Each reads the operator queries again: the plain
 * ones wait for it (the button spins until the page shows the change); the three whose form the
 * page clears first hand the answer to `handlers` and do not wait.
 */
export function useOrganizationChanges(id: string, handlers: { providerSet: () => void; funded: () => void; keyIssued: (key: Data<'issueOrganizationKey'>) => void }) {
  const requests = organizationRequests(id);
  const refresh = useRefreshOperator();
  return {
    approve: useMutation({ mutationFn: requests.approve, onSuccess: refresh }),
    suspend: useMutation({ mutationFn: requests.suspend, onSuccess: refresh }),
    reinstate: useMutation({ mutationFn: requests.reinstate, onSuccess: refresh }),
    setScopes: useMutation({ mutationFn: requests.setScopes, onSuccess: refresh }),
    setPrices: useMutation({ mutationFn: requests.setPrices, onSuccess: refresh }),
    rename: useMutation({ mutationFn: requests.rename, onSuccess: refresh }),
    setRateLimit: useMutation({ mutationFn: requests.setRateLimit, onSuccess: refresh }),
    setProvider: useMutation({
      mutationFn: (form: ProviderForm) => requests.setProvider(providerConfiguration(form)),
      onSuccess: () => {
        handlers.providerSet();
        void refresh();
      },
    }),
    fund: useMutation({
      mutationFn: ({ environment, funding }: { environment: Environment; funding: Body<'fundWallet'> }) => requests.fund(environment, funding),
      onSuccess: () => {
        handlers.funded();
        void refresh();
      },
    }),
    issueKey: useMutation({
      mutationFn: requests.issueKey,
      onSuccess: (key) => {
        handlers.keyIssued(key);
        void refresh();
      },
    }),
    revokeKey: useMutation({ mutationFn: requests.revokeKey, onSuccess: refresh }),
  };
}

export const useApprovalQueue = () => useQuery({ queryKey: operatorKeys.queue, queryFn: ({ signal }) => get<Data<'getApprovalQueue'>>('/operator/approval-queue', signal) });

export function useApprove() {
  const refresh = useRefreshOperator();
  return useMutation({ mutationFn: (id: string) => organizationRequests(id).approve(), onSuccess: () => refresh() });
}

export const useOperators = () => useQuery({ queryKey: operatorKeys.operators, queryFn: ({ signal }) => get<Data<'getOperators'>>('/operator/operators', signal) });

/** Invites an operator; `onInvited` clears the form, and the operators are read again. */
export function useInviteOperator(onInvited: () => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (invitation: Body<'inviteOperator'>) => post<Data<'inviteOperator'>>('/operator/operators/invitations', invitation),
    onSuccess: () => {
      onInvited();
      void client.invalidateQueries({ queryKey: operatorKeys.operators });
    },
  });
}

const walletPath = (wallet: AuditedWallet) => `${organizationPath(wallet.organization)}/wallets/${wallet.environment}`;

/** The audit's replay of a wallet as of a time: its entries and, in meta, the summary. */
export const useWalletAudit = (wallet: AuditedWallet | undefined, asOfIso: string | undefined) =>
  useQuery({
    queryKey: operatorKeys.audit(wallet),
    queryFn: ({ signal }) => withMeta<AuditEntry[], AuditMeta>(`${wallet === undefined ? '' : walletPath(wallet)}/audit${query({ asOf: asOfIso })}`, signal),
    enabled: wallet !== undefined,
  });

/** The audit's CSV download of a wallet (a link, not a query). */
export const walletAuditCsvUrl = (wallet: AuditedWallet, asOfIso: string | undefined) => `/console/api${walletPath(wallet)}/audit.csv${query({ asOf: asOfIso })}`;

/** The reconciliation, run only when asked for (refetch). */
export const useReconciliation = (wallet: AuditedWallet | undefined) =>
  useQuery({
    queryKey: operatorKeys.reconcile(wallet),
    queryFn: ({ signal }) => get<Data<'reconcileWallet'>>(`${wallet === undefined ? '' : walletPath(wallet)}/reconcile`, signal),
    enabled: false,
  });

export const useProjections = (refetchMs: number) =>
  useQuery({ queryKey: operatorKeys.projections, queryFn: ({ signal }) => get<Data<'getProjections'>>('/operator/projections', signal), refetchInterval: refetchMs });

/** The oldest `pageSize` checks recovery cannot settle, and how many there are. */
export const useUnsettledChecks = (pageSize: number, refetchMs: number) =>
  useQuery({
    queryKey: operatorKeys.unsettled,
    queryFn: ({ signal }) => fetchPage<Data<'listUnsettledChecks'>[number]>(`/operator/recovery/unsettled${query({ page: 1, pageSize })}`, signal),
    refetchInterval: refetchMs,
  });

/**
 * The server's lists the operators' forms choose from, each written as a record over the generated
 * type: a provider, status or role the server adds fails to compile here until it is labelled.
 */
export type Provider = Schemas['ProviderConfiguration']['provider'];
const PROVIDER_NAMES: Record<Provider, true> = { sandbox: true, dojah: true, prembly: true };
export const PROVIDERS = Object.keys(PROVIDER_NAMES) as Provider[];
/** A fallback is another upstream: the sandbox is none. */
export const FALLBACK_PROVIDERS = PROVIDERS.filter((provider) => provider !== 'sandbox');
const STATUS_NAMES: Record<Schemas['ConsoleOrganization']['status'], true> = { pending: true, approved: true, suspended: true };
export const ORGANIZATION_STATUSES = Object.keys(STATUS_NAMES);
export const OPERATOR_ROLE_LABELS: Record<OperatorRole, string> = { admin: 'admin: changes everything', auditor: 'auditor: reads, changes nothing' };

/** An organization's top-ups in one environment (newest first), for their receipts. */
export const useOrganizationTopUps = (id: string, environment: Environment) =>
  useQuery({
    queryKey: ['operator', 'topups', id, environment] as const,
    queryFn: ({ signal }) => fetchPage<Data<'listOrganizationTopUps'>[number]>(`${organizationPath(id)}/wallets/${environment}/topups${query({ page: 1, pageSize: 20 })}`, signal),
  });

export type PaymentAttention = Data<'listPaymentsNeedingAttention'>[number];

/** The top-ups across organizations that need an operator, the provider's figures beside ours. */
export const usePaymentsAttention = () =>
  useQuery({ queryKey: ['operator', 'payments'] as const, queryFn: ({ signal }) => get<Data<'listPaymentsNeedingAttention'>>('/operator/payments', signal) });

/** Credit (the provider's settled amount, once) or dismiss (for a reason of the list) a top-up; the operator queries are read again after. */
export function useResolveTopUp() {
  const refresh = useRefreshOperator();
  return useMutation({
    mutationFn: ({ reference, resolution }: { reference: string; resolution: Body<'resolveTopUp'> }) =>
      post<Data<'resolveTopUp'>>(`/operator/payments/${encodeURIComponent(reference)}/resolution`, resolution),
    onSuccess: refresh,
  });
}
