import { describe, expect, it } from 'vitest';
import { maskRedisUrl } from '../../../src/redis/describe.js';

describe('maskRedisUrl', () => {
  it.each([
    ['redis://:s3cret@127.0.0.1:6379', 'redis://:***@127.0.0.1:6379'],
    ['redis://app:s3cret@redis.internal:6379/2', 'redis://app:***@redis.internal:6379/2'],
    ['rediss://default:p%40ss@cache.example.com:6380', 'rediss://default:***@cache.example.com:6380'],
    ['redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26379/mymaster', 'redis+sentinel://:***@10.0.0.1:26379,10.0.0.2:26379/mymaster'],
    ['redis+cluster://u:s3cret@h1:7000,h2:7001', 'redis+cluster://u:***@h1:7000,h2:7001'],
  ])('masks the password of %s', (url, masked) => {
    expect(maskRedisUrl(url)).toBe(masked);
    expect(maskRedisUrl(url)).not.toContain('s3cret');
  });

  it.each(['redis://127.0.0.1:6379', 'redis://app@127.0.0.1:6379', 'redis+cluster://h1:7000,h2:7001', 'redis://[::1]:6379/0'])(
    'leaves %s (no password) as it is',
    (url) => {
      expect(maskRedisUrl(url)).toBe(url);
    },
  );
});
