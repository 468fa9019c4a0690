import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';

@Module({ imports: [CqrsModule], providers: [], controllers: [], exports: [] })
export class OrganizationsModule {}
