import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { CONFIG, RUNTIME, type Runtime } from './config/runtime.js';
import { createDataSource } from './database/data-source.js';
import { createPool, PG_POOL } from './database/pool.js';
import { createEventStore } from './event-store/create-event-store.js';
import { EVENT_STORE, type EventStore } from './event-store/event-store.port.js';
import { Clock, SystemClock } from './common/clock.js';
import { IdGenerator, RandomIdGenerator } from './common/ids.js';
import { PublicOrigin } from './common/public-origin.js';
import { ProjectionWaiter } from './read-models/projection-waiter.js';
import { ReadYourWrites } from './read-models/read-your-writes.js';

/** The shared I/O of every feature: config, PostgreSQL pool, TypeORM data source, event store, the read models' waiter and read-your-writes. */
@Global()
@Module({})
export class CoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
  ) {}

  static forRoot(runtime: Runtime): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: RUNTIME, useValue: runtime },
        { provide: Clock, useClass: SystemClock },
        { provide: IdGenerator, useClass: RandomIdGenerator },
        { provide: CONFIG, useValue: runtime.config },
        ProjectionWaiter,
        ReadYourWrites,
        PublicOrigin,
        {
          provide: PG_POOL,
          useFactory: () => {
            return createPool(runtime.databaseUrl, runtime.config.database.poolSize);
          },
        },
        {
          provide: DataSource,
          useFactory: async () => {
            const dataSource = createDataSource(runtime.databaseUrl, Math.max(2, Math.floor(runtime.config.database.poolSize / 2)));
            return dataSource.initialize();
          },
        },
        {
          provide: EVENT_STORE,
          inject: [PG_POOL],
          useFactory: (pool: pg.Pool) => createEventStore(runtime, pool),
        },
      ],
      exports: [RUNTIME, CONFIG, PG_POOL, DataSource, EVENT_STORE, Clock, IdGenerator, ProjectionWaiter, ReadYourWrites, PublicOrigin],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.eventStore.close();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.pool.end();
  }
}
