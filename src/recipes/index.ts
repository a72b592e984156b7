export { parseBusinessHours, isOpen, closedPeriodStart, BusinessHoursError, type BusinessHours } from './business-hours.js';
export { readSettings } from './settings.js';
