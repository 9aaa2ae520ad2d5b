let sequence = 0;
/** A name unique across processes and runs on the shared emulators. */
export const uniqueName = (prefix: string) =>
  `${prefix}-${process.pid}-${Date.now().toString(36)}-${(sequence++).toString(36)}`;
