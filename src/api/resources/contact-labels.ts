import type { ApiPromise } from '../response.js';
import { LabelRef } from '../../spec/schemas/index.js';
import type { RequestOptions, WriteOptions } from '../transport.js';
import { check } from '../validate.js';
import { contactPath, type ContactRef } from './contact-ref.js';
import { all, type ResourceContext } from './shared.js';

/** `api.contacts.labels`: a contact's labels. */
export function contactLabels({ transport: t }: ResourceContext) {
  return {
    /** `GET /contacts/{ref}/labels`. */
    list(ref: ContactRef, options?: RequestOptions): ApiPromise<LabelRef[]> {
      return t.request({
        op: 'contacts.labels.list',
        method: 'GET',
        path: `${contactPath('contacts.labels.list', ref)}/labels`,
        schema: all(LabelRef),
        repeat: 'safe',
        options,
      });
    },
    /** `POST /contacts/{ref}/labels` (IK): adds existing labels (ids or exact names); returns the labels after the call. */
    add(ref: ContactRef, labels: readonly (string | number)[], options?: WriteOptions): ApiPromise<LabelRef[]> {
      const op = 'contacts.labels.add';
      if (!Array.isArray(labels) || labels.length < 1) check(op).fail('labels', 'at least 1 label id or name');
      return t.request({
        op,
        method: 'POST',
        path: `${contactPath(op, ref)}/labels`,
        body: { labels },
        schema: all(LabelRef),
        repeat: 'ik',
        options,
      });
    },
    /** `DELETE /contacts/{ref}/labels/{label}`: removing a label the contact lacks is not an error; returns the remaining labels. */
    remove(ref: ContactRef, label: string | number, options?: RequestOptions): ApiPromise<LabelRef[]> {
      const op = 'contacts.labels.remove';
      if (label === '' || label === undefined) check(op).fail('label', 'a label id or name');
      return t.request({
        op,
        method: 'DELETE',
        path: `${contactPath(op, ref)}/labels/${encodeURIComponent(String(label))}`,
        schema: all(LabelRef),
        repeat: 'safe',
        options,
      });
    },
  };
}
