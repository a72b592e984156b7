export { parseBusinessHours, isOpen, closedPeriodStart, BusinessHoursError, type BusinessHours } from './business-hours.js';
export { businessHoursSetting, durationSetting, type TextSetting } from './setting-schemas.js';
export { addBusinessTime, businessTimeBetween } from './business-time.js';
