/** SQL of the user-events projection. */

import { eventRowColumns, insertRows, onceByEventId } from '../rows-sql.js';

/** $1 a JSON array of user_events rows. */
export const insertUserEvents = insertRows('user_events', ['event_id', 'account_id', 'user_id', 'anonymous_id', ...eventRowColumns], onceByEventId);
