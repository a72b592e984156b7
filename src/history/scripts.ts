import { LuaScripts } from '../util/index.js';

/** The history's Lua scripts (`lua/`): `historyWrite`, one write of one delivery's history in one command; `keptBodies`, the bodies of a page a content query can match. */
export const HISTORY_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['historyWrite', 'keptBodies']);
