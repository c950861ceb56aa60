"""Recording: what runs while a profile is on (the recorder and its compiled primitives, the
engine's hook point, regions and backward passes, module identity, shapes, FLOPs, device time
and tensor memory), up to the events' arrival in the store."""
