/** The tags that make a managed session a work item's worker, kept light so any module may read them. */

/** The tag that makes a managed session a worker: the work item's id. */
export const ITEM_TAG = "ra_item";

/**
 * The tag naming the store a worker belongs to (its database file). Two robot-armies
 * sharing one session root both have an item 3; this tells whose item 3 a session works on.
 */
export const STORE_TAG = "ra_store";
