/** SQL of the user-events projection. */

import { eventRowColumns, eventRowKinds, insertRows, onceByEventId } from '../rows-sql.js';

export const insertUserEvents = insertRows('user_events', ['event_id', 'account_id', 'user_id', 'anonymous_id', ...eventRowColumns], onceByEventId, eventRowKinds);
