import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLedgerClient } from '../../clients/typescript/src/index.js';

/**
 * The verifications walker against a real local HTTP server that pages a list as the service does
 * (most recent first by createdAt then reference, by offset), while checks arrive between pages:
 * more than a page of them, and some in the same millisecond as the items already walked.
 */

interface Summary {
  reference: string;
  scope: 'nin';
  status: 'found';
  priceKobo: number;
  charged: boolean;
  createdAt: string;
}

const summary = (reference: string, createdAt: string): Summary => ({ reference, scope: 'nin', status: 'found', priceKobo: 10_000, charged: true, createdAt });
const newestFirst = (a: Summary, b: Summary) => (a.createdAt === b.createdAt ? (a.reference < b.reference ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1);

describe('The verifications walker', () => {
  let server: Server;
  let baseUrl: string;
  let list: Summary[] = [];
  /** Runs before the server answers the page it is given. */
  let beforePage: (page: number) => void = () => undefined;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url!, 'http://localhost');
      const page = Number(url.searchParams.get('page'));
      const pageSize = Math.min(100, Number(url.searchParams.get('pageSize')));
      beforePage(page);
      const sorted = [...list].sort(newestFirst);
      const data = sorted.slice((page - 1) * pageSize, page * pageSize);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: true, data, meta: { total: sorted.length, page, pageSize, totalPages: Math.ceil(sorted.length / pageSize) } }));
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });

  const walk = async (pageSize: number) => {
    const references: string[] = [];
    for await (const item of createLedgerClient({ baseUrl, apiKey: 'service_test_x' }).verifications({}, pageSize)) references.push(item.reference);
    return references;
  };

  describe('When more than a page of checks arrives between two pages', () => {
    it('yields every item that was there at the start once, and none of the new ones', async () => {
      list = ['01', '02', '03', '04', '05'].map((second) => summary(`vrf_${second}`, `2026-12-06T10:00:${second}.000Z`));
      beforePage = (page) => {
        if (page === 2) for (const second of ['10', '11', '12', '13', '14']) list.push(summary(`vrf_${second}`, `2026-12-06T10:00:${second}.000Z`));
      };
      expect(await walk(2)).toEqual(['vrf_05', 'vrf_04', 'vrf_03', 'vrf_02', 'vrf_01']);
    });
  });

  describe('When items share a millisecond across a page boundary', () => {
    it('tells them apart by reference: none repeated, none lost', async () => {
      const sameMs = '2026-12-06T10:00:01.000Z';
      list = [summary('vrf_A', sameMs), summary('vrf_B', sameMs), summary('vrf_C', sameMs), summary('vrf_0', '2026-12-06T10:00:00.000Z')];
      beforePage = (page) => {
        if (page === 2) list.push(summary('vrf_Z', '2026-12-06T10:00:02.000Z'));
      };
      // Page 1 is C, B; a new check shifts B onto page 2 (B, A): B is skipped, A yielded.
      expect(await walk(2)).toEqual(['vrf_C', 'vrf_B', 'vrf_A', 'vrf_0']);
    });
  });
});
