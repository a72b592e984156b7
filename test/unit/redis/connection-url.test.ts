import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { clusterFromUrl, redisOptionsFromUrl } from '../../../src/redis/connection.js';

describe('REDIS_URL forms', () => {
  it('redis:// with credentials and db', () => {
    expect(redisOptionsFromUrl('redis://user:p%40ss@cache.internal:6380/2')).toMatchObject({
      host: 'cache.internal',
      port: 6380,
      username: 'user',
      password: 'p@ss',
      db: 2,
    });
  });

  it('rediss:// turns TLS on with the host as server name', () => {
    expect(redisOptionsFromUrl('rediss://cache.example.com:6380')).toMatchObject({ tls: { servername: 'cache.example.com' } });
  });

  it('Sentinel: redis+sentinel://[:password@]h1:26379,h2:26379/<master>[/db]', () => {
    expect(redisOptionsFromUrl('redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2/mymaster/1')).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
      ],
      name: 'mymaster',
      password: 's3cret',
      db: 1,
    });
  });

  it('Cluster: redis+cluster://h1:7000,h2:7001 (rediss+cluster for TLS)', () => {
    expect(clusterFromUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001')?.nodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
    ]);
    expect(clusterFromUrl('rediss+cluster://u:p@h:7000')?.redisOptions).toMatchObject({ username: 'u', password: 'p', tls: {} });
    expect(clusterFromUrl('redis://h:6379')).toBeNull();
  });

  it('the configuration accepts every form and explains a bad one', () => {
    for (const url of ['redis://h:1', 'rediss://h:1', 'redis+sentinel://a:1,b:2/m', 'redis+cluster://a:1,b:2']) {
      expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url);
    }
    expect(() => loadConfig({ REDIS_URL: 'redis+cluster://a:1,,b' })).toThrow(/host:port pairs/);
    expect(() => loadConfig({ REDIS_URL: 'http://h' })).toThrow(/REDIS_URL/);
  });
});
