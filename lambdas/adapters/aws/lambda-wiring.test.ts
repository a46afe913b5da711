import { databasesFromEnv } from './lambda-wiring';

const env = {
  DB_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:app',
  AWS_REGION: 'us-east-1',
  DB_NAME: 'groundwork',
  DB_HOST: 'proxy.example',
};

describe('databasesFromEnv', () => {
  it('reads through the writer when no read host is set: one pool', () => {
    const { writer, reads } = databasesFromEnv(env);
    expect(reads).toBe(writer);
  });

  it('opens a second pool for the reads when DB_READ_HOST is set', () => {
    const { writer, reads } = databasesFromEnv({ ...env, DB_READ_HOST: 'proxy-read-only.example' });
    expect(reads).not.toBe(writer);
    expect(reads.kind).toBe('postgres');
  });
});
