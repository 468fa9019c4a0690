import { INTEGRATOR_ROLES, OPERATOR_ROLES } from '../console-auth/accounts.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../console-auth/passwords.js';
import { ANY_OBJECT, BOOLEAN, INTEGER, list, NULLABLE_STRING, object, STRING } from '../common/console-route.js';
import { ENVIRONMENT, KOBO, NULLABLE_TIMESTAMP, ref, TIMESTAMP, type Schema } from '../common/openapi.js';
import { organizationSchemas } from '../organizations/organization.openapi.js';
import { SCOPES } from '../scopes/scopes.js';
import { TOP_UP_FLAGS } from '../payments/payment-reconciliation.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/webhook.events.js';

/**
 * The schemas of what the `/console/api` routes answer, for the console's own OpenAPI document
 * (openapi/console.json; each route names its schema with ConsoleRoute, src/common/console-route.ts).
 * The console's types are generated from that document (console/src/api-schema.ts), so these are the
 * console's one definition of what the server answers. The integrators' document leaves these routes out.
 */

const PASSWORD: Schema = { type: 'string', minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH };
const EMAIL: Schema = { type: 'string', format: 'email', maxLength: 254 };
const TOKEN: Schema = { type: 'string', minLength: 10, maxLength: 100 };
const TOTP_CODE: Schema = { type: 'string', pattern: '^\\d{6}$' };
const PASSKEY_NAME: Schema = { type: 'string', minLength: 1, maxLength: 60 };

/** The schemas of the console's answers and bodies beyond those it shares with the integrators' document. */
export function consoleSchemas(): Record<string, Schema> {
  const organization = organizationSchemas().Organization as { required: string[]; properties: Record<string, Schema> };
  const invitation = object({ id: STRING, email: STRING, role: ref('ConsoleRole'), createdAt: TIMESTAMP, expiresAt: TIMESTAMP });
  return {
    ConsoleError: object({
      status: { const: false },
      error: object({ code: { type: 'string', description: 'stable, for programs' }, message: { type: 'string', description: 'for people' }, details: {} }),
    }),
    Scope: { type: 'string', enum: [...SCOPES] },
    WebhookEventType: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
    Environment: ENVIRONMENT,
    FlowLinkInput: object(
      { keyId: { type: ['string', 'null'], maxLength: 40, description: "the key the link's sessions run their checks on; the environment's newest active key by default" } },
      ['keyId'],
    ),
    IntegratorRole: { type: 'string', enum: [...INTEGRATOR_ROLES] },
    OperatorRole: { type: 'string', enum: [...OPERATOR_ROLES] },
    ConsoleRole: { anyOf: [ref('IntegratorRole'), ref('OperatorRole')] },
    ConsoleOrganization: {
      ...organization,
      required: [...organization.required, 'liveAccessRequestedAt'],
      properties: { ...organization.properties, liveAccessRequestedAt: NULLABLE_TIMESTAMP },
    },
    Session: object({
      csrfToken: STRING,
      user: {
        anyOf: [
          object({
            id: STRING,
            email: STRING,
            kind: { type: 'string', enum: ['integrator', 'operator'] },
            role: ref('ConsoleRole'),
            emailVerified: BOOLEAN,
            totpEnabled: BOOLEAN,
            secondFactor: BOOLEAN,
            hasPasskey: BOOLEAN,
            secondFactorPending: BOOLEAN,
            secondFactorEnrollmentRequired: BOOLEAN,
          }),
          { type: 'null' },
        ],
      },
      organization: { anyOf: [ref('ConsoleOrganization'), { type: 'null' }] },
      expiresAt: NULLABLE_TIMESTAMP,
      devMailbox: BOOLEAN,
    }),
    SignInSession: object({
      id: STRING,
      createdAt: TIMESTAMP,
      lastSeenAt: TIMESTAMP,
      expiresAt: TIMESTAMP,
      userAgent: NULLABLE_STRING,
      address: NULLABLE_STRING,
      current: BOOLEAN,
    }),
    Invitation: object({ email: STRING, role: ref('ConsoleRole'), kind: STRING, organizationName: NULLABLE_STRING }),
    MailboxEntry: object({ id: STRING, to: STRING, subject: STRING, text: STRING, link: NULLABLE_STRING, createdAt: TIMESTAMP }),
    TotpSetup: object({ secret: STRING, otpauthUrl: STRING }),
    BackupCodes: object({ backupCodes: list(STRING) }),
    SecondFactorStatus: object({ pending: BOOLEAN, totp: BOOLEAN, passkeys: INTEGER, backupCodesLeft: INTEGER, required: BOOLEAN }),
    Passkey: object({ id: STRING, name: STRING, createdAt: TIMESTAMP, lastUsedAt: NULLABLE_TIMESTAMP }),
    WalletFigures: object({ balanceKobo: INTEGER, reservedKobo: INTEGER, availableKobo: INTEGER }),
    Overview: object({
      environment: ref('Environment'),
      since: { type: 'string', format: 'date' },
      wallet: ref('Wallet'),
      days: list(object({ date: { type: 'string', format: 'date' }, scope: STRING, status: STRING, count: INTEGER })),
      recent: list(ref('VerificationSummary')),
    }),
    ScopeField: object({ name: STRING, required: BOOLEAN, description: STRING, example: STRING, mediaTypes: list(STRING) }, ['mediaTypes']),
    ScopeInfo: object({ scope: ref('Scope'), active: BOOLEAN, priceKobo: KOBO, example: { type: 'object', additionalProperties: STRING }, fields: list(ref('ScopeField')) }),
    Member: object({ id: STRING, email: STRING, role: ref('IntegratorRole'), emailVerified: BOOLEAN, secondFactor: BOOLEAN, createdAt: TIMESTAMP, you: BOOLEAN }),
    ConsoleInvitation: invitation,
    Team: object({ members: list(ref('Member')), invitations: list(ref('ConsoleInvitation')) }),
    InvitationSent: object({ id: STRING, email: STRING, role: ref('ConsoleRole') }),
    MemberRole: object({ id: STRING, email: STRING, role: ref('IntegratorRole') }),
    TopUp: object({
      reference: STRING,
      environment: ref('Environment'),
      rail: STRING,
      channel: STRING,
      status: ref('TopUpStatus'),
      amountKobo: INTEGER,
      paidKobo: { type: ['integer', 'null'] },
      feesKobo: { type: ['integer', 'null'] },
      creditedKobo: { type: ['integer', 'null'] },
      flagReason: NULLABLE_STRING,
      paidAt: NULLABLE_TIMESTAMP,
      createdAt: TIMESTAMP,
    }),
    TopUpStarted: object({ reference: STRING, authorizationUrl: STRING }),
    SimulatedTransfer: object({ reference: STRING, outcome: { type: 'string', enum: ['credited', 'already_done', 'flagged', 'failed', 'pending', 'ignored', 'assigned'] } }),
    TopUpStatus: { type: 'string', enum: ['initiated', 'paid', 'credited', 'failed', 'flagged', 'dismissed'] },
    TopUpState: object({ reference: STRING, environment: ref('Environment'), status: ref('TopUpStatus'), amountKobo: INTEGER, paidKobo: INTEGER, feesKobo: INTEGER }),
    DedicatedAccount: object({
      organizationId: STRING,
      environment: ref('Environment'),
      status: { type: 'string', enum: ['requested', 'assigned', 'failed'] },
      accountNumber: NULLABLE_STRING,
      accountName: NULLABLE_STRING,
      bankName: NULLABLE_STRING,
    }),
    TopUpLimits: object({ minTopUpKobo: INTEGER, maxTopUpKobo: INTEGER, dailyLimitKobo: INTEGER, leftTodayKobo: INTEGER }),
    PaymentsReconciliation: object({
      topUps: list(
        object({
          reference: STRING,
          status: STRING,
          rail: STRING,
          initiatedKobo: INTEGER,
          providerStatus: NULLABLE_STRING,
          settledKobo: { type: ['integer', 'null'] },
          feesKobo: { type: ['integer', 'null'] },
          creditedKobo: { type: ['integer', 'null'] },
          fundedKobo: INTEGER,
          flags: list({ type: 'string', enum: [...TOP_UP_FLAGS] }),
        }),
      ),
      totals: object({ count: INTEGER, settledKobo: INTEGER, creditedKobo: INTEGER, feesKobo: INTEGER, flagged: INTEGER }),
      limit: INTEGER,
    }),
    WalletStatement: ANY_OBJECT,
    OrganizationDetail: object({
      organization: ref('ConsoleOrganization'),
      wallets: object({ test: ref('WalletFigures'), live: ref('WalletFigures') }),
      keys: list(ref('ApiKey')),
      members: list(object({ id: STRING, email: STRING, role: ref('IntegratorRole'), emailVerified: BOOLEAN, createdAt: TIMESTAMP })),
      scopes: list(ref('Scope')),
    }),
    Projections: object({
      projections: list(ref('ProjectionStatus')),
      history: list(object({ at: TIMESTAMP, projections: list(object({ name: STRING, lagEvents: { type: ['integer', 'null'] }, lagSeconds: { type: 'number' } })) })),
    }),
    // No personal data: the check's reference, its organization and what recovery met.
    UnsettledCheck: object({
      reference: STRING,
      organizationId: STRING,
      environment: ref('Environment'),
      reason: { type: 'string', description: 'an error code, and for a damaged stream its id and damage' },
      attempts: INTEGER,
      firstFailedAt: TIMESTAMP,
      lastFailedAt: TIMESTAMP,
      nextAttemptAt: TIMESTAMP,
    }),
    AuditFigures: object({ fundedKobo: INTEGER, debitedKobo: INTEGER, balanceKobo: INTEGER, reservedKobo: INTEGER, availableKobo: INTEGER }),
    // The replay's summary as the audit command writes it (src/audit/audit-format.ts): the fields the console reads, the rest left open.
    AuditSummary: {
      ...object({
        organizationId: STRING,
        environment: ref('Environment'),
        eventsReplayed: INTEGER,
        opening: ref('AuditFigures'),
        closing: ref('AuditFigures'),
        entriesShown: INTEGER,
        openReservations: INTEGER,
        chain: { ...object({ verified: BOOLEAN, hashedEvents: INTEGER, unhashedEvents: INTEGER, head: STRING, breaks: INTEGER }), additionalProperties: true },
        ledgerProblemCount: INTEGER,
      }),
      additionalProperties: true,
    },
    AuditMeta: object({ page: INTEGER, pageSize: INTEGER, total: INTEGER, totalPages: INTEGER, summary: ref('AuditSummary') }),
    Reconciliation: object({ summary: ref('AuditSummary'), differences: list(object({ check: STRING, message: STRING })), differenceCount: INTEGER, notes: list(STRING) }),
    // The bodies the routes take (src/console/console.dto.ts checks them).
    SignUpInput: object({ organizationName: { type: 'string', maxLength: 1_000 }, email: { type: 'string', maxLength: 1_000 }, password: PASSWORD }),
    SignInInput: object({ email: EMAIL, password: { type: 'string', maxLength: MAX_PASSWORD_LENGTH }, totpCode: { type: 'string', maxLength: 10 } }, ['totpCode']),
    TokenInput: object({ token: TOKEN }),
    EmailInput: object({ email: EMAIL }),
    TokenPasswordInput: object({ token: TOKEN, password: PASSWORD }),
    DeleteAccountInput: object({ password: { type: 'string', maxLength: MAX_PASSWORD_LENGTH }, code: { type: 'string', maxLength: 12 } }, ['password', 'code']),
    PasswordChangeInput: object({ currentPassword: { type: 'string', maxLength: MAX_PASSWORD_LENGTH }, newPassword: PASSWORD }),
    BootstrapInput: object({ adminToken: { type: 'string', maxLength: 500 }, email: EMAIL, password: PASSWORD }),
    TotpCodeInput: object({ code: TOTP_CODE }),
    SecondFactorInput: object({ code: TOTP_CODE, backupCode: { type: 'string', maxLength: 40 } }, ['code', 'backupCode']),
    PasskeyRegistrationInput: object({ response: ANY_OBJECT, name: PASSKEY_NAME }),
    PasskeyNameInput: object({ name: PASSKEY_NAME }),
    PasskeyAuthenticationInput: object({ response: ANY_OBJECT }),
    SecondFactorRequirementInput: object({ required: BOOLEAN }),
    MemberInvitationInput: object({ email: EMAIL, role: ref('IntegratorRole') }),
    OperatorInvitationInput: object({ email: EMAIL, role: ref('OperatorRole') }),
    RoleInput: object({ role: ref('IntegratorRole') }),
    PlaygroundInput: object({ environment: ref('Environment'), keyId: { type: 'string', maxLength: 40 }, input: { type: 'object', additionalProperties: STRING } }, [
      'environment',
      'keyId',
    ]),
    TopUpInput: object({ amountKobo: { type: 'integer', minimum: 1 } }),
    Operators: object({
      operators: list(object({ id: STRING, email: STRING, role: ref('OperatorRole'), totpEnabled: BOOLEAN, createdAt: TIMESTAMP })),
      invitations: list(ref('ConsoleInvitation')),
    }),
  };
}
