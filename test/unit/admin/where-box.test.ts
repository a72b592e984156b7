import { describe, expect, it } from 'vitest';
import { whereTerms } from '../../../src/admin/where-box.js';

describe('the query box of /admin/deliveries', () => {
  it('takes expressions separated by spaces or new lines, as the CLI takes repeated --where', () => {
    expect(whereTerms('data.contact.email=zoe@example.com data.conversation_id=38\n\n  data.body~refund  \n')).toEqual({
      terms: ['data.contact.email=zoe@example.com', 'data.conversation_id=38', 'data.body~refund'],
    });
    expect(whereTerms('')).toEqual({ terms: [] });
  });

  it('keeps a quoted value with its spaces whole, the quotes removed, as a shell would', () => {
    expect(whereTerms(`data.body~"refund request" 'data.contact.name!=Zoë A' data.x="a'b"`)).toEqual({
      terms: ['data.body~refund request', 'data.contact.name!=Zoë A', "data.x=a'b"],
    });
  });

  it('says which line holds a quote that is not closed', () => {
    const r = whereTerms('data.a=1\ndata.body~"refund request');
    expect('problem' in r && r.problem).toMatch(/^line 2: a quote \(".*not closed/);
  });
});
