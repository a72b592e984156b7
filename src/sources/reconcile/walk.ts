import type { ApiClient } from '../../api/index.js';
import type { ChangeKeyEvent } from '../../events/index.js';
import {
  inferContact,
  inferConversation,
  inferLead,
  inferMessage,
  inWindow,
  mayHoldMessages,
  type Inferred,
  type Window,
} from './infer.js';

/** The client's reads reconcile uses (the typed REST client, or a stand-in in tests). */
export type ReconcileApi = Pick<ApiClient, 'contacts' | 'conversations' | 'messages' | 'leads'>;

const PER_PAGE = 100;

type Rec = Readonly<Record<string, unknown>>;

/**
 * Walks the listings the wanted events need and yields, page by page, the
 * events the records imply for the window (see infer.ts for the rules).
 * Costs, in API calls: contacts, one per 100 created in the window;
 * conversations, one per 100 threads of the workspace (the listing is ordered
 * by creation, so a thread closed or written to in the window can be anywhere
 * in it) plus at least one per thread with a message in or after the window;
 * leads, one per page until a page reaches before the window.
 */
export async function* inferChanges(
  api: ReconcileApi,
  w: Window,
  wanted: ReadonlySet<ChangeKeyEvent>,
): AsyncGenerator<Inferred[], void, undefined> {
  const want = (e: Inferred) => wanted.has(e.event);
  if (wanted.has('contact.created')) {
    const query = { created_after: new Date(w.since), created_before: new Date(w.until), per_page: PER_PAGE };
    for await (const page of api.contacts.list(query).pages()) yield page.data.flatMap((c) => inferContact(c as Rec, w)).filter(want);
  }
  const threads = wanted.has('conversation.created') || wanted.has('conversation.closed');
  const messages = wanted.has('message.received') || wanted.has('message.sent');
  if (threads || messages) {
    for await (const page of api.conversations.list({ per_page: PER_PAGE }).pages()) {
      yield page.data.flatMap((c) => inferConversation(c as Rec, w)).filter(want);
      if (!messages) continue;
      for (const c of page.data) {
        if (!mayHoldMessages(c, w)) continue;
        // Newest first: stop at the first page that reaches before the window.
        for await (const mp of api.messages.list(c.id, { per_page: PER_PAGE }).pages()) {
          yield mp.data.flatMap((m) => inferMessage(m as Rec, w)).filter(want);
          if (mp.data.some((m) => Date.parse(m.created_at) < w.since)) break;
        }
      }
    }
  }
  if (wanted.has('lead.created') || wanted.has('lead.won') || wanted.has('lead.lost')) {
    for await (const page of api.leads.list().pages()) {
      yield page.data.flatMap((l) => inferLead(l as Rec, w)).filter(want);
      // Newest first by creation; a lead without created_at gives no reason to stop.
      if (
        page.data.some(
          (l) =>
            typeof (l as Rec)['created_at'] === 'string' &&
            !inWindow((l as Rec)['created_at'], w) &&
            Date.parse(String((l as Rec)['created_at'])) < w.since,
        )
      )
        break;
    }
  }
}
