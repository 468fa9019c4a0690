import { ApiProperty } from '@nestjs/swagger';
import { PagingMetaDto } from '../common/api.dto.js';
import { WALLET_ENTRY_TYPES } from './wallet.read-model.js';

/** OpenAPI schemas of the integrators' wallet transactions route. */

export class TransactionDto {
  @ApiProperty({ enum: WALLET_ENTRY_TYPES, description: 'funding credits the balance; reservation holds the price of a check; debit charges it; release returns it' }) type!: string;
  @ApiProperty({ description: 'the funding reference, or the verification reference' }) reference!: string;
  @ApiProperty({ type: String, nullable: true }) scope!: string | null;
  @ApiProperty() amountKobo!: number;
  @ApiProperty({ description: 'after this transaction' }) balanceKobo!: number;
  @ApiProperty() reservedKobo!: number;
  @ApiProperty() availableKobo!: number;
  @ApiProperty({ example: '2026-03-03T13:00:00.000+00:00' }) createdAt!: string;
}

export class TransactionListEnvelopeDto {
  @ApiProperty({ example: true }) status!: boolean;
  @ApiProperty({ type: [TransactionDto] }) data!: TransactionDto[];
  @ApiProperty({ type: PagingMetaDto }) meta!: PagingMetaDto;
}
