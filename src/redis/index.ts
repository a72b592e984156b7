export { createRedisConnection, closeRedis, redisOptionsFromUrl, type ConnectionRole } from './connection.js';
export { redisWarnings } from './checks.js';
export { startManagedRedis, freePort, RedisServerMissingError, type ManagedRedis } from './managed.js';
export { connectForCommand, ownedConnections, sendNow, type RedisClient } from './connection.js';
export { maskRedisUrl } from './describe.js';
export { findServerOn, stopFoundServer } from './orphan.js';
