import { ApiProperty } from '@nestjs/swagger';
import { PagingMetaDto } from '../common/api.dto.js';
import { WALLET_ENTRY_TYPES } from '../wallets/wallet.read-model.js';

/** OpenAPI schemas of the auditor's wallet history route. */

class FiguresDto {
  @ApiProperty() fundedKobo!: number;
  @ApiProperty() debitedKobo!: number;
  @ApiProperty({ description: 'funded - debited' }) balanceKobo!: number;
  @ApiProperty({ description: 'open reservations' }) reservedKobo!: number;
  @ApiProperty({ description: 'balance - reserved' }) availableKobo!: number;
}

export class HistoryEntryDto {
  @ApiProperty({ example: '7', description: 'revision in the wallet stream, from 0' }) revision!: string;
  @ApiProperty({ example: '1234000001', description: 'global position in the event log (a string: it may exceed 2^53)' }) position!: string;
  @ApiProperty({ format: 'uuid' }) eventId!: string;
  @ApiProperty({ example: '2026-03-03T13:00:00.000+00:00' }) occurredAt!: string;
  @ApiProperty({ enum: WALLET_ENTRY_TYPES }) entryType!: string;
  @ApiProperty({ description: 'the funding reference of a funding, the verification reference otherwise' }) reference!: string;
  @ApiProperty({ type: String, nullable: true, description: 'the scope of the check (reservations, debits and releases)' }) scope!: string | null;
  @ApiProperty({ description: 'always positive; entryType says which way it moved' }) amountKobo!: number;
  @ApiProperty({ description: 'after this entry' }) balanceKobo!: number;
  @ApiProperty() reservedKobo!: number;
  @ApiProperty() availableKobo!: number;
  @ApiProperty({ example: 'api_key:key_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }) actor!: string;
  @ApiProperty({ enum: ['hashed', 'unhashed', 'broken'], description: 'unhashed: written before the hash chain existed' }) chain!: string;
  @ApiProperty({ type: String, nullable: true, description: 'the stored SHA-256 chain hash' }) hash!: string | null;
}

class EntryTotalsDto {
  @ApiProperty() count!: number;
  @ApiProperty() amountKobo!: number;
}

class TotalsDto {
  @ApiProperty({ type: EntryTotalsDto }) funding!: EntryTotalsDto;
  @ApiProperty({ type: EntryTotalsDto }) reservation!: EntryTotalsDto;
  @ApiProperty({ type: EntryTotalsDto }) debit!: EntryTotalsDto;
  @ApiProperty({ type: EntryTotalsDto }) release!: EntryTotalsDto;
}

class LogProblemDto {
  @ApiProperty() revision!: string;
  @ApiProperty() position!: string;
  @ApiProperty() eventId!: string;
  @ApiProperty({ enum: ['content_changed', 'link_broken', 'hash_missing', 'malformed', 'ledger_invalid'] }) kind!: string;
  @ApiProperty() message!: string;
}

class ChainDto {
  @ApiProperty({ description: 'every link holds (events written before the chain existed excepted)' }) verified!: boolean;
  @ApiProperty() hashedEvents!: number;
  @ApiProperty() unhashedEvents!: number;
  @ApiProperty({ type: String, nullable: true }) hashedFromRevision!: string | null;
  @ApiProperty({ description: 'the link after the last event replayed' }) head!: string;
  @ApiProperty({ type: LogProblemDto, nullable: true }) firstBreak!: LogProblemDto | null;
  @ApiProperty() breaks!: number;
}

export class HistoryMetaDto extends PagingMetaDto {
  @ApiProperty({ type: String, nullable: true, description: 'the as-of time asked for, or null (now)' }) asOf!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'the newest revision at or before asOf' }) lastRevision!: string | null;
  @ApiProperty({ type: FiguresDto, description: 'the balance as of asOf' }) balance!: FiguresDto;
  @ApiProperty({ type: TotalsDto, description: 'per entry type, up to asOf' }) totals!: TotalsDto;
  @ApiProperty() openReservations!: number;
  @ApiProperty({ type: ChainDto }) chain!: ChainDto;
  @ApiProperty({ type: [LogProblemDto], description: 'events that break the ledger rules (the first 100)' }) ledgerProblems!: LogProblemDto[];
}

export class HistoryEnvelopeDto {
  @ApiProperty({ example: true }) status!: boolean;
  @ApiProperty({ type: [HistoryEntryDto] }) data!: HistoryEntryDto[];
  @ApiProperty({ type: HistoryMetaDto }) meta!: HistoryMetaDto;
}
