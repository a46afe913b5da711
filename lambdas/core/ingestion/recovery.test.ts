import { createIngestRecovery } from './recovery';
import type { RecoveryStore } from './document-store';
import type { Ingestion } from './ingest';
import type { ObjectStore } from './object-store';

describe('sweepOutdated', () => {
  /** Outdated documents in the store's order; one tried goes to the back, as updated_at moves. */
  const setup = (count: number, sync: (key: string) => Promise<never>) => {
    let order = Array.from({ length: count }, (_, i) => `s3://docs/tenants/acme/${i}.md`);
    const tried: string[] = [];
    let listings = 0;
    const store = {
      listOutdated: async (_version: number, _maxAttempts: number, limit: number) => {
        // A sweep that lists again and again never ends (its awaits never yield to a timer).
        if (++listings > 50) throw new Error('the sweep keeps listing the same documents');
        return order.slice(0, limit).map((sourceUri) => ({ tenantId: 'acme', sourceUri }));
      },
    } as unknown as RecoveryStore;
    const ingestion = {
      syncObject: async (_bucket: string, key: string) => {
        tried.push(key);
        const uri = `s3://docs/${key}`;
        order = [...order.filter((u) => u !== uri), uri];
        return sync(key);
      },
    } as unknown as Ingestion;
    const recovery = createIngestRecovery({
      store,
      ingestion,
      objects: {} as ObjectStore,
      settings: { sweepBatch: 2 },
    });
    return { recovery, tried };
  };

  it('tries each document once per run when every attempt fails, then stops', async () => {
    const { recovery, tried } = setup(5, async () => {
      throw new Error('the embedding model is unavailable');
    });
    expect(await recovery.sweepOutdated()).toEqual([]);
    expect([...tried].sort()).toEqual([0, 1, 2, 3, 4].map((i) => `tenants/acme/${i}.md`));
  });
});
