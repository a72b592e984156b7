/**
 * Ids are issued from one counter shared by every workspace, so an id seen in
 * one workspace is a real record elsewhere and scoping (spec: Authentication 9,
 * another workspace's record answers 404) is tested against live records.
 */
export class IdSequence {
  private next = 1;
  constructor(start = 1) {
    this.next = start;
  }

  /** The id {@link take} gives next, without taking it. */
  peek(): number {
    return this.next;
  }

  /** The next unused id. */
  take(): number {
    return this.next++;
  }
}
