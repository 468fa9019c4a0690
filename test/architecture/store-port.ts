import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { isTestFile } from './import-graph.js';

/*
 * The event store's kind stays behind its port, checked by store-port.spec.ts over the source text
 * of src/ and projections/ (tests left out: they may reach whatever they exercise):
 *
 * 1. Nothing tests which store it runs on (`store.kind === 'postgres'`, `kind !== 'esdb'`, a `case`
 *    of a switch over a kind, or the kind handed on as a `kind:` option) outside src/event-store/
 *    and the wiring listed in KIND_ALLOWED. Code asks for a capability instead: the port's flags, or
 *    `store.logReader?.…` (the PostgreSQL log's reads in SQL).
 * 2. No SQL names the log's `events` table (or its visible bound) outside src/event-store/ and the
 *    migrations that define it: the statements live behind the log reader.
 */

/** Where the store's kind may be tested: the adapters and their factories, and the wiring that reads the configuration. */
export const KIND_ALLOWED = [
  'src/event-store/',
  // Reads EVENT_STORE and checks what each kind needs.
  'src/config/config.ts',
  // The wiring: the files that compose the application.
  'src/app.module.ts',
  'src/app.factory.ts',
  'src/core.module.ts',
  'src/main.ts',
] as const;

/** Where SQL may name the `events` table: the store's adapter and the migrations that create the table and its triggers. */
export const EVENTS_SQL_ALLOWED = ['src/event-store/', 'src/database/migrations/'] as const;

const STORE_KINDS = new Set(['postgres', 'esdb']);
/** SQL naming the log's table: `from events`, `join events`, `into events`, `update events`, `truncate events`, or its visible bound. */
const EVENTS_SQL = /\b(?:from|join|into|update|truncate|table)\s+(?:only\s+)?events\b(?![-_.])|\bevents_visible_bound\b/i;

function* walk(root: string, dir: string): Generator<string> {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) yield* walk(root, path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** The non-test TypeScript files under `dirs`, as paths from `root`, each with its text. */
export function readSources(root: string, dirs: readonly string[]): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  for (const dir of dirs) {
    for (const path of walk(root, dir)) {
      if (!isTestFile(path)) files.push({ path, text: readFileSync(join(root, path), 'utf8') });
    }
  }
  return files;
}

const allowed = (path: string, prefixes: readonly string[]) => prefixes.some((prefix) => (prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix));

/** `kind`, `store.kind`, `config.eventStore?.kind`: an expression naming a kind. */
function namesKind(node: ts.Node): boolean {
  const inner = ts.isParenthesizedExpression(node) ? node.expression : node;
  if (ts.isIdentifier(inner)) return inner.text === 'kind';
  return ts.isPropertyAccessExpression(inner) && inner.name.text === 'kind';
}

const isStoreKindLiteral = (node: ts.Node) => (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && STORE_KINDS.has(node.text);

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

/** A store's kind handed on: `kind: store.kind`, `kind: config.eventStore.kind`. */
function handsOnStoreKind(node: ts.PropertyAssignment): boolean {
  if (!(ts.isIdentifier(node.name) && node.name.text === 'kind')) return false;
  const value = node.initializer;
  return ts.isPropertyAccessExpression(value) && value.name.text === 'kind' && /store/i.test(value.expression.getText());
}

/** Each line of `text` (1-based) that tests the store's kind, with the code. */
export function kindTests(path: string, text: string): string[] {
  if (!text.includes('kind')) return [];
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const flag = (node: ts.Node) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push(`${path}:${line}: ${node.getText(source).replace(/\s+/g, ' ').slice(0, 120)}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      if ((namesKind(node.left) && isStoreKindLiteral(node.right)) || (namesKind(node.right) && isStoreKindLiteral(node.left))) flag(node);
    } else if (ts.isSwitchStatement(node) && namesKind(node.expression)) {
      if (node.caseBlock.clauses.some((clause) => ts.isCaseClause(clause) && isStoreKindLiteral(clause.expression))) flag(node.expression);
    } else if (ts.isPropertyAssignment(node) && handsOnStoreKind(node)) {
      flag(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Each string or template literal of `text` (comments are not literals) whose SQL names the `events` table. */
export function eventsSql(path: string, text: string): string[] {
  if (!/events/i.test(text)) return [];
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const literal =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)
        ? node.text
        : undefined;
    if (literal !== undefined && EVENTS_SQL.test(literal)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push(`${path}:${line}: ${EVENTS_SQL.exec(literal)?.[0] ?? ''}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Rule 1 over the files given: the kind tests outside KIND_ALLOWED. */
export function kindLeaks(files: readonly { path: string; text: string }[]): string[] {
  return files.filter((file) => !allowed(file.path, KIND_ALLOWED)).flatMap((file) => kindTests(file.path, file.text));
}

/** Rule 2 over the files given: the SQL on `events` outside EVENTS_SQL_ALLOWED. */
export function eventsSqlLeaks(files: readonly { path: string; text: string }[]): string[] {
  return files.filter((file) => !allowed(file.path, EVENTS_SQL_ALLOWED)).flatMap((file) => eventsSql(file.path, file.text));
}
