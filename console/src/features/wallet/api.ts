import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { get, page as fetchPage, post, put, query } from '../../api';
import type { Body, Data, Environment } from '../../types';

export const walletKeys = {
  wallets: ['wallet'] as const,
  wallet: (environment: Environment) => ['wallet', environment] as const,
  transactions: ['transactions'] as const,
  transactionPage: (environment: Environment, page: number) => ['transactions', environment, page] as const,
  threshold: (environment: Environment) => ['low-balance-threshold', environment] as const,
  topUps: ['topups'] as const,
  topUpList: (environment: Environment) => ['topups', environment] as const,
  topUp: (reference: string | null) => ['topup', reference] as const,
  dedicatedAccount: (environment: Environment) => ['dedicated-account', environment] as const,
  topUpLimits: ['topup-limits'] as const,
  topUpLimitsOf: (environment: Environment) => ['topup-limits', environment] as const,
  paymentsAudit: (environment: Environment) => ['payments-audit', environment] as const,
};

export const useWallet = (environment: Environment) =>
  useQuery({ queryKey: walletKeys.wallet(environment), queryFn: ({ signal }) => get<Data<'getWallet'>>(`/wallet${query({ environment })}`, signal) });

export const useTransactions = (environment: Environment, page: number, pageSize: number) =>
  useQuery({
    queryKey: walletKeys.transactionPage(environment, page),
    queryFn: ({ signal }) => fetchPage<Data<'listTransactions'>[number]>(`/wallet/transactions${query({ environment, page, pageSize })}`, signal),
    placeholderData: keepPreviousData,
  });

export const useLowBalanceThreshold = (environment: Environment) =>
  useQuery({
    queryKey: walletKeys.threshold(environment),
    queryFn: ({ signal }) => get<Data<'getLowBalanceThreshold'>>(`/wallet/low_balance_threshold${query({ environment })}`, signal),
  });

export function useSetLowBalanceThreshold(environment: Environment, onSaved: () => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (thresholdKobo: number | null) =>
      put<Data<'setLowBalanceThreshold'>>(`/wallet/low_balance_threshold${query({ environment })}`, { thresholdKobo } satisfies Body<'setLowBalanceThreshold'>),
    onSuccess: (saved) => {
      client.setQueryData(walletKeys.threshold(environment), saved);
      onSaved();
    },
  });
}

export const useStartTopUp = (environment: Environment) =>
  useMutation({
    mutationFn: (amountKobo: number) => post<Data<'startTopUp'>>(`/wallet/topups${query({ environment })}`, { amountKobo } satisfies Body<'startTopUp'>),
    onSuccess: (started) => window.location.assign(started.authorizationUrl),
  });

/** One top-up, read every second until it is finished. */
export const useTopUp = (reference: string | null, finished: (status: Data<'getTopUp'>['status']) => boolean) =>
  useQuery({
    queryKey: walletKeys.topUp(reference),
    queryFn: ({ signal }) => get<Data<'getTopUp'>>(`/wallet/topups/${encodeURIComponent(reference ?? '')}`, signal),
    enabled: reference !== null,
    refetchInterval: (state) => (state.state.data !== undefined && finished(state.state.data.status) ? false : 1_000),
  });

/** After a top-up: the balance, the transactions and the top-ups read again. */
export function useRefreshAfterTopUp() {
  const client = useQueryClient();
  return useCallback(() => {
    for (const queryKey of [walletKeys.wallets, walletKeys.transactions, walletKeys.topUps, walletKeys.topUpLimits]) void client.invalidateQueries({ queryKey });
  }, [client]);
}

export const useTopUps = (environment: Environment, pageSize: number) =>
  useQuery({
    queryKey: walletKeys.topUpList(environment),
    queryFn: ({ signal }) => fetchPage<Data<'listTopUps'>[number]>(`/wallet/topups${query({ environment, pageSize })}`, signal),
  });

/** The organization's top-up limits in this environment and what is left of today's. */
export const useTopUpLimits = (environment: Environment) =>
  useQuery({ queryKey: walletKeys.topUpLimitsOf(environment), queryFn: ({ signal }) => get<Data<'getTopUpLimits'>>(`/wallet/topups/limits${query({ environment })}`, signal) });

/** The wallet's recent top-ups reconciled against the provider (the auditor's page). */
export const usePaymentsReconciliation = (environment: Environment) =>
  useQuery({
    queryKey: walletKeys.paymentsAudit(environment),
    queryFn: ({ signal }) => get<Data<'getPaymentsReconciliation'>>(`/wallet/topups/reconciliation${query({ environment })}`, signal),
  });

/** The dedicated account, read again every 5 s while the provider has yet to assign it. */
export const useDedicatedAccount = (environment: Environment) =>
  useQuery({
    queryKey: walletKeys.dedicatedAccount(environment),
    queryFn: ({ signal }) => get<Data<'getDedicatedAccount'>>(`/wallet/dedicated_account${query({ environment })}`, signal),
    refetchInterval: (state) => (state.state.data?.status === 'requested' ? 5_000 : false),
  });

/** The sandbox's stand-in for a payer's transfer into the test wallet's account: credited through the rail's webhook, then the wallet's figures are read again. */
export function useSimulateTransfer(environment: Environment) {
  const refresh = useRefreshAfterTopUp();
  return useMutation({
    mutationFn: (amountKobo: number) => post<Data<'simulateTransfer'>>(`/wallet/dedicated_account/transfers${query({ environment })}`, { amountKobo }),
    onSuccess: refresh,
  });
}

export function useAssignDedicatedAccount(environment: Environment) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => post<Data<'assignDedicatedAccount'>>(`/wallet/dedicated_account${query({ environment })}`),
    onSuccess: (assigned) => client.setQueryData(walletKeys.dedicatedAccount(environment), assigned),
  });
}
