import { EventLog1732250000000 } from './1732250000000-event-log.js';
import { ReadModels1732250000001 } from './1732250000001-read-models.js';
import { WalletRevision1732250000002 } from './1732250000002-wallet-revision.js';
import { VerificationCounts1732250000003 } from './1732250000003-verification-counts.js';
import { SandboxCreditIndex1732250000004 } from './1732250000004-sandbox-credit-index.js';
import { RateLimits1732250000005 } from './1732250000005-rate-limits.js';
import { AppendEventBatch1732250000006 } from './1732250000006-append-event-batch.js';
import { AdvanceCheckpoint1732250000007 } from './1732250000007-advance-checkpoint.js';
import { AppendJson1732250000008 } from './1732250000008-append-json.js';
import { WalletSnapshots1732250000009 } from './1732250000009-wallet-snapshots.js';
import { DataProtection1732250000010 } from './1732250000010-data-protection.js';
import { Erasure1732250000012 } from './1732250000012-erasure.js';
import { LegacyEventSealing1732250000013 } from './1732250000013-legacy-event-sealing.js';
import { VerificationReasonCode1732250000014 } from './1732250000014-verification-reason-code.js';
import { PositionEpoch1795647443977 } from './1795647443977-position-epoch.js';
import { AppendWriteSets1795647443990 } from './1795647443990-append-write-sets.js';
import { WalletHistoryCheckpoints1795647443991 } from './1795647443991-wallet-history-checkpoints.js';
import { ConsoleAccounts1795700000000 } from './1795700000000-console-accounts.js';
import { AppendExpectedEventIds1795800000001 } from './1795800000001-append-expected-event-ids.js';
import { DropUnusedKeyIndex1795800000002 } from './1795800000002-drop-unused-key-index.js';
import { DataKeyEnvironment1796000000100 } from './1796000000100-data-key-environment.js';
import { TotpMasterKeyId1796000000101 } from './1796000000101-totp-master-key-id.js';
import { RetentionSweep1796000000200 } from './1796000000200-retention-sweep.js';
import { ConsoleTotpLastStep1796000000300 } from './1796000000300-console-totp-last-step.js';
import { ConsoleSecondFactor1796000001000 } from './1796000001000-console-second-factor.js';
import { RecoveryUnsettled1796000000500 } from './1796000000500-recovery-unsettled.js';
import { AppendStreamLocks1796000000501 } from './1796000000501-append-stream-locks.js';
import { Payments1796000001400 } from './1796000001400-payments.js';
import { PaymentAccountRequests1796000002000 } from './1796000002000-payment-account-requests.js';
import { VerificationFlows1796000002400 } from './1796000002400-verification-flows.js';
import { VerificationSessionReviews1796000002700 } from './1796000002700-verification-session-reviews.js';
import { WebhookEndpointLeases1796000002740 } from './1796000002740-webhook-endpoint-leases.js';
import { SubjectIdentifiers1796000002750 } from './1796000002750-subject-identifiers.js';
import { SessionDocuments1796000002720 } from './1796000002720-session-documents.js';
import { SessionIdentityReferences1796000002760 } from './1796000002760-session-identity-references.js';
import { TopUpRecoveryChecks1796000002800 } from './1796000002800-topup-recovery-checks.js';
import { Webhooks1796000000600 } from './1796000000600-webhooks.js';
import { ContactSealing1796000001100 } from './1796000001100-contact-sealing.js';
import { DataSubjectRights1796000001200 } from './1796000001200-data-subject-rights.js';
import { OrganizationKeyVersions1796000001300 } from './1796000001300-organization-key-versions.js';
import { IndexKeyVersions1796000002100 } from './1796000002100-index-key-versions.js';
import { ConsoleUserKeys1796000002101 } from './1796000002101-console-user-keys.js';
import { ConsoleSignUps1796000002840 } from './1796000002840-console-signups.js';

/** Every migration, in order: the event log's and the read models', all in this folder. Features add theirs here. */
export const MIGRATIONS = [
  EventLog1732250000000,
  ReadModels1732250000001,
  WalletRevision1732250000002,
  VerificationCounts1732250000003,
  SandboxCreditIndex1732250000004,
  RateLimits1732250000005,
  AppendEventBatch1732250000006,
  AdvanceCheckpoint1732250000007,
  AppendJson1732250000008,
  WalletSnapshots1732250000009,
  DataProtection1732250000010,
  Erasure1732250000012,
  LegacyEventSealing1732250000013,
  VerificationReasonCode1732250000014,
  PositionEpoch1795647443977,
  AppendWriteSets1795647443990,
  WalletHistoryCheckpoints1795647443991,
  ConsoleAccounts1795700000000,
  AppendExpectedEventIds1795800000001,
  DropUnusedKeyIndex1795800000002,
  DataKeyEnvironment1796000000100,
  TotpMasterKeyId1796000000101,
  RetentionSweep1796000000200,
  ConsoleTotpLastStep1796000000300,
  RecoveryUnsettled1796000000500,
  AppendStreamLocks1796000000501,
  Webhooks1796000000600,
  ConsoleSecondFactor1796000001000,
  ContactSealing1796000001100,
  DataSubjectRights1796000001200,
  OrganizationKeyVersions1796000001300,
  Payments1796000001400,
  PaymentAccountRequests1796000002000,
  IndexKeyVersions1796000002100,
  ConsoleUserKeys1796000002101,
  VerificationFlows1796000002400,
  VerificationSessionReviews1796000002700,
  WebhookEndpointLeases1796000002740,
  SubjectIdentifiers1796000002750,
  SessionDocuments1796000002720,
  SessionIdentityReferences1796000002760,
  TopUpRecoveryChecks1796000002800,
  ConsoleSignUps1796000002840,
];
