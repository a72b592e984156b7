export { createCapture, captureFileName, type Capture, type CaptureOptions, type CaptureLog } from './capture.js';
export { createRedactor, type Redactor } from '../pii/index.js';
