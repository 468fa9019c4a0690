import { describe, expect, it } from '@jest/globals';
import type { Command } from 'commander';
import { listArgument } from './kit.js';
import { buildProgram } from './program.js';

function leaves(command: Command, path: string[] = []): Array<{ path: string; command: Command }> {
  if (command.commands.length === 0) return [{ path: path.join(' '), command }];
  return command.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

/** The help a command prints, as `--help` would, without exiting. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (chunk) => (text += chunk), writeErr: (chunk) => (text += chunk) });
  command.outputHelp();
  return text;
}

describe('Given the admin command line', () => {
  const program = buildProgram(() => undefined);
  const commands = leaves(program);

  it('has the commands an operator needs, wallet balance and operator accounts among them', () => {
    expect(commands.map((leaf) => leaf.path)).toEqual([
      'org create',
      'org get',
      'org list',
      'org approve',
      'org suspend',
      'org reinstate',
      'org scopes',
      'org prices',
      'org rename',
      'org rate-limit',
      'org retention',
      'provider set',
      'key issue',
      'key list',
      'key revoke',
      'wallet fund',
      'wallet balance',
      'wallet limits',
      'wallet paystack-key',
      'keys rotate-master',
      'keys rotate-org',
      'keys rotate-index',
      'operator create',
    ]);
  });

  it.each(commands.map((leaf) => [leaf.path, leaf.command] as const))('describes "%s", its arguments and options, marks the required ones and shows an example', (_, command) => {
    expect(command.description()).not.toBe('');
    for (const argument of command.registeredArguments) expect(argument.description).not.toBe('');
    for (const option of command.options) {
      expect(option.description).not.toBe('');
      if (option.mandatory) expect(option.description).toContain('(required)');
    }
    expect(helpOf(command)).toMatch(/Examples?[^:]*:\n {2}\$ npm run admin -- /);
  });

  it('says at the top how the CLI is authorised and which list syntax it takes', () => {
    const help = helpOf(program);
    expect(help).toContain('talks to the\ndatabase (and event store) directly');
    expect(help).toContain('Whoever can read those credentials or DATA_DIR can run it');
    expect(help).toContain('Lists are comma-separated everywhere (nin,bvn)');
  });
});

describe('A list argument', () => {
  it('takes commas, spaces or both, and drops empty parts', () => {
    expect(listArgument('nin,bvn')).toEqual(['nin', 'bvn']);
    expect(listArgument(['nin', 'bvn'])).toEqual(['nin', 'bvn']);
    expect(listArgument(['nin,bvn', 'phone'])).toEqual(['nin', 'bvn', 'phone']);
    expect(listArgument(['nin, bvn,', ' '])).toEqual(['nin', 'bvn']);
    expect(listArgument([])).toEqual([]);
  });
});
