export { occurredAt } from '../common/event.js';
