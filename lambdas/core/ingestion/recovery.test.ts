import { countBy, createIngestRecovery } from './recovery';
import type { RecoveryStore } from './document-store';
import type { SyncOutcome } from './ingest';
import type { ObjectStore } from './object-store';

describe('sweepOutdated', () => {
  /**
   * Outdated documents in the store's order; one taken up goes to the back, as its updated_at
   * moves, and stays outdated (as after a transient failure or a key sync ignores).
   */
  const setup = (count: number, sync: (key: string) => Promise<SyncOutcome>) => {
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
    };
    const recovery = createIngestRecovery({
      store,
      ingestion,
      objects: {} as ObjectStore,
      settings: { sweepBatch: 2 },
    });
    return { recovery, tried };
  };

  it('takes up each document once per run when sync leaves them outdated, then stops', async () => {
    const { recovery, tried } = setup(5, async () => ({ action: 'ignored', reason: 'test' }));
    expect(await recovery.sweepOutdated()).toHaveLength(5);
    expect([...tried].sort()).toEqual([0, 1, 2, 3, 4].map((i) => `tenants/acme/${i}.md`));
  });

  it('stops at the first transient failure instead of trying every document against it', async () => {
    const { recovery, tried } = setup(5, async () => {
      throw new Error('the embedding model is unavailable');
    });
    expect(await recovery.sweepOutdated()).toEqual([]);
    expect(tried).toEqual(['tenants/acme/0.md']);
  });
});

describe('countBy', () => {
  it('counts the items under each key, and nothing for an empty list', () => {
    const outcomes = [{ action: 'indexed' }, { action: 'failed' }, { action: 'indexed' }];
    expect(countBy(outcomes, (o) => o.action)).toEqual({ indexed: 2, failed: 1 });
    expect(countBy([], String)).toEqual({});
  });
});
