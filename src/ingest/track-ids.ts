import { v5 as uuidv5, v7 as uuidv7 } from 'uuid';

/** Gives the trackID of element `index` of a request. */
export type TrackIds = (index: number) => string;

export const freshTrackIds: TrackIds = () => uuidv7();

/** The id of a second event made by one request (the merge after an upsert), derived from its trackID. */
export function derivedEventId(trackId: string, purpose: string): string {
  return uuidv5(purpose, trackId);
}
