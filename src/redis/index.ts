export { createRedisConnection, closeRedis, redisOptionsFromUrl, type ConnectionRole } from './connection.js';
export { redisWarnings } from './checks.js';
export { startManagedRedis, freePort, RedisServerMissingError, type ManagedRedis } from './managed.js';
