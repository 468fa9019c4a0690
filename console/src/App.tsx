import { lazy, Suspense, type ComponentType } from 'react';
import { Redirect, Route, Switch, useLocation } from 'wouter';
import { Failure, Loading } from './components/common';
import { PageErrorBoundary } from './components/page-error-boundary';
import { Plain, Shell } from './Layout';
import { EnvironmentProvider, isIntegrator, isOperator, mayOpen, useSession, type Session } from './session';
import { LoginPage, SignupPage } from './pages/auth';

// Every page but the sign-in ones is its own chunk: the first load carries only what a visitor needs.
const OverviewPage = lazy(() => import('./pages/overview'));
const KeysPage = lazy(() => import('./pages/keys'));
const DataRequestsPage = lazy(() => import('./pages/data-requests'));
const OperatorDataRequestsPage = lazy(() => import('./pages/operator/data-requests'));
const VerificationsPage = lazy(() => import('./pages/verifications'));
const VerificationPage = lazy(() => import('./pages/verification'));
const WalletPage = lazy(() => import('./pages/wallet'));
const PaymentsAuditPage = lazy(() => import('./pages/payments-audit'));
const WebhooksPage = lazy(() => import('./pages/webhooks'));
const PlaygroundPage = lazy(() => import('./pages/playground'));
const SettingsPage = lazy(() => import('./pages/settings'));
const TeamPage = lazy(() => import('./pages/team'));
const SecurityPage = lazy(() => import('./pages/security'));
const AccountPages = lazy(() => import('./pages/account'));
const SecondFactorStepPage = lazy(() => import('./pages/second-factor'));
const SecondFactorSetupPage = lazy(() => import('./pages/second-factor-setup'));
const MailboxPage = lazy(() => import('./pages/mailbox'));
const OperatorLoginPage = lazy(() => import('./pages/operator/login'));
const OperatorOrganizationsPage = lazy(() => import('./pages/operator/organizations'));
const OperatorOrganizationPage = lazy(() => import('./pages/operator/organization'));
const OperatorQueuePage = lazy(() => import('./pages/operator/queue'));
const OperatorProjectionsPage = lazy(() => import('./pages/operator/projections'));
const OperatorAuditPage = lazy(() => import('./pages/operator/audit'));
const OperatorPaymentsPage = lazy(() => import('./pages/operator/payments'));
const OperatorSecurityPage = lazy(() => import('./pages/operator/security'));
const FlowsPage = lazy(() => import('./pages/flows'));
const FlowPage = lazy(() => import('./pages/flow'));
const SessionsPage = lazy(() => import('./pages/sessions'));
const SessionPage = lazy(() => import('./pages/session'));
const OperatorSessionsPage = lazy(() => import('./pages/operator/sessions'));
const OperatorSessionPage = lazy(() => import('./pages/operator/session'));

/** A page's code, loaded on first visit: a failure to load or render it shows a reload, never a blank page. */
function PageLoader({ component: Page }: { component: ComponentType }) {
  const [location] = useLocation();
  return (
    <PageErrorBoundary key={location}>
      <Suspense fallback={<Loading />}>
        <Page />
      </Suspense>
    </PageErrorBoundary>
  );
}

function Integrator({ page, session, component: Page }: { page: string; session: Session; component: ComponentType }) {
  if (!isIntegrator(session)) return <Redirect to="/login" />;
  if (session.user?.secondFactorPending === true) return <Redirect to="/second-factor" />;
  if (session.user?.secondFactorEnrollmentRequired === true) return <Redirect to="/second-factor/setup" />;
  if (!mayOpen(session, page)) {
    return (
      <Shell session={session}>
        <Failure error={new Error('Your role does not give access to this page.')} />
      </Shell>
    );
  }
  return (
    <Shell session={session}>
      <PageLoader component={Page} />
    </Shell>
  );
}

function Operator({ session, component: Page }: { session: Session; component: ComponentType }) {
  if (!isOperator(session)) return <Redirect to="/operator/login" />;
  if (session.user?.totpEnabled !== true) return <Redirect to="/operator/login" />;
  return (
    <Shell session={session}>
      <PageLoader component={Page} />
    </Shell>
  );
}

function Public({ component: Page }: { component: ComponentType }) {
  return (
    <Plain>
      <PageLoader component={Page} />
    </Plain>
  );
}

export function App() {
  const { data: session, isPending, error } = useSession();
  const [location] = useLocation();
  if (isPending) return <Loading label="Loading the console" />;
  if (error || session === undefined)
    return (
      <Plain>
        <Failure error={error ?? new Error('No session')} />
      </Plain>
    );
  const current = session;
  const signedIn = isIntegrator(current);

  return (
    <EnvironmentProvider>
      <Switch>
        <Route path="/login">
          {signedIn ? (
            <Redirect to="/" />
          ) : (
            <Plain>
              <LoginPage />
            </Plain>
          )}
        </Route>
        <Route path="/signup">
          {signedIn ? (
            <Redirect to="/playground" />
          ) : (
            <Plain>
              <SignupPage />
            </Plain>
          )}
        </Route>
        <Route path="/second-factor">{signedIn && current.user?.secondFactorPending === true ? <Public component={SecondFactorStepPage} /> : <Redirect to="/" />}</Route>
        <Route path="/second-factor/setup">
          {signedIn && current.user?.secondFactorPending !== true && current.user?.secondFactorEnrollmentRequired === true ? (
            <Public component={SecondFactorSetupPage} />
          ) : (
            <Redirect to="/" />
          )}
        </Route>
        <Route path="/verify-email">{() => <Public component={AccountPages} />}</Route>
        <Route path="/reset-password">{() => <Public component={AccountPages} />}</Route>
        <Route path="/forgot-password">{() => <Public component={AccountPages} />}</Route>
        <Route path="/accept-invitation">{() => <Public component={AccountPages} />}</Route>
        <Route path="/dev/mailbox">{() => <Public component={MailboxPage} />}</Route>
        <Route path="/operator/login">{isOperator(current) && current.user?.totpEnabled === true ? <Redirect to="/operator" /> : <Public component={OperatorLoginPage} />}</Route>
        <Route path="/operator">{() => <Operator session={current} component={OperatorOrganizationsPage} />}</Route>
        <Route path="/operator/queue">{() => <Operator session={current} component={OperatorQueuePage} />}</Route>
        <Route path="/operator/organizations/:id">{() => <Operator session={current} component={OperatorOrganizationPage} />}</Route>
        <Route path="/operator/projections">{() => <Operator session={current} component={OperatorProjectionsPage} />}</Route>
        <Route path="/operator/audit">{() => <Operator session={current} component={OperatorAuditPage} />}</Route>
        <Route path="/operator/payments">{() => <Operator session={current} component={OperatorPaymentsPage} />}</Route>
        <Route path="/operator/data-requests">{() => <Operator session={current} component={OperatorDataRequestsPage} />}</Route>
        <Route path="/operator/sessions">{() => <Operator session={current} component={OperatorSessionsPage} />}</Route>
        <Route path="/operator/sessions/:id">{() => <Operator session={current} component={OperatorSessionPage} />}</Route>
        <Route path="/operator/security">{() => <Operator session={current} component={OperatorSecurityPage} />}</Route>
        <Route path="/">{() => <Integrator page="overview" session={current} component={OverviewPage} />}</Route>
        <Route path="/keys">{() => <Integrator page="keys" session={current} component={KeysPage} />}</Route>
        <Route path="/verifications">{() => <Integrator page="verifications" session={current} component={VerificationsPage} />}</Route>
        <Route path="/verifications/:reference">{() => <Integrator page="verifications" session={current} component={VerificationPage} />}</Route>
        <Route path="/flows">{() => <Integrator page="flows" session={current} component={FlowsPage} />}</Route>
        <Route path="/flows/:id">{() => <Integrator page="flows" session={current} component={FlowPage} />}</Route>
        <Route path="/sessions">{() => <Integrator page="flows" session={current} component={SessionsPage} />}</Route>
        <Route path="/sessions/:id">{() => <Integrator page="flows" session={current} component={SessionPage} />}</Route>
        <Route path="/wallet">{() => <Integrator page="wallet" session={current} component={WalletPage} />}</Route>
        <Route path="/payments-audit">{() => <Integrator page="payments-audit" session={current} component={PaymentsAuditPage} />}</Route>
        <Route path="/webhooks">{() => <Integrator page="webhooks" session={current} component={WebhooksPage} />}</Route>
        <Route path="/playground">{() => <Integrator page="playground" session={current} component={PlaygroundPage} />}</Route>
        <Route path="/data-requests">{() => <Integrator page="data-requests" session={current} component={DataRequestsPage} />}</Route>
        <Route path="/settings">{() => <Integrator page="settings" session={current} component={SettingsPage} />}</Route>
        <Route path="/team">{() => <Integrator page="team" session={current} component={TeamPage} />}</Route>
        <Route path="/security">{() => <Integrator page="security" session={current} component={SecurityPage} />}</Route>
        <Route>
          <Plain>
            <Failure error={new Error(`No page at ${location}.`)} />
          </Plain>
        </Route>
      </Switch>
    </EnvironmentProvider>
  );
}
