import { ConfigError } from '../lambdas/core/errors';
import { loadLocalEnv, stackOptionsFromEnv } from './config';

describe('the embedded default configuration', () => {
  it('passes an embedding window to ingestion only when one is set', async () => {
    const plain = await stackOptionsFromEnv(loadLocalEnv({}));
    expect(plain).not.toHaveProperty('ingestion');
    const windowed = await stackOptionsFromEnv(
      loadLocalEnv({ GROUNDWORK_EMBED_WINDOW_TOKENS: '128' }),
    );
    expect(windowed).toMatchObject({ ingestion: { embedWindowTokens: 128 } });
  });

  it('passes only the confidence overrides that are set, as the answer functions read them', async () => {
    expect(await stackOptionsFromEnv(loadLocalEnv({}))).toMatchObject({
      answer: { calibrationOverrides: {} },
    });
    const tuned = await stackOptionsFromEnv(
      loadLocalEnv({ RAG_CONFIDENCE_HIGH_THRESHOLD: '0.7', CONFIDENCE_EVIDENCE_FLOOR: '0.2' }),
    );
    expect(tuned).toMatchObject({
      answer: { calibrationOverrides: { high: 0.7, evidenceFloor: 0.2 } },
    });
  });

  it('passes the publishing tenants to the stack, one default when unset', async () => {
    expect(await stackOptionsFromEnv(loadLocalEnv({}))).toMatchObject({
      publishingTenants: ['global'],
    });
    const set = await stackOptionsFromEnv(
      loadLocalEnv({ GROUNDWORK_PUBLISHING_TENANTS: 'help,docs' }),
    );
    expect(set).toMatchObject({ publishingTenants: ['help', 'docs'] });
    expect(() => loadLocalEnv({ GROUNDWORK_PUBLISHING_TENANTS: 'not a tenant' })).toThrow(
      /GROUNDWORK_PUBLISHING_TENANTS/,
    );
  });

  it('passes a PostgreSQL server and its read connection when set, and refuses a read URL alone', async () => {
    expect(await stackOptionsFromEnv(loadLocalEnv({}))).not.toHaveProperty('database');
    const url = 'postgres://owner:pw@127.0.0.1:5432/groundwork';
    const readUrl = 'postgres://reader:pw@127.0.0.1:5433/groundwork';
    expect(
      await stackOptionsFromEnv(
        loadLocalEnv({ GROUNDWORK_DATABASE_URL: url, GROUNDWORK_DATABASE_READ_URL: readUrl }),
      ),
    ).toMatchObject({ database: { url, readUrl } });
    expect(
      (await stackOptionsFromEnv(loadLocalEnv({ GROUNDWORK_DATABASE_URL: url }))).database,
    ).toEqual({ url });
    await expect(
      stackOptionsFromEnv(loadLocalEnv({ GROUNDWORK_DATABASE_READ_URL: readUrl })),
    ).rejects.toThrow(/GROUNDWORK_DATABASE_READ_URL needs GROUNDWORK_DATABASE_URL/);
  });

  it('passes the declared filter indexes, none when unset, and names the variable when malformed', async () => {
    expect(await stackOptionsFromEnv(loadLocalEnv({}))).toMatchObject({ filterIndexes: [] });
    const set = await stackOptionsFromEnv(
      loadLocalEnv({ GROUNDWORK_FILTER_INDEXES: '[{"key": "category", "value": "manual"}]' }),
    );
    expect(set).toMatchObject({ filterIndexes: [{ key: 'category', value: 'manual' }] });
    for (const bad of ['category=manual', '[{"key": "category"}]', '{"key": "k", "value": 1}'])
      await expect(
        stackOptionsFromEnv(loadLocalEnv({ GROUNDWORK_FILTER_INDEXES: bad })),
      ).rejects.toThrow(new RegExp(`GROUNDWORK_FILTER_INDEXES`));
  });

  it('asks for the exact-scan index only when it is on, and names the variable otherwise', async () => {
    expect(await stackOptionsFromEnv(loadLocalEnv({}))).toMatchObject({ exactScanIndex: false });
    expect(
      await stackOptionsFromEnv(loadLocalEnv({ GROUNDWORK_EXACT_SCAN_INDEX: 'on' })),
    ).toMatchObject({ exactScanIndex: true });
    expect(() => loadLocalEnv({ GROUNDWORK_EXACT_SCAN_INDEX: 'yes' })).toThrow(
      /GROUNDWORK_EXACT_SCAN_INDEX/,
    );
  });

  it('names the variable when the window is not a usable size', () => {
    expect(() => loadLocalEnv({ GROUNDWORK_EMBED_WINDOW_TOKENS: '5' })).toThrow(ConfigError);
    expect(() => loadLocalEnv({ GROUNDWORK_EMBED_WINDOW_TOKENS: 'big' })).toThrow(
      /GROUNDWORK_EMBED_WINDOW_TOKENS/,
    );
  });
});
