import { ApiProperty } from '@nestjs/swagger';

/** OpenAPI schemas every route shares: the paging meta of lists and the error envelope. */

export class PagingMetaDto {
  @ApiProperty() total!: number;
  @ApiProperty() page!: number;
  @ApiProperty() pageSize!: number;
  @ApiProperty() totalPages!: number;
}

export class ErrorBodyDto {
  @ApiProperty({ example: 'insufficient_balance' }) code!: string;
  @ApiProperty() message!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: '402: {reference, priceKobo, balanceKobo}; 502: {reference}; 422: {fields: [{field, message}]}',
  })
  details!: Record<string, unknown>;
}

export class ErrorEnvelopeDto {
  @ApiProperty({ example: false }) status!: boolean;
  @ApiProperty({ type: ErrorBodyDto }) error!: ErrorBodyDto;
}
